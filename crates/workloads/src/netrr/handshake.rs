//! The handshakes of `perflab serve`, all on one thread: every connection not yet
//! authenticated is a nonblocking socket in one `poll` set with a buffer of at most one
//! control message, and one deadline from its accept. A connection costs no thread and
//! no session slot until its MAC has verified, so idle or slow connections cannot lock
//! out a client that holds the token, and the threads and memory they take are bounded.

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::auth::{self, Nonce};
use super::proto::{self, Reply, Request, MAX_MESSAGE};

/// Connections in the handshake at once; past it the oldest is dropped.
pub const MAX_PENDING: usize = 512;

/// Where a connection's handshake is.
enum Stage {
    /// Waiting for `hello`.
    Hello,
    /// The challenge was sent; waiting for `auth`.
    Auth { nonce: Nonce },
    /// An `auth` did not prove the token.
    Failed,
}

/// A connection in its handshake.
pub(crate) struct Pending {
    pub stream: TcpStream,
    pub from: SocketAddr,
    pub id: u64,
    /// Hello through open must be done by then.
    pub deadline: Instant,
    /// The part of the current message received so far (length prefix included): at
    /// most 4 + [`MAX_MESSAGE`] bytes, allocated as it arrives.
    buf: Vec<u8>,
    stage: Stage,
}

/// A connection whose client proved it holds the token.
pub(crate) struct Authenticated {
    pub stream: TcpStream,
    pub from: SocketAddr,
    pub id: u64,
    pub deadline: Instant,
    /// The welcome to send once a session slot is taken (it carries the server's proof).
    pub welcome: Reply,
}

/// What became of a connection after it was readable.
pub(crate) enum Step {
    /// Still in its handshake.
    Wait(Pending),
    Authenticated(Authenticated),
    /// Refused (the client was told why, as far as it still listens); what failed, for
    /// the log, and whether it was a proof of the token that failed (a guess), which
    /// counts against the peer.
    Refused {
        why: String,
        guess: bool,
    },
}

impl Pending {
    pub fn new(stream: TcpStream, from: SocketAddr, id: u64, handshake_time: Duration) -> Self {
        Self {
            stream,
            from,
            id,
            deadline: Instant::now() + handshake_time,
            buf: Vec::new(),
            stage: Stage::Hello,
        }
    }

    /// Answers `message` as an error, best effort (a socket that cannot take it at once
    /// is closed anyway), and returns it for the log.
    pub fn refuse(mut self, message: String) -> String {
        let _ = proto::write_message(
            &mut self.stream,
            &Reply::Error {
                message: message.clone(),
            },
        );
        message
    }

    /// Reads what the socket has and moves the handshake on.
    pub fn on_readable(mut self, token: &str, session_time: Duration) -> Step {
        loop {
            let body = match self.read_message() {
                Ok(Some(body)) => body,
                Ok(None) => return Step::Wait(self),
                Err(ReadFail::Closed) => {
                    return Step::Refused {
                        why: "closed by the client before authenticating".into(),
                        guess: false,
                    }
                }
                Err(ReadFail::Refuse(why)) => {
                    return Step::Refused {
                        why: self.refuse(why),
                        guess: false,
                    }
                }
            };
            match self.on_message(&body, token, session_time) {
                Ok(None) => continue,
                Ok(Some(welcome)) => {
                    return Step::Authenticated(Authenticated {
                        stream: self.stream,
                        from: self.from,
                        id: self.id,
                        deadline: self.deadline,
                        welcome,
                    })
                }
                Err(why) => {
                    let guess = matches!(self.stage, Stage::Failed);
                    return Step::Refused {
                        why: self.refuse(why),
                        guess,
                    };
                }
            }
        }
    }

    /// One whole message, `None` until it has arrived. Never reads past the message, so
    /// what the client sends after its `auth` stays in the socket for the session.
    fn read_message(&mut self) -> Result<Option<Vec<u8>>, ReadFail> {
        let mut chunk = [0u8; 1024];
        loop {
            let mut want = 4;
            if let Some(len) = self.buf.get(..4) {
                let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
                if len > MAX_MESSAGE {
                    return Err(ReadFail::Refuse(
                        proto::ProtoError::Oversized { len }.to_string(),
                    ));
                }
                want = 4 + len;
                if self.buf.len() == want {
                    let body = self.buf[4..].to_vec();
                    self.buf = Vec::new();
                    return Ok(Some(body));
                }
            }
            let room = (want - self.buf.len()).min(chunk.len());
            match self.stream.read(&mut chunk[..room]) {
                Ok(0) => return Err(ReadFail::Closed),
                Ok(n) => {
                    // Exactly what the message needs, never a doubling past it.
                    self.buf.reserve_exact(want - self.buf.len());
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
                Err(e) => return Err(ReadFail::Refuse(format!("control connection: {e}"))),
            }
        }
    }

    /// Moves the handshake on by one message: `Ok(None)` to wait for the next,
    /// `Ok(Some(welcome))` once authenticated, `Err` with what to answer and log.
    fn on_message(
        &mut self,
        body: &[u8],
        token: &str,
        session_time: Duration,
    ) -> Result<Option<Reply>, String> {
        let req = match proto::decode::<Request>(body) {
            Ok(r) => r,
            Err(e) => return Err(self.undecodable(body, e)),
        };
        match (&self.stage, req) {
            (Stage::Hello, Request::Hello { version }) if version != proto::VERSION => {
                Err(version_error(version.into()))
            }
            (Stage::Hello, Request::Hello { .. }) => {
                let nonce = auth::nonce()?;
                proto::write_message(
                    &mut self.stream,
                    &Reply::Challenge {
                        nonce: auth::hex(&nonce),
                    },
                )
                .map_err(|e| format!("cannot send the challenge: {e}"))?;
                self.stage = Stage::Auth { nonce };
                Ok(None)
            }
            (Stage::Hello, _) => Err("expected hello first: authenticate before anything else \
                                     (protocol version 2)"
                .into()),
            (Stage::Auth { nonce }, Request::Auth { client_nonce, mac }) => {
                let nonce = *nonce;
                self.stage = Stage::Failed;
                let client = auth::nonce_from_hex(&client_nonce)
                    .ok_or("authentication failed: the client nonce is not 32 bytes of hex")?;
                if !auth::verify_client(token, &nonce, &client, &mac) {
                    return Err(
                        "authentication failed: the MAC does not match this server's \
                                token and challenge (a wrong token, or a replayed session)"
                            .into(),
                    );
                }
                Ok(Some(Reply::Welcome {
                    session_time_s: session_time.as_secs_f64(),
                    server_mac: auth::server_mac(token, &nonce, &client),
                }))
            }
            (Stage::Auth { .. }, Request::Hello { .. }) => Err("hello sent twice".into()),
            (Stage::Auth { .. }, _) => Err("expected auth after the challenge".into()),
            (Stage::Failed, _) => Err("authentication failed already".into()),
        }
    }

    /// What to say about a message that does not decode. A hello of another protocol
    /// version is named as such; nothing of the body is quoted, since a client of
    /// version 1 sends its token in its hello.
    fn undecodable(&self, body: &[u8], e: proto::ProtoError) -> String {
        if let Some(v) = proto::hello_version(body) {
            if v != proto::VERSION as u64 {
                return version_error(v);
            }
        }
        let at = match e {
            proto::ProtoError::Malformed(_) => serde_json::from_slice::<serde_json::Value>(body)
                .err()
                .map(|e| format!(" (not JSON at column {})", e.column()))
                .unwrap_or_default(),
            _ => String::new(),
        };
        format!("control message is not valid for protocol version 2{at}")
    }
}

fn version_error(v: u64) -> String {
    format!(
        "protocol version {v} is not spoken here (this perflab serve speaks {}, in which the \
         token never crosses the wire; update perflab on the client)",
        proto::VERSION
    )
}

/// Why a message could not be read.
enum ReadFail {
    Closed,
    Refuse(String),
}

/// Limits how many per-connection lines the handshake thread logs: at most `burst` in a
/// window of `window`; the rest are counted and said in one line at the next window, so a
/// flood of bad connections cannot flood the log.
pub(crate) struct Throttle {
    burst: usize,
    window: Duration,
    started: Instant,
    logged: usize,
    held: u64,
}

impl Throttle {
    pub fn new(burst: usize, window: Duration) -> Self {
        Self {
            burst,
            window,
            started: Instant::now(),
            logged: 0,
            held: 0,
        }
    }

    /// Lines to log now: `line` itself while the window has room, and a summary of the
    /// held ones when a new window begins.
    pub fn admit(&mut self, line: String) -> Vec<String> {
        let mut out = self.roll();
        if self.logged < self.burst {
            self.logged += 1;
            out.push(line);
        } else {
            self.held += 1;
        }
        out
    }

    /// The summary of held lines, once their window is over.
    pub fn roll(&mut self) -> Vec<String> {
        if self.started.elapsed() < self.window {
            return Vec::new();
        }
        let out = if self.held > 0 {
            vec![format!(
                "{} more handshakes failed in the last {:.0} s (not each logged)",
                self.held,
                self.started.elapsed().as_secs_f64()
            )]
        } else {
            Vec::new()
        };
        self.started = Instant::now();
        self.logged = 0;
        self.held = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_passes_a_burst_then_counts_the_rest_in_one_line() {
        let mut t = Throttle::new(3, Duration::from_secs(3600));
        let out: Vec<String> = (0..10).flat_map(|i| t.admit(format!("line {i}"))).collect();
        assert_eq!(out, ["line 0", "line 1", "line 2"]);
        assert!(t.roll().is_empty(), "the window is not over");
        // The window over: one line for the 7 held, and a new burst.
        t.window = Duration::ZERO;
        let out = t.admit("line 10".into());
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].starts_with("7 more handshakes failed"), "{out:?}");
        assert_eq!(out[1], "line 10");
    }
}
