//! The client side of `perflab serve`'s control protocol: a session on a remote peer that
//! answers the measurement (the seed's host-to-host case, `host:ADDR` in the study).

use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::auth;
use super::peer_addr::{bad_peer, peer_name, PeerName};
use super::proto::{self, OpenRequest, Reply, Request};

pub use super::peer_addr::DEFAULT_PORT;

/// Reads a peer as users write it: `ADDR`, `ADDR:PORT`, `[V6]:PORT`, a host name, each
/// optionally prefixed `host:` as in the study's path names. The port defaults to
/// [`DEFAULT_PORT`].
pub fn parse_peer(text: &str) -> Result<SocketAddr, String> {
    let (host, port) = match peer_name(text)? {
        PeerName::Addr(a) => return Ok(a),
        PeerName::Host(h, p) => (h, p),
    };
    (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| bad_peer(text, &format!("cannot resolve {host:?}: {e}")))?
        .next()
        .ok_or_else(|| bad_peer(text, &format!("{host:?} has no address")))
}

/// An open session on a `perflab serve`. Closing it (or dropping it) ends the peer's
/// answering at once rather than at the session's time limit.
#[derive(Debug)]
pub(crate) struct RemoteSession {
    ctrl: TcpStream,
    pub data: SocketAddr,
    pub sink: Option<SocketAddr>,
    pub session_time_s: f64,
    closed: bool,
}

fn reply_error(peer: SocketAddr, what: &str, e: impl std::fmt::Display) -> String {
    format!("perflab serve at {peer}: {what}: {e}")
}

/// Hello, the server's challenge, our proof, and the server's proof that it holds the
/// token too (else it could be anyone who answers on that port). Returns the session's
/// time limit from the welcome.
fn authenticate(
    ask: &mut impl FnMut(&Request) -> Result<Reply, String>,
    peer: SocketAddr,
    token: &str,
) -> Result<f64, String> {
    let unexpected = |what: &str, r: Reply| {
        reply_error(
            peer,
            &format!("unexpected reply to {what}"),
            format!("{r:?}"),
        )
    };
    let server = match ask(&Request::Hello {
        version: proto::VERSION,
    })? {
        Reply::Challenge { nonce } => auth::nonce_from_hex(&nonce).ok_or_else(|| {
            reply_error(peer, "bad challenge", "the nonce is not 32 bytes of hex")
        })?,
        other => return Err(unexpected("hello", other)),
    };
    let client = auth::nonce().map_err(|e| reply_error(peer, "authenticate", e))?;
    match ask(&Request::Auth {
        client_nonce: auth::hex(&client),
        mac: auth::client_mac(token, &server, &client),
    })? {
        Reply::Welcome {
            session_time_s,
            server_mac,
        } => {
            if !auth::verify_server(token, &server, &client, &server_mac) {
                return Err(reply_error(
                    peer,
                    "authenticate",
                    "the server's proof of the token does not verify: whatever answers there \
                     does not hold this token",
                ));
            }
            Ok(session_time_s)
        }
        other => Err(unexpected("auth", other)),
    }
}

/// The least time a control message may take. A control exchange (hello, proof, open,
/// close) happens a few times per measurement, so waiting long costs nothing when the
/// peer is well; the limit only bites when the peer is slow. One was: a guest under TCG
/// (an emulated vCPU) still draining the previous repetition's three bulk streams through
/// its emulated NIC, with host tracing on for the telemetry repetition, answered the next
/// repetition's hello after more than the 2 s this used to be, and the repetition failed
/// with "no message within the time limit". A peer that never answers still fails the
/// repetition, after this long.
pub const CONTROL_TIME_LIMIT: Duration = Duration::from_secs(15);

/// The control connection's read and write limit for a reply `timeout` (the data
/// exchange's, often a fraction of a second): never below [`CONTROL_TIME_LIMIT`].
pub fn control_time_limit(timeout: Duration) -> Duration {
    timeout.max(CONTROL_TIME_LIMIT)
}

impl RemoteSession {
    /// Connects, authenticates with `token`, and asks the peer to answer `req`.
    pub fn open(
        peer: SocketAddr,
        token: &str,
        req: OpenRequest,
        timeout: Duration,
    ) -> Result<Self, String> {
        let limit = control_time_limit(timeout);
        let mut ctrl = TcpStream::connect_timeout(&peer, limit).map_err(|e| {
            reply_error(
                peer,
                "cannot connect",
                format!("{e} (is `perflab serve` running there, on this port?)"),
            )
        })?;
        let t = Some(limit);
        ctrl.set_read_timeout(t)
            .and_then(|()| ctrl.set_write_timeout(t))
            .map_err(|e| reply_error(peer, "control connection", e))?;
        let mut ask = |req: &Request| -> Result<Reply, String> {
            proto::write_message(&mut ctrl, req).map_err(|e| reply_error(peer, "send", e))?;
            match proto::read_message::<Reply>(&mut ctrl) {
                Ok(Reply::Error { message }) if message.contains("missing field `token`") => {
                    Err(reply_error(
                        peer,
                        "refused",
                        format!(
                            "{message} (the peer is an older perflab speaking protocol \
                             version 1, which sent the token in clear; update it)"
                        ),
                    ))
                }
                Ok(Reply::Error { message }) => Err(reply_error(peer, "refused", message)),
                Ok(r) => Ok(r),
                Err(e) => Err(reply_error(peer, "no valid reply", e)),
            }
        };
        let session_time_s = authenticate(&mut ask, peer, token)?;
        let (data_port, sink_port) = match ask(&Request::Open(req))? {
            Reply::Opened {
                data_port,
                sink_port,
            } => (data_port, sink_port),
            other => {
                return Err(reply_error(
                    peer,
                    "unexpected reply to open",
                    format!("{other:?}"),
                ))
            }
        };
        Ok(Self {
            ctrl,
            data: SocketAddr::new(peer.ip(), data_port),
            sink: sink_port.map(|p| SocketAddr::new(peer.ip(), p)),
            session_time_s,
            closed: false,
        })
    }

    /// Ends the session; the peer stops answering.
    pub fn close(mut self) -> Result<(), String> {
        self.closed = true;
        proto::write_message(&mut self.ctrl, &Request::Close).map_err(|e| e.to_string())?;
        match proto::read_message::<Reply>(&mut self.ctrl) {
            Ok(Reply::Closed) => Ok(()),
            Ok(other) => Err(format!("unexpected reply to close: {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl Drop for RemoteSession {
    fn drop(&mut self) {
        if !self.closed {
            let _ = proto::write_message(&mut self.ctrl, &Request::Close);
            let _ = self.ctrl.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_limit_outlasts_a_slow_emulated_guest_not_the_reply_timeout() {
        // netpaths waits 0.1 s for a reply; a control message from a TCG guest under load
        // took longer than 2 s.
        assert_eq!(
            control_time_limit(Duration::from_millis(100)),
            CONTROL_TIME_LIMIT
        );
        assert!(CONTROL_TIME_LIMIT >= Duration::from_secs(10));
        assert_eq!(
            control_time_limit(Duration::from_secs(60)),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn peers_parse_in_the_forms_users_write() {
        let p = |s: &str| parse_peer(s).map(|a| a.to_string());
        assert_eq!(p("10.0.0.2:7000").unwrap(), "10.0.0.2:7000");
        assert_eq!(p("host:10.0.0.2").unwrap(), "10.0.0.2:7700");
        assert_eq!(p("host:10.0.0.2:81").unwrap(), "10.0.0.2:81");
        assert_eq!(p("[::1]:9").unwrap(), "[::1]:9");
        assert_eq!(p("::1").unwrap(), "[::1]:7700");
        assert_eq!(p("localhost:5").unwrap().rsplit(':').next(), Some("5"));
        for bad in ["", "host:", "10.0.0.2:http", "no.such.host.invalid"] {
            let e = parse_peer(bad).unwrap_err();
            assert!(e.contains("ADDR:PORT"), "{bad}: {e}");
        }
    }
}
