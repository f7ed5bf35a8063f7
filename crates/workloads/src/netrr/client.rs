//! The measuring side: sends requests, times each round trip into an HDR histogram.
//!
//! - **Closed loop** (`rate=0`): one request in flight; the next is sent as soon as the
//!   reply arrives. The round trip is timed from just before `send` to just after `recv`.
//! - **Open loop** (`rate=N`): request `i` is *scheduled* at `start + i/N` and sent then
//!   (or as soon as the sender can, when it is late) by a sender thread, while this
//!   thread receives. The round trip is timed from the scheduled time, not the actual
//!   send, so a stall delays every request scheduled during it and shows in the tail
//!   instead of being left out (coordinated omission, as wrk2 and HdrHistogram describe).
//!
//! Every request carries its sequence number in its first bytes (as many of 8 as `size`
//! allows) and the reply echoes it; a reply of an earlier request (a UDP reply that came
//! after its timeout) is discarded. A UDP request unanswered after `timeout` is counted in
//! `lost` and not waited on. When [`DEAD_AFTER`] timeouts pass in a row without any reply,
//! the peer is taken as not answering and the measurement fails, so the bound on a silent
//! peer is `DEAD_AFTER × timeout`.
//!
//! The histogram's range is fixed (1 ns to 60 s, 3 significant digits; about 200 KiB), so
//! memory does not grow with the duration; longer values are clamped to 60 s.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::error::NetrrError;
use super::ns::{enter_netns, pin_self};
use super::sock::{is_timeout, Conn, Proto};

/// Timeouts in a row without a reply after which the peer counts as not answering.
pub const DEAD_AFTER: u32 = 4;

/// Largest recordable round trip, ns.
const HIST_MAX_NS: u64 = 60_000_000_000;

/// What the client does.
#[derive(Clone, Debug)]
pub(crate) struct ClientPlan {
    pub proto: Proto,
    pub size: usize,
    /// Requests per second; 0: closed loop.
    pub rate: f64,
    pub warmup: u64,
    pub duration: Duration,
    pub timeout: Duration,
    pub cpu: Option<u32>,
    pub netns: String,
    pub bind: IpAddr,
    pub target: SocketAddr,
}

/// What the client measured.
#[derive(Debug)]
pub(crate) struct ClientResult {
    pub rtt: Histogram<u64>,
    /// Answered requests in the timed window.
    pub exchanges: u64,
    /// Requests sent in the timed window and never answered in time.
    pub lost: u64,
    /// Requests of the warm-up never answered in time (each cost a timeout's wait).
    pub warmup_lost: u64,
    pub window: Duration,
    /// Open loop: how late the sender was at worst against its schedule.
    pub max_send_lag: Option<Duration>,
}

pub(crate) fn new_histogram() -> Histogram<u64> {
    // Constant bounds that hdrhistogram accepts; every client test exercises this.
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("constant histogram bounds are valid")
}

fn tag(buf: &mut [u8], seq: u64) {
    let n = buf.len().min(8);
    buf[..n].copy_from_slice(&seq.to_le_bytes()[..n]);
}

fn read_tag(buf: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = buf.len().min(8);
    b[..n].copy_from_slice(&buf[..n]);
    u64::from_le_bytes(b)
}

fn mask(size: usize) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    }
}

/// How long a TCP connect may take: setup, not measurement, so at least long enough for
/// one SYN retransmission (1 s) on a path whose link has only just come up.
pub(crate) fn connect_timeout(timeout: Duration) -> Duration {
    timeout.max(Duration::from_secs(3))
}

/// Runs the client on the calling thread (which it moves into the client's namespace, so
/// call it from a thread of its own). `window_marks` is called when the timed window
/// starts and when it ends.
pub(crate) fn run(
    plan: &ClientPlan,
    stop: &AtomicBool,
    window_marks: &mut dyn FnMut(),
) -> Result<ClientResult, NetrrError> {
    enter_netns(&plan.netns)?;
    pin_self(plan.cpu)?;
    let conn = Conn::connect(
        plan.proto,
        plan.bind,
        plan.target,
        connect_timeout(plan.timeout),
    )
    .map_err(|e| {
        format!(
            "cannot connect {} from {} to {}: {e}",
            plan.proto.name(),
            plan.bind,
            plan.target
        )
    })?;
    conn.set_timeout(plan.timeout)
        .map_err(|e| format!("cannot set the socket timeout: {e}"))?;
    if plan.rate > 0.0 {
        open_loop(plan, conn, stop, window_marks)
    } else {
        closed_loop(plan, conn, stop, window_marks)
    }
}

fn no_answer(plan: &ClientPlan) -> String {
    format!(
        "the peer {} did not answer {} {} requests in a row ({} ms timeout each): is the \
         responder running and the path up?",
        plan.target,
        DEAD_AFTER,
        plan.proto.name(),
        plan.timeout.as_millis()
    )
}

fn io_failure(plan: &ClientPlan, what: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::ConnectionRefused {
        format!(
            "{} {what}: {e} (nothing listens on {})",
            plan.target, plan.target
        )
    } else {
        format!("{} {what}: {e}", plan.target)
    }
}

fn closed_loop(
    plan: &ClientPlan,
    mut conn: Conn,
    stop: &AtomicBool,
    window_marks: &mut dyn FnMut(),
) -> Result<ClientResult, NetrrError> {
    let mut rtt = new_histogram();
    let mut out = vec![0u8; plan.size];
    let mut back = vec![0u8; plan.size.max(1) + 1];
    let m = mask(plan.size);
    let (mut exchanges, mut lost, mut warmup_lost) = (0u64, 0u64, 0u64);
    let mut silent = 0u32;
    let mut seq = 0u64;
    let mut window_start: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(NetrrError::Interrupted);
        }
        let timed = seq >= plan.warmup;
        if timed && window_start.is_none() {
            window_marks();
            window_start = Some(Instant::now());
        }
        if let Some(t) = window_start {
            if t.elapsed() >= plan.duration {
                break;
            }
        }
        tag(&mut out, seq);
        let t0 = Instant::now();
        conn.send(&out).map_err(|e| io_failure(plan, "send", &e))?;
        let answered = loop {
            let want = if plan.proto == Proto::Tcp {
                plan.size
            } else {
                back.len()
            };
            match conn.recv(&mut back[..want]) {
                Ok(n) if n == plan.size && read_tag(&back[..n]) == seq & m => break true,
                Ok(_) => continue,
                Err(e) if is_timeout(&e) && plan.proto == Proto::Udp => break false,
                Err(e) if is_timeout(&e) => {
                    silent += 1;
                    if silent >= DEAD_AFTER {
                        return Err(no_answer(plan).into());
                    }
                }
                Err(e) => return Err(io_failure(plan, "receive", &e).into()),
            }
        };
        let t1 = Instant::now();
        if answered {
            silent = 0;
            if timed {
                rtt.saturating_record((t1 - t0).as_nanos().max(1) as u64);
                exchanges += 1;
            }
        } else {
            silent += 1;
            if timed {
                lost += 1;
            } else {
                warmup_lost += 1;
            }
            if silent >= DEAD_AFTER {
                return Err(no_answer(plan).into());
            }
        }
        seq += 1;
    }
    window_marks();
    Ok(ClientResult {
        rtt,
        exchanges,
        lost,
        warmup_lost,
        window: window_start.map(|t| t.elapsed()).unwrap_or_default(),
        max_send_lag: None,
    })
}

/// Sleeps until `t`, the last stretch spinning so the send is on time.
fn wait_until(t: Instant) {
    const SPIN: Duration = Duration::from_micros(100);
    let now = Instant::now();
    if t > now + SPIN {
        std::thread::sleep(t - now - SPIN);
    }
    while Instant::now() < t {
        std::hint::spin_loop();
    }
}

/// When each request of an open loop is due.
#[derive(Clone, Copy)]
struct Schedule {
    start: Instant,
    interval: Duration,
    /// Requests in all, warm-up included.
    total: u64,
}

impl Schedule {
    fn due(&self, seq: u64) -> Instant {
        self.start + self.interval.mul_f64(seq as f64)
    }
}

/// What the sender and the receiver of an open loop tell each other.
#[derive(Default)]
struct Progress {
    /// Requests sent so far.
    sent: AtomicU64,
    /// The sender has sent them all (or stopped).
    done: AtomicBool,
    /// Either side failed; the other stops too.
    failed: AtomicBool,
}

fn open_loop(
    plan: &ClientPlan,
    mut conn: Conn,
    stop: &AtomicBool,
    window_marks: &mut dyn FnMut(),
) -> Result<ClientResult, NetrrError> {
    if plan.size < 8 {
        return Err(format!(
            "open loop (rate={}) needs size >= 8 to carry each request's sequence number",
            plan.rate
        )
        .into());
    }
    let interval = Duration::from_secs_f64(1.0 / plan.rate);
    let total = plan.warmup + (plan.duration.as_secs_f64() * plan.rate).ceil() as u64;
    let sender_conn = conn
        .try_clone()
        .map_err(|e| format!("cannot share the socket with the sender: {e}"))?;
    let start = Instant::now() + Duration::from_millis(1);
    let schedule = Schedule {
        start,
        interval,
        total,
    };
    let (size, cpu) = (plan.size, plan.cpu);
    let progress = Progress::default();
    let shared = &progress;
    let mut rtt = new_histogram();
    let result = std::thread::scope(|scope| {
        let sender =
            scope.spawn(move || send_requests(sender_conn, schedule, size, cpu, stop, shared));
        let outcome = receive_answers(
            plan,
            &mut conn,
            schedule,
            stop,
            shared,
            &mut rtt,
            window_marks,
        );
        if outcome.is_err() {
            shared.failed.store(true, Ordering::Relaxed);
        }
        let lag = sender
            .join()
            .unwrap_or_else(|_| Err("the sender thread panicked".into()));
        outcome.and(lag.map_err(NetrrError::from))
    });
    window_marks();
    let max_lag = result?;
    let measured = rtt.len();
    let window_sent = progress
        .sent
        .load(Ordering::Acquire)
        .saturating_sub(plan.warmup);
    Ok(ClientResult {
        exchanges: measured,
        lost: window_sent.saturating_sub(measured),
        // Open loop does not wait on a lost request, so warm-up losses cost nothing.
        warmup_lost: 0,
        rtt,
        window: plan.duration,
        max_send_lag: Some(max_lag),
    })
}

/// The sender thread: each request at its due time, whatever the answers do. Returns the
/// worst lateness of a send.
fn send_requests(
    mut conn: Conn,
    schedule: Schedule,
    size: usize,
    cpu: Option<u32>,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<Duration, String> {
    let _ = pin_self(cpu);
    let mut buf = vec![0u8; size];
    let mut max_lag = Duration::ZERO;
    for seq in 0..schedule.total {
        if stop.load(Ordering::Relaxed) || progress.failed.load(Ordering::Relaxed) {
            break;
        }
        let at = schedule.due(seq);
        wait_until(at);
        max_lag = max_lag.max(Instant::now().saturating_duration_since(at));
        tag(&mut buf, seq);
        if let Err(e) = conn.send(&buf) {
            if !is_timeout(&e) {
                progress.failed.store(true, Ordering::Relaxed);
                return Err(format!("send: {e}"));
            }
        }
        progress.sent.store(seq + 1, Ordering::Release);
    }
    progress.done.store(true, Ordering::Release);
    Ok(max_lag)
}

/// The receiving side: records each answer's round trip from its request's due time,
/// until every sent request is answered or lost, or the peer falls silent.
fn receive_answers(
    plan: &ClientPlan,
    conn: &mut Conn,
    schedule: Schedule,
    stop: &AtomicBool,
    progress: &Progress,
    rtt: &mut Histogram<u64>,
    window_marks: &mut dyn FnMut(),
) -> Result<(), NetrrError> {
    let size = plan.size;
    // The measured window opens once the warm-up requests are due.
    let window_start = schedule.due(plan.warmup);
    let mut received = 0u64;
    let mut back = vec![0u8; size + 1];
    let mut silent = 0u32;
    let mut marked = false;
    loop {
        if stop.load(Ordering::Relaxed) {
            break Err(NetrrError::Interrupted);
        }
        if !marked && Instant::now() >= window_start {
            window_marks();
            marked = true;
        }
        let all_sent = progress.done.load(Ordering::Acquire);
        if all_sent && received >= progress.sent.load(Ordering::Acquire) {
            break Ok(());
        }
        let want = if plan.proto == Proto::Tcp {
            size
        } else {
            back.len()
        };
        match conn.recv(&mut back[..want]) {
            Ok(n) if n == size => {
                let now = Instant::now();
                silent = 0;
                let seq = read_tag(&back[..n]);
                if seq >= schedule.total {
                    continue;
                }
                let at = schedule.due(seq);
                if seq >= plan.warmup {
                    rtt.saturating_record(
                        now.saturating_duration_since(at).as_nanos().max(1) as u64
                    );
                }
                received += 1;
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {
                if all_sent {
                    // Whatever is still out after a full timeout is lost.
                    break Ok(());
                }
                silent += 1;
                if silent >= DEAD_AFTER {
                    progress.failed.store(true, Ordering::Relaxed);
                    break Err(no_answer(plan).into());
                }
            }
            Err(e) => {
                progress.failed.store(true, Ordering::Relaxed);
                break Err(io_failure(plan, "receive", &e).into());
            }
        }
    }
}
