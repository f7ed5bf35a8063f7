//! `netrr`: request/response latency over a network path, the measurement of seed 001.
//!
//! A client sends a request of `size` bytes over UDP (default) or TCP and waits for the
//! echo; every round trip goes into an HDR histogram (`rtt`, ns). The responder is a
//! thread of perflab itself, or `perflab serve` on another host (`peer=ADDR:PORT`).
//!
//! # Where the two sides run
//!
//! - A `netpath=NAME` knob applied for the variant publishes its path
//!   ([`perflab_core::NetPathFacts`]): each end's namespace (a file `setns(2)` opens;
//!   empty: perflab's own namespace) and address, or a guest's `perflab serve`. The responder thread enters the server's
//!   namespace and listens on the server address; the client thread enters the client's
//!   and binds the client address. Each side's sockets are made by a thread that entered
//!   its namespace first, because `setns` acts on one thread only.
//! - No knob and no `peer`: both sides on host loopback (127.0.0.1).
//! - `peer=ADDR[:PORT]` with `token=` (or `PERFLAB_SERVE_TOKEN`): a session on a remote
//!   `perflab serve`, which answers on a port it names for this session only.
//!
//! # Load
//!
//! `load_streams=N` opens N bulk TCP streams over the same path between the same
//! namespaces (to the remote serve's sink with a peer) for the whole measurement, and
//! `hogs=CPULIST` spins one busy thread on each listed CPU. The streams' throughput over
//! the timed window is reported (`load_mib_s`) so the load is known, not assumed.
//!
//! # Primary metric
//!
//! `rtt_p50_us`. The median is the figure a shared machine reproduces: a handful of
//! multi-millisecond round trips (a vCPU preempted by the host) move the average by
//! several percent from one run to the next and would make every comparison of averages
//! noisy; they belong to the tail columns (p99, p99.9, max), which are reported beside
//! it. The average is kept too (`rtt_avg_us`), as the seed's table has it.

pub mod auth;
mod client;
mod error;
mod handshake;
mod load;
mod ns;
mod output;
mod peer_addr;
mod peer_guard;
mod plan_check;
pub mod proto;
mod remote;
mod responder;
pub mod serve;
#[cfg(test)]
mod serve_tests;
mod sock;
#[cfg(test)]
mod tests;
mod token_strength;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perflab_core::net_facts::{self, NetPathFacts, NetServer};
use perflab_core::{Kind, LatencyTableHints, ReportHints, WorkloadHints};
use perflab_core::{
    MeasureCtx, Needs, ParamError, ParamKind, ParamSpec, Params, SecretValue, Workload,
    WorkloadError, WorkloadInfo, WorkloadOutput,
};

pub use client::DEAD_AFTER;
pub use remote::{parse_peer, DEFAULT_PORT};
pub use sock::Proto;

use client::{ClientPlan, ClientResult};
use error::NetrrError;
use load::Background;
use output::{output, Load};
use plan_check::hog_cpus;
use proto::OpenRequest;
use remote::RemoteSession;
use responder::Placement;

/// The netrr workload.
#[derive(Debug, Default)]
pub struct Netrr;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "proto",
        role: perflab_core::ParamRole::Plain,
        help: "transport of the requests: udp or tcp (TCP_NODELAY)",
        kind: ParamKind::Choice(Proto::NAMES),
        default: Some("udp"),
    },
    ParamSpec {
        name: "size",
        role: perflab_core::ParamRole::SizeAxis,
        help: "bytes per request and per reply",
        kind: ParamKind::Size {
            min: 1,
            max: proto::MAX_DATA_SIZE as u64,
        },
        default: Some("64"),
    },
    ParamSpec {
        name: "rate",
        role: perflab_core::ParamRole::Plain,
        help: "requests per second, sent on a fixed schedule with latency counted from the \
               scheduled time (open loop); 0: the next request leaves when the reply arrives \
               (closed loop)",
        kind: ParamKind::Float {
            min: 0.0,
            max: 10_000_000.0,
        },
        default: Some("0"),
    },
    crate::common_params::TIMED_WINDOW,
    ParamSpec {
        name: "warmup",
        role: perflab_core::ParamRole::Plain,
        help: "exchanges before the timed window, not counted",
        kind: ParamKind::Int {
            min: 0,
            max: 100_000_000,
        },
        default: Some("1000"),
    },
    ParamSpec {
        name: "timeout",
        role: perflab_core::ParamRole::Plain,
        help: "how long to wait for one reply: a UDP request unanswered by then counts as \
               lost; 4 in a row without any reply end the measurement with an error",
        kind: ParamKind::Duration {
            min_s: 0.001,
            max_s: 60.0,
        },
        default: Some("0.5s"),
    },
    ParamSpec {
        name: "client_cpu",
        role: perflab_core::ParamRole::Cpu,
        help: "CPU of the client thread (-1: not pinned)",
        kind: ParamKind::Int {
            min: -1,
            max: 65535,
        },
        default: Some("-1"),
    },
    ParamSpec {
        name: "server_cpu",
        role: perflab_core::ParamRole::Cpu,
        help: "CPU of the in-process responder thread (-1: not pinned; ignored with peer)",
        kind: ParamKind::Int {
            min: -1,
            max: 65535,
        },
        default: Some("-1"),
    },
    ParamSpec {
        name: "load_streams",
        role: perflab_core::ParamRole::Plain,
        help: "bulk TCP streams over the same path during the measurement (the seed's \
               netperf load); their throughput is reported as load_mib_s",
        kind: ParamKind::Int { min: 0, max: 16 },
        default: Some("0"),
    },
    ParamSpec {
        name: "hogs",
        role: perflab_core::ParamRole::Plain,
        help: "CPUs to keep busy with one spinning thread each during the measurement, \
               e.g. 1 or 0-3 (empty: none)",
        kind: ParamKind::Text { max_len: 256 },
        default: Some(""),
    },
    ParamSpec {
        name: "peer",
        role: perflab_core::ParamRole::Plain,
        help: "a remote `perflab serve` to measure against: ADDR[:PORT] or host:ADDR \
               (empty: the responder runs inside perflab)",
        kind: ParamKind::Text { max_len: 256 },
        default: Some(""),
    },
    ParamSpec {
        name: "token",
        role: perflab_core::ParamRole::Plain,
        help: "the peer's shared token (else $PERFLAB_SERVE_TOKEN); a run stores and \
               prints only its fingerprint, hmac:xxxxxxxxxxxxxxxx",
        kind: ParamKind::Secret { max_len: 256 },
        default: Some(""),
    },
];

static INFO: WorkloadInfo = WorkloadInfo {
    kind: Kind::Workload,
    name: "netrr",
    help: "Request/response ping-pong over UDP or TCP on host loopback, a path a netpath \
           knob built, or to a remote `perflab serve` (peer=); closed loop or open loop at \
           rate=N. Reports the rtt histogram (ns), rtt_{min,avg,max,stddev,p50,p90,p99,\
           p99_9,p99_99}_us, transactions_per_s and lost; load_streams and hogs add \
           background load.",
    params: PARAMS,
    needs: Needs::NONE,
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "rtt_p50_us",
        result_title: None,
        latency_table: Some(LatencyTableHints {
            histogram: "rtt",
            softirqs: "softirqs",
        }),
        workers: perflab_core::note::Workers::Threads,
    }),
};

/// `client_cpu` or `server_cpu`: `None` for -1 (not pinned).
fn cpu_param(v: i64) -> Option<u32> {
    u32::try_from(v).ok()
}

/// The parameters a measurement reads, read once before anything starts, so a name the
/// code misspells fails the run at once instead of measuring with a made-up value.
struct Settings {
    proto: String,
    size: i64,
    rate: f64,
    warmup: i64,
    duration: f64,
    timeout: f64,
    client_cpu: Option<u32>,
    server_cpu: Option<u32>,
    load_streams: i64,
    hogs: String,
    peer: String,
    token: SecretValue,
}

impl Settings {
    fn read(params: &Params) -> Result<Self, ParamError> {
        Ok(Self {
            proto: params.str("proto")?.to_string(),
            size: params.int("size")?,
            rate: params.float("rate")?,
            warmup: params.int("warmup")?,
            duration: params.seconds("duration")?,
            timeout: params.seconds("timeout")?,
            client_cpu: cpu_param(params.int("client_cpu")?),
            server_cpu: cpu_param(params.int("server_cpu")?),
            load_streams: params.int("load_streams")?,
            hogs: params.str("hogs")?.to_string(),
            peer: params.str("peer")?.trim().to_string(),
            token: params.secret("token")?,
        })
    }
}

impl Workload for Netrr {
    fn info(&self) -> &'static WorkloadInfo {
        &INFO
    }

    /// A malformed `hogs` list or `peer`, or a peer without a token, is refused with the
    /// plan instead of failing every measurement.
    fn validate(&self, params: &Params) -> Result<(), String> {
        plan_check::validate(params)?;
        plan_check::check_token(params, peer_token)
    }

    fn cpus(&self, params: &Params) -> Result<Vec<u32>, ParamError> {
        // A malformed hogs list is refused by validate(); here it pins nothing.
        let hogs = hog_cpus(params.str("hogs")?).unwrap_or_default();
        let mut cpus: Vec<u32> = [params.int("client_cpu")?, params.int("server_cpu")?]
            .into_iter()
            .filter_map(cpu_param)
            .chain(hogs)
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        Ok(cpus)
    }

    fn memory_bytes(&self, params: &Params) -> Result<u64, ParamError> {
        // Histogram, message buffers, and 128 KiB per load stream on each side.
        Ok((1 << 20)
            + 4 * params.int("size")?.max(0) as u64
            + params.int("load_streams")?.max(0) as u64 * (256 << 10))
    }

    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError> {
        if ctx.stopping() {
            return Err(WorkloadError::Interrupted);
        }
        let settings = Settings::read(params)?;
        measure(&settings, ctx).map_err(|e| match e {
            // A side may fail on its way out of a stop; the stop is what to report.
            _ if ctx.stopping() => WorkloadError::Interrupted,
            NetrrError::Interrupted => WorkloadError::Interrupted,
            NetrrError::Failed(why) => WorkloadError::Failed(format!("netrr: {why}")),
        })
    }
}

/// Where the two sides are, from the knob's facts, the peer parameter, or the default.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Route {
    Local {
        path: String,
        server_netns: String,
        client_netns: String,
        server_addr: IpAddr,
        client_addr: IpAddr,
    },
    /// A `perflab serve` answers: a remote host's (`peer=`), or the one in a guest that
    /// a `netpath=vm-*` knob booted (`net.peer`), reached from `netns` (empty: perflab's
    /// own) with sockets bound to `bind` (unspecified: any).
    Remote {
        path: String,
        peer: SocketAddr,
        token: String,
        netns: String,
        bind: Option<IpAddr>,
    },
}

fn route(s: &Settings, ctx: &MeasureCtx) -> Result<Route, NetrrError> {
    let peer = s.peer.as_str();
    if let Some(facts) = NetPathFacts::from_facts(&ctx.facts) {
        if !peer.is_empty() {
            let path = ctx.fact(net_facts::PATH).unwrap_or_default();
            return Err(format!(
                "peer={peer} and the netpath={path} knob both say where the server is; \
                 give one"
            )
            .into());
        }
        let NetPathFacts {
            path,
            client,
            server,
            ..
        } = facts?;
        return Ok(match server {
            NetServer::Guest(g) => Route::Remote {
                path,
                peer: g.peer,
                token: g.token,
                netns: client.netns,
                bind: Some(client.addr),
            },
            NetServer::Local(s) => Route::Local {
                path,
                server_netns: s.netns,
                client_netns: client.netns,
                server_addr: s.addr,
                client_addr: client.addr,
            },
        });
    }
    if peer.is_empty() {
        return Ok(Route::Local {
            path: "loopback".into(),
            server_netns: String::new(),
            client_netns: String::new(),
            server_addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
            client_addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
        });
    }
    let token = peer_token(&s.token)?;
    if token.is_empty() {
        return Err(plan_check::no_token(peer).into());
    }
    let peer = parse_peer(peer)?;
    Ok(Route::Remote {
        path: format!("host:{}", peer.ip()),
        peer,
        token,
        netns: String::new(),
        bind: None,
    })
}

/// The token for `peer=`: the parameter's secret, else `PERFLAB_SERVE_TOKEN`. A run
/// resumed by another process has only the token's fingerprint; the environment's token
/// is then used when it is the same token.
fn peer_token(token: &SecretValue) -> Result<String, NetrrError> {
    let env = || std::env::var("PERFLAB_SERVE_TOKEN").unwrap_or_default();
    match token {
        SecretValue::Known(t) if t.is_empty() => Ok(env()),
        SecretValue::Known(t) => Ok(t.clone()),
        SecretValue::FingerprintOnly(fp) if perflab_core::secret::matches(&env(), fp) => Ok(env()),
        SecretValue::FingerprintOnly(fp) => Err(format!(
            "this run stored only the token's fingerprint ({fp}), not the token: set \
             PERFLAB_SERVE_TOKEN to the token of the peer's `perflab serve` to go on{}",
            perflab_core::secret::key_note()
        )
        .into()),
    }
}

/// Byte counts of the load at the window's start and end.
type Marks = Arc<Mutex<Vec<(Instant, u64)>>>;

fn measure(cfg: &Settings, ctx: &MeasureCtx) -> Result<WorkloadOutput, NetrrError> {
    let shape = Shape::of(cfg)?;
    let hogs = hog_cpus(&cfg.hogs)?;
    let route = route(cfg, ctx)?;
    // Everything started from here on is stopped by its drop, on every path.
    let mut started = Started::default();
    let end = started.start(&route, cfg, &shape, ctx)?;
    started.bg.start_hogs(&hogs)?;
    let plan = ClientPlan {
        proto: shape.proto,
        size: shape.size,
        rate: cfg.rate,
        warmup: cfg.warmup.max(0) as u64,
        duration: shape.duration,
        timeout: shape.timeout,
        cpu: cfg.client_cpu,
        netns: end.netns,
        bind: end.bind,
        target: end.target,
    };
    // The load's bytes as they arrive at the sink when it is ours, else as sent.
    let counter = if started.bg.sink.is_some() {
        started.bg.received.clone()
    } else {
        started.bg.sent.clone()
    };
    let marks: Marks = Arc::new(Mutex::new(Vec::new()));
    let result = run_client(&plan, ctx, counter, marks.clone()).map_err(|e| started.explain(e))?;
    let notes = started.stop();
    let marks = marks.lock().map(|m| m.clone()).unwrap_or_default();
    let load = Load {
        streams: shape.streams,
        hogs: &hogs,
        marks: &marks,
    };
    Ok(output(&result, &plan, &end.path, &load, notes))
}

/// What the client sends, how long and how patiently, and the load beside it: the
/// settings made into the values the sides take.
struct Shape {
    proto: Proto,
    size: usize,
    streams: u32,
    timeout: Duration,
    duration: Duration,
}

impl Shape {
    fn of(cfg: &Settings) -> Result<Self, NetrrError> {
        let proto =
            Proto::from_name(&cfg.proto).ok_or_else(|| format!("unknown proto {:?}", cfg.proto))?;
        Ok(Self {
            proto,
            size: cfg.size.clamp(1, proto::MAX_DATA_SIZE as i64) as usize,
            streams: cfg.load_streams.clamp(0, 16) as u32,
            timeout: Duration::from_secs_f64(cfg.timeout.max(0.001)),
            duration: Duration::from_secs_f64(cfg.duration),
        })
    }
}

/// Where the client runs (namespace, address it binds) and whom it asks.
struct ClientEnd {
    netns: String,
    bind: IpAddr,
    target: SocketAddr,
    path: String,
}

/// Everything a measurement starts besides the client, and the notes made while starting
/// it. Dropping it stops all of it, the session first, then the responder, then the load.
#[derive(Default)]
struct Started {
    session: Option<RemoteSession>,
    echo: Option<responder::Running>,
    bg: Background,
    notes: Vec<String>,
}

impl Started {
    /// Starts the server side the route names, and the load; returns the client's end.
    fn start(
        &mut self,
        route: &Route,
        cfg: &Settings,
        shape: &Shape,
        ctx: &MeasureCtx,
    ) -> Result<ClientEnd, NetrrError> {
        match route {
            Route::Local {
                path,
                server_netns,
                client_netns,
                server_addr,
                client_addr,
            } => {
                let place = Placement {
                    netns: server_netns.clone(),
                    addr: *server_addr,
                    cpu: cfg.server_cpu,
                    allow: None,
                };
                let target = self.start_local(shape, &place, client_netns, *client_addr)?;
                Ok(ClientEnd {
                    netns: client_netns.clone(),
                    bind: *client_addr,
                    target,
                    path: path.clone(),
                })
            }
            Route::Remote {
                path,
                peer,
                token,
                netns,
                bind,
            } => {
                let (bind, target) = self.start_remote(shape, *peer, token, netns, *bind)?;
                if cfg.server_cpu.is_some() {
                    self.notes
                        .push("server_cpu is ignored with a remote peer".into());
                }
                self.notes.extend(guest_note(ctx));
                Ok(ClientEnd {
                    netns: netns.clone(),
                    bind,
                    target,
                    path: path.clone(),
                })
            }
        }
    }

    /// The responder thread in the server's namespace, and with load the sink beside it
    /// and the streams from the client's; returns the responder's address.
    fn start_local(
        &mut self,
        shape: &Shape,
        place: &Placement,
        client_netns: &str,
        client_addr: IpAddr,
    ) -> Result<SocketAddr, NetrrError> {
        let echo = responder::start_echo(shape.proto, shape.size, place)?;
        let target = SocketAddr::new(place.addr, echo.port);
        self.echo = Some(echo);
        if shape.streams > 0 {
            let sink = responder::start_sink(shape.streams, place, self.bg.received.clone())?;
            let sink_addr = SocketAddr::new(place.addr, sink.port);
            self.bg.sink = Some(sink);
            self.bg.start_streams(
                shape.streams,
                client_netns,
                client_addr,
                sink_addr,
                client::connect_timeout(shape.timeout),
            )?;
        }
        Ok(target)
    }

    /// A session on the peer's `perflab serve` long enough for the measurement, and with
    /// load the streams to its sink; returns the address the client binds and the
    /// session's data address.
    fn start_remote(
        &mut self,
        shape: &Shape,
        peer: SocketAddr,
        token: &str,
        netns: &str,
        bind: Option<IpAddr>,
    ) -> Result<(IpAddr, SocketAddr), NetrrError> {
        let req = OpenRequest {
            proto: shape.proto.name().into(),
            size: shape.size,
            load_streams: shape.streams,
        };
        let s = open_session(peer, token, req, netns, shape.timeout)?;
        let needed = shape.duration.as_secs_f64() + 5.0;
        if s.session_time_s < needed {
            return Err(format!(
                "the peer {peer} allows sessions of {:.0} s, this measurement needs about \
                 {needed:.0} s (start serve with a longer --session-time)",
                s.session_time_s
            )
            .into());
        }
        let bind = bind.unwrap_or_else(|| unspecified(s.data));
        if let Some(sink) = s.sink {
            let timeout = client::connect_timeout(shape.timeout);
            self.bg
                .start_streams(shape.streams, netns, bind, sink, timeout)?;
        }
        let data = s.data;
        self.session = Some(s);
        Ok((bind, data))
    }

    /// The client's error, with the responder's when it had stopped: a responder that
    /// failed explains a client that got no answer.
    fn explain(&mut self, e: NetrrError) -> NetrrError {
        let NetrrError::Failed(e) = e else { return e };
        match self.echo.take() {
            Some(r) if r.is_finished() => match r.finish() {
                Err(why) => format!("{e}; the responder had stopped: {why}").into(),
                Ok(()) => e.into(),
            },
            _ => e.into(),
        }
    }

    /// Stops the responder, the load and the session, in that order; returns the notes,
    /// with one about a session the peer did not close cleanly.
    fn stop(mut self) -> Vec<String> {
        drop(self.echo.take());
        self.bg.stop();
        if let Some(s) = self.session.take() {
            if let Err(e) = s.close() {
                self.notes
                    .push(format!("closing the session on the peer: {e}"));
            }
        }
        std::mem::take(&mut self.notes)
    }
}

/// Opens the control session from a thread inside `netns` (a socket belongs to the
/// namespace it was made in, and `setns` moves only the calling thread).
fn open_session(
    peer: SocketAddr,
    token: &str,
    req: OpenRequest,
    netns: &str,
    timeout: Duration,
) -> Result<RemoteSession, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            ns::enter_netns(netns)?;
            RemoteSession::open(peer, token, req, timeout)
        })
        .join()
        .unwrap_or_else(|_| Err("the session thread panicked".into()))
    })
}

fn unspecified(like: SocketAddr) -> IpAddr {
    match like {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
    }
}

/// Runs the client on a thread of its own (it enters the client's namespace).
fn run_client(
    plan: &ClientPlan,
    ctx: &MeasureCtx,
    counter: Arc<AtomicU64>,
    marks: Marks,
) -> Result<ClientResult, NetrrError> {
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut probe = ctx.threads.begin("client", plan.cpu);
            let mut mark = || {
                if let Ok(mut m) = marks.lock() {
                    m.push((Instant::now(), counter.load(Ordering::Relaxed)));
                }
            };
            let r = client::run(plan, &ctx.stop, &mut mark);
            probe.sample_cpu();
            probe.finish(&ctx.threads, None);
            r
        });
        h.join()
            .unwrap_or_else(|_| Err(NetrrError::Failed("the client thread panicked".into())))
    })
}

/// What the guest a `netpath=vm-*` knob booted says a reader must know (TCG), if any.
fn guest_note(ctx: &MeasureCtx) -> Option<String> {
    match NetPathFacts::from_facts(&ctx.facts)?.ok()?.server {
        NetServer::Guest(g) => g.note,
        NetServer::Local(_) => None,
    }
}
