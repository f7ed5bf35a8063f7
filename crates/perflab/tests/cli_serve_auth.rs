//! `perflab serve` as a process: clients that do not hold the token, replay, a slow
//! handshake and 200 idle connections are refused or cut while a client with the token
//! gets its session; the server's threads and memory stay bounded; and the token is in
//! no log line, no output, and no byte of the results database.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{run_id, text, Lab};
use perflab_workloads::netrr::auth;
use perflab_workloads::netrr::proto::{self, OpenRequest, Reply, Request};

const TOKEN: &str = "SECRETtok3n-for-the-serve-test";

/// A `perflab serve` child with its stderr in a file, stopped (SIGTERM) on drop.
struct Serve {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Serve {
    fn start(lab: &Lab, name: &str, extra: &[&str]) -> Self {
        Self::start_with_token(lab, name, TOKEN, extra)
    }

    fn start_with_token(lab: &Lab, name: &str, token: &str, extra: &[&str]) -> Self {
        let token_file = lab.dir.path().join(format!("{name}.token"));
        std::fs::write(&token_file, format!("{token}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let log = lab.dir.path().join(format!("{name}.log"));
        let child = lab
            .cmd()
            .args(["serve", "--port", "0", "--token-file"])
            .arg(&token_file)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start perflab serve");
        // The listening line names the port the kernel chose.
        let t = Instant::now();
        let addr = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(a) = text.lines().find_map(|l| {
                l.strip_prefix("perflab serve: listening on ")
                    .and_then(|r| r.split(',').next())
                    .and_then(|a| a.parse().ok())
            }) {
                break a;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "serve did not start: {text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Self { child, addr, log }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s
    }

    /// Stops the server and returns everything it logged.
    fn stop(mut self) -> String {
        // SAFETY: a plain kill(2) of the child this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        self.log_text()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ask(s: &mut TcpStream, req: &Request) -> Reply {
    proto::write_message(s, req).unwrap();
    proto::read_message(s).unwrap()
}

/// The client's side of the handshake with `token`; the server's last reply, and the
/// bytes the client sent (a wire capture).
fn authenticate(s: &mut TcpStream, token: &str) -> (Reply, Vec<u8>) {
    let mut sent = Vec::new();
    let hello = Request::Hello {
        version: proto::VERSION,
    };
    proto::write_message(&mut sent, &hello).unwrap();
    let Reply::Challenge { nonce } = ask(s, &hello) else {
        panic!("no challenge")
    };
    let server = auth::nonce_from_hex(&nonce).unwrap();
    let client = auth::nonce().unwrap();
    let req = Request::Auth {
        client_nonce: auth::hex(&client),
        mac: auth::client_mac(token, &server, &client),
    };
    proto::write_message(&mut sent, &req).unwrap();
    let reply = ask(s, &req);
    if let Reply::Welcome { server_mac, .. } = &reply {
        assert!(auth::verify_server(token, &server, &client, server_mac));
    }
    (reply, sent)
}

fn error_text(r: Reply) -> String {
    match r {
        Reply::Error { message } => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Opens and closes a session as a client holding the token would.
fn a_session(serve: &Serve) {
    let mut s = serve.connect();
    let (r, _) = authenticate(&mut s, TOKEN);
    assert!(matches!(r, Reply::Welcome { .. }), "{r:?}");
    let r = ask(
        &mut s,
        &Request::Open(OpenRequest {
            proto: "udp".into(),
            size: 64,
            load_streams: 0,
        }),
    );
    assert!(matches!(r, Reply::Opened { .. }), "{r:?}");
    assert_eq!(ask(&mut s, &Request::Close), Reply::Closed);
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .count()
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// Every byte of the database and its side files.
fn db_bytes(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-journal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(b) = std::fs::read(&p) {
            all.extend(b);
        }
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn wrong_absent_and_replayed_auth_are_refused_and_a_slow_client_is_cut() {
    let lab = Lab::new();
    let serve = Serve::start(&lab, "a", &["--handshake-time", "1s"]);
    // Wrong token.
    let mut s = serve.connect();
    let e = error_text(authenticate(&mut s, "guess").0);
    assert!(e.starts_with("authentication failed"), "{e}");
    // No auth: something else after the challenge.
    let mut s = serve.connect();
    ask(
        &mut s,
        &Request::Hello {
            version: proto::VERSION,
        },
    );
    let e = error_text(ask(&mut s, &Request::Close));
    assert!(e.contains("expected auth"), "{e}");
    // A captured good handshake replayed on a new connection.
    let mut s = serve.connect();
    let (r, capture) = authenticate(&mut s, TOKEN);
    assert!(matches!(r, Reply::Welcome { .. }));
    drop(s);
    assert!(!contains(&capture, "SECRET"), "the token crossed the wire");
    let mut s = serve.connect();
    s.write_all(&capture).unwrap();
    assert!(matches!(
        proto::read_message::<Reply>(&mut s).unwrap(),
        Reply::Challenge { .. }
    ));
    let e = error_text(proto::read_message(&mut s).unwrap());
    assert!(e.contains("replayed"), "{e}");
    // One byte every 300 ms: cut at the 1 s deadline, long before 10 s.
    let mut s = serve.connect();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let t = Instant::now();
    let mut frame = 4096u32.to_be_bytes().to_vec();
    frame.extend(vec![b' '; 4096]);
    let mut cut = false;
    for b in frame {
        if t.elapsed() > Duration::from_secs(10) {
            break;
        }
        if s.write_all(&[b]).is_err() {
            cut = true;
            break;
        }
        match s.read(&mut [0u8; 512]) {
            Ok(0) => {
                cut = true;
                break;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                cut = true;
                break;
            }
        }
    }
    println!(
        "slow client: cut={cut} after {:.2} s (deadline 1 s)",
        t.elapsed().as_secs_f64()
    );
    assert!(
        cut,
        "a client sending a byte every 300 ms was still connected after 10 s"
    );
    // The server goes on.
    a_session(&serve);
    let log = serve.stop();
    println!("{log}");
    assert!(!log.contains("SECRET"), "{log}");
    assert!(
        log.contains("from 127.0.0.1:") && log.contains("authentication failed"),
        "{log}"
    );
    assert!(
        log.contains("not authenticated within the handshake time"),
        "{log}"
    );
}

#[test]
fn two_hundred_idle_connections_leave_a_session_for_the_token_and_bounded_threads() {
    let lab = Lab::new();
    let serve = Serve::start(
        &lab,
        "b",
        &["--handshake-time", "60s", "--max-sessions", "2"],
    );
    let pid = serve.pid();
    a_session(&serve); // warm: one session's threads have come and gone
    std::thread::sleep(Duration::from_millis(300));
    let (threads0, rss0) = (threads_of(pid), rss_kib(pid));
    let idle: Vec<TcpStream> = (0..200).map(|_| serve.connect()).collect();
    // Each idle connection sends most of a message of the largest size and stops, so
    // each holds the largest buffer a pending handshake may.
    let mut idle = idle;
    let mut almost = 4096u32.to_be_bytes().to_vec();
    almost.extend(vec![b' '; 4000]);
    for s in &mut idle {
        s.write_all(&almost).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let (threads1, rss1) = (threads_of(pid), rss_kib(pid));
    let t = Instant::now();
    a_session(&serve);
    let took = t.elapsed();
    println!(
        "200 idle connections: a session opened and closed in {:.3} s; serve threads {threads0} \
         -> {threads1}; RSS {rss0} KiB -> {rss1} KiB",
        took.as_secs_f64()
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    // No thread per connection: the count is what it was (a session thread may still be
    // winding down), far below one per connection.
    assert!(
        threads1 <= threads0 + 2 && threads1 <= 16,
        "{threads0} -> {threads1}"
    );
    // 200 pending handshakes cost a few KiB each at most (4 KiB of message each here).
    assert!(rss1 < rss0 + 16 * 1024, "{rss0} -> {rss1} KiB");
    drop(idle);
    let log = serve.stop();
    assert!(!log.contains("SECRET"), "{log}");
}

#[test]
fn a_run_with_a_token_keeps_only_its_fingerprint() {
    let lab = Lab::new();
    let serve = Serve::start(&lab, "c", &[]);
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "-p",
        &format!("peer={}", serve.addr),
        "-p",
        &format!("token={TOKEN}"),
        "-p",
        "duration=0.2s",
        "--reps",
        "1",
        "--warmup",
        "0",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = run_id(&err);
    let fp = lab.fingerprint(TOKEN);
    let show = lab.run(&["show", &id]);
    let export = lab.run(&["export", &id]);
    for (what, bytes) in [
        ("run stdout", out.as_bytes().to_vec()),
        ("run stderr", err.as_bytes().to_vec()),
        ("show", [show.stdout, show.stderr].concat()),
        ("export", export.stdout.clone()),
        ("database", db_bytes(&lab.db())),
    ] {
        assert!(!contains(&bytes, "SECRET"), "the token in the {what}");
    }
    // What the run keeps is the fingerprint.
    assert!(
        contains(&db_bytes(&lab.db()), &fp),
        "{fp} not in the database"
    );
    assert!(contains(&export.stdout, &fp), "{fp} not in the export");
    // A wrong token fails the repetition with a clear reason, and is not kept either.
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "-p",
        &format!("peer={}", serve.addr),
        "-p",
        "token=SECRETwrong",
        "-p",
        "duration=0.2s",
        "--reps",
        "1",
        "--warmup",
        "0",
    ]);
    let (_, err) = text(&o);
    let doc = lab.export(&run_id(&err));
    let why = doc["measurements"][0]["status"]["error"]
        .as_str()
        .expect("the repetition failed")
        .to_string();
    assert!(why.contains("authentication failed"), "{why}");
    assert!(!contains(&db_bytes(&lab.db()), "SECRET"));
    assert!(!err.contains("SECRET"), "{err}");
    let log = serve.stop();
    assert!(!log.contains("SECRET"), "{log}");
    assert!(log.contains("authentication failed"), "{log}");
    let first = BufReader::new(log.as_bytes())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    assert!(first.contains(&fp), "{first}");
}

/// A 4-digit token fell to 7,392 guesses in 2 s: serve refuses one under 128 bits,
/// saying so in one line that does not quote it, unless --allow-weak-token.
#[test]
fn a_guessable_token_is_refused_unless_allowed() {
    let lab = Lab::new();
    for token in ["1234", "s3cret", "abababababababababababababababababab"] {
        let o = lab
            .cmd()
            .args(["serve", "--port", "0"])
            .env("PERFLAB_SERVE_TOKEN", token)
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{token}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--allow-weak-token") && !err.contains(token),
            "{err}"
        );
    }
    let serve = Serve::start_with_token(&lab, "weak", "1234", &["--allow-weak-token"]);
    let log = serve.stop();
    assert!(
        log.contains("warning: the token carries at most 13 bits") && !log.contains("1234"),
        "{log}"
    );
}

#[test]
fn a_token_file_is_read_and_bad_ones_are_refused() {
    let lab = Lab::new();
    let empty = lab.dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let o = lab.run(&[
        "serve",
        "--port",
        "0",
        "--token-file",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("the file is empty"), "{:?}", text(&o));
    let o = lab.run(&["serve", "--port", "0", "--token-file", "/nonexistent/t"]);
    assert_eq!(o.status.code(), Some(2));
    let o = lab.run(&["serve", "--token", "a", "--token-file", "/x"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let help = lab.run(&["serve", "--help"]);
    let h = String::from_utf8_lossy(&help.stdout);
    assert!(h.contains("--token-file") && h.contains("ps"), "{h}");
}
