//! `perflab serve`'s authentication and its limits against clients that do not
//! authenticate: replay, an old protocol version, a slow handshake, many idle connections.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::auth;
use super::proto::{self, Reply, Request};
use super::tests::{ask, authenticate, error_text, open_udp, still_serves, TestServer};

/// Writes `req` and keeps a copy of the bytes, as a wire capture would.
fn send_recorded(s: &mut TcpStream, req: &Request, capture: &mut Vec<u8>) {
    let mut frame = Vec::new();
    proto::write_message(&mut frame, req).unwrap();
    s.write_all(&frame).unwrap();
    capture.extend_from_slice(&frame);
}

/// Every log line, checked for the token and for any MAC that went over the wire.
fn assert_no_secrets_logged(srv: &TestServer, macs: &[String]) {
    let log = srv.log.lock().unwrap();
    for line in log.iter() {
        assert!(!line.contains("s3cret"), "the token in a log line: {line}");
        for m in macs {
            assert!(!line.contains(m.as_str()), "a MAC in a log line: {line}");
        }
    }
}

#[test]
fn a_captured_session_replayed_on_a_new_connection_is_refused() {
    let srv = TestServer::start(|_| {});
    // A good session, its client's bytes captured.
    let mut capture = Vec::new();
    let mut s = srv.connect();
    send_recorded(
        &mut s,
        &Request::Hello {
            version: proto::VERSION,
        },
        &mut capture,
    );
    let Reply::Challenge { nonce: first_nonce } = proto::read_message(&mut s).unwrap() else {
        panic!("no challenge")
    };
    let server = auth::nonce_from_hex(&first_nonce).unwrap();
    let client = auth::nonce().unwrap();
    let mac = auth::client_mac("s3cret", &server, &client);
    assert!(!capture.windows(6).any(|w| w == b"s3cret"));
    send_recorded(
        &mut s,
        &Request::Auth {
            client_nonce: auth::hex(&client),
            mac: mac.clone(),
        },
        &mut capture,
    );
    let Reply::Welcome { server_mac, .. } = proto::read_message(&mut s).unwrap() else {
        panic!("the real session was not welcomed")
    };
    assert!(auth::verify_server("s3cret", &server, &client, &server_mac));
    // The token is nowhere in what the client sent.
    assert!(!String::from_utf8_lossy(&capture).contains("s3cret"));
    drop(s);

    // The same bytes on a new connection: a new challenge, and the old MAC fails.
    let mut r = srv.connect();
    r.write_all(&capture).unwrap();
    let Reply::Challenge { nonce } = proto::read_message(&mut r).unwrap() else {
        panic!("no challenge")
    };
    assert_ne!(nonce, first_nonce, "a nonce repeated");
    let e = error_text(proto::read_message(&mut r).unwrap());
    assert!(
        e.starts_with("authentication failed") && e.contains("replayed"),
        "{e}"
    );
    still_serves(&srv);
    assert!(srv.logged("authentication failed"));
    assert_no_secrets_logged(&srv, &[mac, server_mac]);
}

#[test]
fn a_client_of_protocol_version_1_is_told_the_version() {
    let srv = TestServer::start(|_| {});
    let mut s = srv.connect();
    let body = br#"{"type":"hello","token":"s3cret","version":1}"#;
    s.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    s.write_all(body).unwrap();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(
        e.contains("protocol version 1 is not spoken here") && e.contains("speaks 2"),
        "{e}"
    );
    // A later version's hello is refused by its version too.
    let mut s = srv.connect();
    let e = error_text(ask(&mut s, &Request::Hello { version: 3 }));
    assert!(e.contains("protocol version 3"), "{e}");
    still_serves(&srv);
    // The v1 hello carried the token in clear; the log never quotes it.
    assert!(srv.logged("protocol version 1"));
    assert_no_secrets_logged(&srv, &[]);
}

#[test]
fn absent_or_malformed_auth_is_refused_and_the_server_goes_on() {
    let srv = TestServer::start(|c| c.handshake_time = Duration::from_secs(1));
    // Hello, then open instead of auth.
    let mut s = srv.connect();
    assert!(matches!(
        ask(
            &mut s,
            &Request::Hello {
                version: proto::VERSION
            }
        ),
        Reply::Challenge { .. }
    ));
    let e = error_text(ask(&mut s, &Request::Close));
    assert!(e.contains("expected auth after the challenge"), "{e}");
    // An auth whose nonce is not 32 bytes.
    let mut s = srv.connect();
    ask(
        &mut s,
        &Request::Hello {
            version: proto::VERSION,
        },
    );
    let e = error_text(ask(
        &mut s,
        &Request::Auth {
            client_nonce: "00".into(),
            mac: "00".into(),
        },
    ));
    assert!(e.contains("client nonce is not 32 bytes"), "{e}");
    // Hello, then nothing: cut at the handshake deadline.
    let mut s = srv.connect();
    ask(
        &mut s,
        &Request::Hello {
            version: proto::VERSION,
        },
    );
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(
        e.contains("not authenticated within the handshake time"),
        "{e}"
    );
    // Authenticated but no open: cut at the same deadline, and its slot comes back.
    let mut s = srv.connect();
    assert!(matches!(
        authenticate(&mut s, "s3cret"),
        Reply::Welcome { .. }
    ));
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(e.contains("no open within the handshake time"), "{e}");
    still_serves(&srv);
}

/// A client sending its hello one byte every 300 ms never gets past the handshake
/// deadline (1 s here): the server cuts it, whatever it still sends.
#[test]
fn a_slow_loris_client_is_cut_at_the_handshake_deadline() {
    let srv = TestServer::start(|c| c.handshake_time = Duration::from_secs(1));
    let mut s = srv.connect();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    // A frame announcing the largest message, so there is always another byte to send.
    let mut frame = (proto::MAX_MESSAGE as u32).to_be_bytes().to_vec();
    frame.extend(vec![b' '; proto::MAX_MESSAGE]);
    let started = Instant::now();
    let mut answer = Vec::new();
    for byte in frame.iter() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still connected after {:?} with a 1 s handshake deadline",
            started.elapsed()
        );
        if s.write_all(&[*byte]).is_err() {
            break; // reset by the server: cut
        }
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
    }
    println!(
        "slow client cut after {:.2} s (deadline 1 s)",
        started.elapsed().as_secs_f64()
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(
        text.is_empty() || text.contains("handshake time"),
        "unexpected answer: {text}"
    );
    // The server closes the connection first and logs after it, so the line can come a
    // moment after the client saw the cut.
    let waited = Instant::now();
    while !srv.logged("not authenticated within the handshake time")
        && waited.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(srv.logged("not authenticated within the handshake time"));
    still_serves(&srv);
}

/// 200 connections that never authenticate take no session slot: with one slot, a
/// client holding the token still gets its session at once.
#[test]
fn idle_connections_do_not_lock_out_a_client_with_the_token() {
    let srv = TestServer::start(|c| {
        c.max_sessions = 1;
        c.handshake_time = Duration::from_secs(30);
    });
    let idle: Vec<TcpStream> = (0..200).map(|_| srv.connect()).collect();
    let started = Instant::now();
    let mut s = srv.connect();
    assert!(matches!(open_udp(&mut s), Reply::Opened { .. }));
    let took = started.elapsed();
    println!(
        "with 200 idle connections, a session was opened in {:.3} s",
        took.as_secs_f64()
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(ask(&mut s, &Request::Close), Reply::Closed);
    drop(idle);
}

/// Past `max_pending` the oldest connection is dropped, and the log says so in one
/// line for many connections rather than a line each.
#[test]
fn pending_handshakes_are_capped_and_drops_are_logged_in_aggregate() {
    let srv = TestServer::start(|c| {
        c.max_pending = 8;
        c.handshake_time = Duration::from_secs(30);
    });
    let mut idle: Vec<TcpStream> = (0..20).map(|_| srv.connect()).collect();
    // The newest connection still gets its session.
    let mut s = srv.connect();
    assert!(matches!(open_udp(&mut s), Reply::Opened { .. }));
    // The oldest were closed by the server without an answer (end of stream).
    let first = &mut idle[0];
    first
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut b = [0u8; 16];
    assert!(matches!(first.read(&mut b), Ok(0) | Err(_)));
    let lines: Vec<String> = srv
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("dropped"))
        .cloned()
        .collect();
    assert!(!lines.is_empty() && lines.len() <= 2, "{lines:?}");
    assert!(lines[0].contains("to stay within 8 pending"), "{lines:?}");
}

/// Guessing the token: each failed proof is logged with its count, the peer is refused
/// at accept once it reaches the limit (the right token too, for the block's length), and
/// a success in between clears the count. Counted, not timed: the block is an hour.
#[test]
fn failed_authentications_are_counted_logged_and_block_their_peer() {
    let srv = TestServer::start(|c| {
        c.max_failures = 3;
        c.block_time = Duration::from_secs(3600);
    });
    let guess = |token: &str| {
        let mut s = srv.connect();
        authenticate(&mut s, token)
    };
    for _ in 0..2 {
        let e = error_text(guess("1234"));
        assert!(e.starts_with("authentication failed"), "{e}");
    }
    // The holder of the token gets in, and its success forgives the two guesses.
    assert!(matches!(guess("s3cret"), Reply::Welcome { .. }));
    for _ in 0..2 {
        error_text(guess("1235"));
    }
    assert!(matches!(guess("s3cret"), Reply::Welcome { .. }));
    // Three in a row: blocked.
    for _ in 0..3 {
        error_text(guess("1236"));
    }
    // Refused at once, before any hello: read without sending, so nothing of ours is
    // unread when the server closes.
    let mut s = srv.connect();
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(
        e.contains("too many failed authentications from 127.0.0.1"),
        "{e}"
    );
    assert!(srv.logged("(failure 1 of 3 allowed)"));
    assert!(srv.logged("127.0.0.1 refused for 3600 s after 3 failed authentications"));
    assert!(srv.logged("connection from 127.0.0.1:"));
    assert_no_secrets_logged(&srv, &[]);
}

#[test]
fn a_guessable_token_is_refused_unless_allowed() {
    use super::serve::{ServeConfig, ServeError, Server};
    for weak in ["1", "1234", "s3cret", "0123456789abcdef"] {
        let mut c = ServeConfig::new(weak);
        c.listen = "127.0.0.1:0".parse().unwrap();
        let e = Server::bind(c.clone()).unwrap_err();
        assert!(matches!(e, ServeError::WeakToken(_)), "{weak}: {e}");
        let text = e.to_string();
        assert!(
            text.contains("--allow-weak-token") && text.contains("128"),
            "{text}"
        );
        c.allow_weak_token = true;
        assert!(Server::bind(c).is_ok(), "{weak} allowed");
    }
    let mut c = ServeConfig::new("9f86d081884c7d659a2feaa0c55ad015");
    c.listen = "127.0.0.1:0".parse().unwrap();
    assert!(Server::bind(c).is_ok());
}
