//! `perflab serve`: the responder for a measurement from another host.
//!
//! It listens for control connections (127.0.0.1 unless told an address), holds at most
//! `max_sessions` at once, each for at most `session_time`, and answers nothing but the
//! measurement a session asked for: echoes of requests of the agreed size from the
//! session's own peer address, and a sink for its load streams. A control connection has
//! `handshake_time` to authenticate and open. Whatever goes wrong in one session is
//! answered with an error message on that session and logged; the server carries on.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::proto::{self, OpenRequest, ProtoError, Reply, Request};
use super::responder::{start_echo, start_sink, Placement, Running};
use super::sock::{is_timeout, Proto};

/// Load streams one session may open.
pub const MAX_LOAD_STREAMS: u32 = 16;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub token: String,
    pub max_sessions: usize,
    pub session_time: Duration,
    pub handshake_time: Duration,
}

impl ServeConfig {
    /// Loopback on the default port, 4 sessions of up to 10 minutes.
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], super::remote::DEFAULT_PORT)),
            token: token.into(),
            max_sessions: 4,
            session_time: Duration::from_secs(600),
            handshake_time: Duration::from_secs(5),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}{hint}")]
    Listen {
        addr: SocketAddr,
        hint: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("no token: a shared token is required (give --token or set PERFLAB_SERVE_TOKEN)")]
    NoToken,
    #[error("serve: {0}")]
    Io(#[from] std::io::Error),
}

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    cfg: ServeConfig,
}

/// Where log lines go (stderr from the CLI; collected in tests).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

impl Server {
    /// Binds the control port. A port in use is an error that says so and what to do.
    pub fn bind(cfg: ServeConfig) -> Result<Self, ServeError> {
        if cfg.token.is_empty() {
            return Err(ServeError::NoToken);
        }
        let listener = TcpListener::bind(cfg.listen).map_err(|source| {
            let hint = match source.kind() {
                std::io::ErrorKind::AddrInUse => {
                    " (the port is in use: another perflab serve may be running; choose \
                     another with --port)"
                }
                std::io::ErrorKind::AddrNotAvailable => {
                    " (no interface of this machine has that address)"
                }
                std::io::ErrorKind::PermissionDenied => " (ports below 1024 need root)",
                _ => "",
            };
            ServeError::Listen {
                addr: cfg.listen,
                hint,
                source,
            }
        })?;
        listener.set_nonblocking(true)?;
        Ok(Self { listener, cfg })
    }

    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until `stop` is set, then ends every session and returns.
    pub fn run(&self, stop: &AtomicBool, log: Log) -> Result<(), ServeError> {
        let active = Arc::new(AtomicUsize::new(0));
        let next_id = AtomicU64::new(1);
        std::thread::scope(|scope| -> Result<(), ServeError> {
            while !stop.load(Ordering::Relaxed) {
                let (stream, from) = match self.listener.accept() {
                    Ok(x) => x,
                    Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    Err(e) => {
                        // Out of descriptors and the like: say so, keep serving.
                        log(&format!("accept failed: {e}"));
                        std::thread::sleep(Duration::from_millis(100));
                        continue;
                    }
                };
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                if active.load(Ordering::Acquire) >= self.cfg.max_sessions {
                    log(&format!(
                        "session {id} from {from}: refused, {} sessions in progress",
                        self.cfg.max_sessions
                    ));
                    refuse(
                        stream,
                        &format!(
                            "busy: {0} sessions in progress (limit {0}); try again later",
                            self.cfg.max_sessions
                        ),
                    );
                    continue;
                }
                active.fetch_add(1, Ordering::AcqRel);
                let (active, log, cfg) = (active.clone(), log.clone(), &self.cfg);
                scope.spawn(move || {
                    let _count = SessionCount(active);
                    match session(stream, (id, from), cfg, stop, &log) {
                        Ok(what) => log(&format!("session {id} from {from}: {what}")),
                        Err(e) => log(&format!("session {id} from {from}: {e}")),
                    }
                });
            }
            Ok(())
        })
    }
}

/// Decrements the session count however a session ends.
struct SessionCount(Arc<AtomicUsize>);

impl Drop for SessionCount {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn refuse(mut stream: TcpStream, message: &str) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = proto::write_message(
        &mut stream,
        &Reply::Error {
            message: message.to_string(),
        },
    );
}

/// Answers `message` as an error and returns it for the log.
fn fail(stream: &mut TcpStream, message: String) -> String {
    let _ = proto::write_message(
        stream,
        &Reply::Error {
            message: message.clone(),
        },
    );
    message
}

/// What a session's measurement needs running; dropped at the session's end.
struct Answering {
    _echo: Running,
    _sink: Option<Running>,
}

fn validate(req: &OpenRequest) -> Result<Proto, String> {
    let proto = Proto::from_name(&req.proto).ok_or_else(|| {
        format!(
            "unknown proto {:?} (known: {})",
            req.proto,
            Proto::NAMES.join(", ")
        )
    })?;
    if req.size == 0 || req.size > proto::MAX_DATA_SIZE {
        return Err(format!(
            "size {} is outside 1..={}",
            req.size,
            proto::MAX_DATA_SIZE
        ));
    }
    if req.load_streams > MAX_LOAD_STREAMS {
        return Err(format!(
            "{} load streams asked, at most {MAX_LOAD_STREAMS}",
            req.load_streams
        ));
    }
    Ok(proto)
}

fn session(
    mut s: TcpStream,
    (id, from): (u64, SocketAddr),
    cfg: &ServeConfig,
    stop: &AtomicBool,
    log: &Log,
) -> Result<String, String> {
    let started = Instant::now();
    let deadline = started + cfg.session_time;
    let handshake_end = started + cfg.handshake_time.min(cfg.session_time);
    s.set_nonblocking(false)
        .and_then(|()| s.set_write_timeout(Some(Duration::from_secs(2))))
        .map_err(|e| e.to_string())?;
    // Hello, then open, each within the handshake time.
    let read = |s: &mut TcpStream, until: Instant| -> Result<Request, String> {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(fail(s, "no request within the handshake time".into()));
        }
        s.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        proto::read_message::<Request>(s).map_err(|e| match e {
            ProtoError::Closed => "the client closed the connection".to_string(),
            ProtoError::TimedOut => fail(s, "no request within the handshake time".into()),
            other => fail(s, format!("{other}; closing this session")),
        })
    };
    match read(&mut s, handshake_end)? {
        Request::Hello { token, version } => {
            if version != proto::VERSION {
                return Err(fail(
                    &mut s,
                    format!(
                        "protocol version {version} is not spoken here (this perflab serve \
                         speaks {})",
                        proto::VERSION
                    ),
                ));
            }
            if !proto::tokens_match(&token, &cfg.token) {
                return Err(fail(&mut s, "wrong token".into()));
            }
        }
        _ => return Err(fail(&mut s, "expected hello with the token first".into())),
    }
    proto::write_message(
        &mut s,
        &Reply::Welcome {
            session_time_s: cfg.session_time.as_secs_f64(),
        },
    )
    .map_err(|e| e.to_string())?;
    let req = match read(&mut s, handshake_end)? {
        Request::Open(req) => req,
        Request::Close => {
            let _ = proto::write_message(&mut s, &Reply::Closed);
            return Ok("closed before opening".into());
        }
        Request::Hello { .. } => return Err(fail(&mut s, "hello sent twice".into())),
    };
    let proto_kind = validate(&req).map_err(|e| fail(&mut s, e))?;
    let place = Placement {
        netns: String::new(),
        addr: listen_ip(&s, cfg),
        cpu: None,
        allow: Some(from.ip()),
    };
    let echo = start_echo(proto_kind, req.size, &place).map_err(|e| fail(&mut s, e))?;
    let sink = if req.load_streams > 0 {
        Some(
            start_sink(req.load_streams, &place, Arc::new(AtomicU64::new(0)))
                .map_err(|e| fail(&mut s, e))?,
        )
    } else {
        None
    };
    let reply = Reply::Opened {
        data_port: echo.port,
        sink_port: sink.as_ref().map(|r| r.port),
    };
    let _answering = Answering {
        _echo: echo,
        _sink: sink,
    };
    proto::write_message(&mut s, &reply).map_err(|e| e.to_string())?;
    log(&format!(
        "session {id} from {from}: answering {} {} B{} until closed or {:.0} s",
        req.proto,
        req.size,
        if req.load_streams > 0 {
            format!(", sink for {} load streams", req.load_streams)
        } else {
            String::new()
        },
        cfg.session_time.as_secs_f64()
    ));
    // Wait for close, the time limit, or the server's stop, polling the latter.
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(fail(&mut s, "the server is stopping".into()));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(fail(
                &mut s,
                format!(
                    "session time limit of {:.0} s reached; measurement traffic is no longer \
                     answered",
                    cfg.session_time.as_secs_f64()
                ),
            ));
        }
        s.set_read_timeout(Some(left.min(Duration::from_millis(200))))
            .map_err(|e| e.to_string())?;
        match proto::read_message::<Request>(&mut s) {
            Ok(Request::Close) => {
                let _ = proto::write_message(&mut s, &Reply::Closed);
                return Ok("closed by the client".into());
            }
            Ok(_) => return Err(fail(&mut s, "only close is expected once opened".into())),
            Err(ProtoError::TimedOut) => {}
            Err(ProtoError::Closed) => return Ok("the client went away".into()),
            Err(e) => return Err(fail(&mut s, format!("{e}; closing this session"))),
        }
    }
}

/// The address measurement sockets bind: the one the control connection came in on, so
/// a server listening on 0.0.0.0 answers on the interface the client used.
fn listen_ip(s: &TcpStream, cfg: &ServeConfig) -> IpAddr {
    s.local_addr().map(|a| a.ip()).unwrap_or(cfg.listen.ip())
}
