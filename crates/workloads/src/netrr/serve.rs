//! `perflab serve`: the responder for a measurement from another host.
//!
//! It listens for control connections (127.0.0.1 unless told an address), holds at most
//! `max_sessions` at once, each for at most `session_time`, and answers nothing but the
//! measurement a session asked for: echoes of requests of the agreed size from the
//! session's own peer address, and a sink for its load streams.
//!
//! The thread that accepts also runs every handshake ([`super::handshake`]): a connection
//! has `handshake_time` from its accept to authenticate (challenge-response, the token
//! never sent) and open, takes no thread and no session slot until it has authenticated,
//! and at most `max_pending` connections wait at once (past it the oldest is dropped).
//! Only an authenticated connection gets a session thread, or a "busy" answer when all
//! slots are taken. A peer whose proofs of the token fail `max_failures` times in a row
//! is refused at accept for `block_time`, longer at each repeat ([`super::peer_guard`]),
//! and the server refuses to start with a guessable token unless allowed
//! ([`super::token_strength`]). Whatever goes wrong in one connection is answered with an error
//! message on it and logged by peer address (never the token or a MAC); the server
//! carries on.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::handshake::{Authenticated, Pending, Step, Throttle, MAX_PENDING};
use super::peer_guard::{Failed, PeerGuard};
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
    /// From accept to `open`: hello, challenge, auth, welcome, open, all within it.
    pub handshake_time: Duration,
    /// Connections in their handshake at once; past it the oldest is dropped.
    pub max_pending: usize,
    /// Serve with a token under 128 bits (`--allow-weak-token`).
    pub allow_weak_token: bool,
    /// Failed proofs of the token in a row after which a peer is refused for a while.
    pub max_failures: u32,
    /// How long a peer is first refused (doubled at each repeat, at most an hour).
    pub block_time: Duration,
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
            max_pending: MAX_PENDING,
            allow_weak_token: false,
            max_failures: 5,
            block_time: Duration::from_secs(60),
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
    #[error("{0}")]
    WeakToken(String),
    #[error("serve: {0}")]
    Io(#[from] std::io::Error),
}

/// Whether `token` is strong enough to serve with: `Err` says why not and what to do.
pub fn token_check(token: &str) -> Result<(), String> {
    super::token_strength::check(token)
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
        if !cfg.allow_weak_token {
            super::token_strength::check(&cfg.token).map_err(ServeError::WeakToken)?;
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
        let mut hs = Handshakes {
            pending: Vec::new(),
            next_id: 1,
            dropped: 0,
            dropped_said: None,
            throttle: Throttle::new(20, Duration::from_secs(10)),
            guard: PeerGuard::new(self.cfg.max_failures, self.cfg.block_time),
        };
        std::thread::scope(|scope| -> Result<(), ServeError> {
            while !stop.load(Ordering::Relaxed) {
                let ready = self.wait(&hs.pending)?;
                if ready.listener {
                    self.accept_all(&mut hs, &log);
                }
                for done in hs.advance(&ready.pending, &self.cfg, &log) {
                    if active.load(Ordering::Acquire) >= self.cfg.max_sessions {
                        let why = format!(
                            "busy: {0} sessions in progress (limit {0}); try again later",
                            self.cfg.max_sessions
                        );
                        refuse(done.stream, &why);
                        log(&format!(
                            "session {} from {}: refused, {why}",
                            done.id, done.from
                        ));
                        continue;
                    }
                    active.fetch_add(1, Ordering::AcqRel);
                    let (active, log, cfg) = (active.clone(), log.clone(), &self.cfg);
                    scope.spawn(move || {
                        let _count = SessionCount(active);
                        let (id, from) = (done.id, done.from);
                        match session(done, cfg, stop, &log) {
                            Ok(what) => log(&format!("session {id} from {from}: {what}")),
                            Err(e) => log(&format!("session {id} from {from}: {e}")),
                        }
                    });
                }
                hs.expire(&self.cfg, &log);
            }
            hs.say_dropped(&self.cfg, &log, true);
            Ok(())
        })
    }

    /// Polls the listener and every pending handshake, at most until the next deadline
    /// or 100 ms (when `stop` is looked at again).
    fn wait(&self, pending: &[Pending]) -> Result<Ready, ServeError> {
        let now = Instant::now();
        let next = pending
            .iter()
            .map(|p| p.deadline.saturating_duration_since(now))
            .min()
            .unwrap_or(Duration::MAX)
            .min(Duration::from_millis(100));
        // Rounded up, so a deadline is not polled for again just before it.
        let ms = (next.as_micros().div_ceil(1000)) as u16;
        let mut fds = Vec::with_capacity(1 + pending.len());
        fds.push(PollFd::new(self.listener.as_fd(), PollFlags::POLLIN));
        fds.extend(
            pending
                .iter()
                .map(|p| PollFd::new(p.stream.as_fd(), PollFlags::POLLIN)),
        );
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => return Ok(Ready::default()),
            Err(e) => return Err(ServeError::Io(e.into())),
        }
        let hit = |f: &PollFd| f.revents().is_some_and(|r| !r.is_empty());
        Ok(Ready {
            listener: hit(&fds[0]),
            pending: fds[1..].iter().map(hit).collect(),
        })
    }

    /// Accepts every connection waiting, each into the handshake set.
    fn accept_all(&self, hs: &mut Handshakes, log: &Log) {
        // A bound per round, so the handshakes already pending get their turn.
        for _ in 0..256 {
            let (stream, from) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if is_timeout(&e) => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of descriptors and the like: say so, keep serving.
                    for line in hs.throttle.admit(format!("accept failed: {e}")) {
                        log(&line);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                    return;
                }
            };
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            if let Some(left) = hs.guard.blocked(from.ip(), Instant::now()) {
                let why = format!(
                    "too many failed authentications from {}: refused for another {:.0} s",
                    from.ip(),
                    left.as_secs_f64().ceil()
                );
                refuse(stream, &why);
                for line in hs.throttle.admit(format!("connection from {from}: {why}")) {
                    log(&line);
                }
                continue;
            }
            if hs.pending.len() >= self.cfg.max_pending.max(1) {
                // The oldest has had the most time to authenticate.
                hs.pending.remove(0);
                hs.dropped += 1;
            }
            let id = hs.next_id;
            hs.next_id += 1;
            hs.pending
                .push(Pending::new(stream, from, id, self.cfg.handshake_time));
        }
        hs.say_dropped(&self.cfg, log, false);
    }
}

/// What a poll found readable.
#[derive(Default)]
struct Ready {
    listener: bool,
    /// By index into the pending handshakes.
    pending: Vec<bool>,
}

/// The connections in their handshake, and what the log is told about them.
struct Handshakes {
    /// Oldest first.
    pending: Vec<Pending>,
    next_id: u64,
    /// Dropped over `max_pending` since the last line that said so.
    dropped: u64,
    dropped_said: Option<Instant>,
    throttle: Throttle,
    /// Failed proofs of the token, by peer.
    guard: PeerGuard,
}

impl Handshakes {
    /// Moves on the handshakes that were readable; returns the authenticated ones.
    fn advance(&mut self, ready: &[bool], cfg: &ServeConfig, log: &Log) -> Vec<Authenticated> {
        let mut done = Vec::new();
        let mut keep = Vec::with_capacity(self.pending.len());
        for (i, p) in std::mem::take(&mut self.pending).into_iter().enumerate() {
            if !ready.get(i).copied().unwrap_or(false) {
                keep.push(p);
                continue;
            }
            let (id, from) = (p.id, p.from);
            match p.on_readable(&cfg.token, cfg.session_time) {
                Step::Wait(p) => keep.push(p),
                Step::Authenticated(a) => {
                    self.guard.succeeded(from.ip());
                    done.push(a)
                }
                Step::Refused { why, guess } => {
                    let mut line = format!("handshake {id} from {from}: {why}");
                    if guess {
                        line.push_str(&match self.guard.failed(from.ip(), Instant::now()) {
                            Failed::Counted(n) => {
                                format!(" (failure {n} of {} allowed)", self.guard.limit())
                            }
                            Failed::Blocked(d) => format!(
                                "; {} refused for {:.0} s after {} failed authentications",
                                from.ip(),
                                d.as_secs_f64(),
                                self.guard.limit()
                            ),
                        });
                    }
                    for line in self.throttle.admit(line) {
                        log(&line);
                    }
                }
            }
        }
        self.pending = keep;
        done
    }

    /// Cuts the handshakes past their deadline.
    fn expire(&mut self, cfg: &ServeConfig, log: &Log) {
        let now = Instant::now();
        let (late, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.deadline <= now);
        self.pending = keep;
        for p in late {
            let (id, from) = (p.id, p.from);
            let why = p.refuse(format!(
                "not authenticated within the handshake time of {:.1} s; closing",
                cfg.handshake_time.as_secs_f64()
            ));
            for line in self
                .throttle
                .admit(format!("handshake {id} from {from}: {why}"))
            {
                log(&line);
            }
        }
        for line in self.throttle.roll() {
            log(&line);
        }
        self.say_dropped(cfg, log, false);
    }

    /// One line for the connections dropped over the limit, at most every 10 s.
    fn say_dropped(&mut self, cfg: &ServeConfig, log: &Log, now: bool) {
        let due = self
            .dropped_said
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(10));
        if self.dropped > 0 && (due || now) {
            log(&format!(
                "dropped {} connections still in their handshake, the oldest each time, to \
                 stay within {} pending (a flood of connections that do not authenticate?)",
                self.dropped, cfg.max_pending
            ));
            self.dropped = 0;
            self.dropped_said = Some(Instant::now());
        }
    }
}

/// Decrements the session count however a session ends.
struct SessionCount(Arc<AtomicUsize>);

impl Drop for SessionCount {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers an error on a nonblocking socket, best effort: a client that does not read
/// cannot hold the handshake thread.
fn refuse(mut stream: TcpStream, message: &str) {
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
    a: Authenticated,
    cfg: &ServeConfig,
    stop: &AtomicBool,
    log: &Log,
) -> Result<String, String> {
    let Authenticated {
        stream: mut s,
        from,
        id,
        deadline: handshake_end,
        welcome,
    } = a;
    let deadline = Instant::now() + cfg.session_time;
    s.set_nonblocking(false)
        .and_then(|()| s.set_write_timeout(Some(Duration::from_secs(2))))
        .map_err(|e| e.to_string())?;
    proto::write_message(&mut s, &welcome).map_err(|e| e.to_string())?;
    // Open, within what is left of the handshake's deadline.
    let left = handshake_end.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(fail(&mut s, "no open within the handshake time".into()));
    }
    s.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
    let req = match proto::read_message::<Request>(&mut s) {
        Ok(Request::Open(req)) => req,
        Ok(Request::Close) => {
            let _ = proto::write_message(&mut s, &Reply::Closed);
            return Ok("closed before opening".into());
        }
        Ok(_) => return Err(fail(&mut s, "expected open once authenticated".into())),
        Err(ProtoError::Closed) => return Err("the client closed the connection".into()),
        Err(ProtoError::TimedOut) => {
            return Err(fail(&mut s, "no open within the handshake time".into()))
        }
        Err(e) => return Err(fail(&mut s, format!("{e}; closing this session"))),
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
    await_close(&mut s, deadline, cfg, stop)
}

/// Waits for close, the session's time limit, or the server's stop (polled); what the
/// session ended with.
fn await_close(
    s: &mut TcpStream,
    deadline: Instant,
    cfg: &ServeConfig,
    stop: &AtomicBool,
) -> Result<String, String> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(fail(s, "the server is stopping".into()));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(fail(
                s,
                format!(
                    "session time limit of {:.0} s reached; measurement traffic is no longer \
                     answered",
                    cfg.session_time.as_secs_f64()
                ),
            ));
        }
        s.set_read_timeout(Some(left.min(Duration::from_millis(200))))
            .map_err(|e| e.to_string())?;
        match proto::read_message::<Request>(s) {
            Ok(Request::Close) => {
                let _ = proto::write_message(s, &Reply::Closed);
                return Ok("closed by the client".into());
            }
            Ok(_) => return Err(fail(s, "only close is expected once opened".into())),
            Err(ProtoError::TimedOut) => {}
            Err(ProtoError::Closed) => return Ok("the client went away".into()),
            Err(e) => return Err(fail(s, format!("{e}; closing this session"))),
        }
    }
}

/// The address measurement sockets bind: the one the control connection came in on, so
/// a server listening on 0.0.0.0 answers on the interface the client used.
fn listen_ip(s: &TcpStream, cfg: &ServeConfig) -> IpAddr {
    s.local_addr().map(|a| a.ip()).unwrap_or(cfg.listen.ip())
}
