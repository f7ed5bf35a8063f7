//! The two loops of a ping-pong: ping drives, counts and times; pong answers. Also what
//! both the thread and the process runner share: the measurement's plan and how the two
//! sides' endings combine into one result.

use std::sync::atomic::Ordering;

use hdrhistogram::Histogram;
use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
use perflab_core::{monotonic_ns, MeasureCtx, ThreadTracker, WorkloadError};

use super::channel::{Endpoint, Msg};
use super::rtt_batch::RttBatch;

/// How often a thread notes its CPU: often enough to see a migration, rarely enough to
/// stay out of the measurement.
const SAMPLE_EVERY_NS: u64 = 10_000_000;
/// A power of two, tested with a mask.
const PONG_SAMPLE_EVERY: u64 = 4096;
/// Without per-round-trip timing, the clock (deadline, stop flag) is read this often.
const CHECK_MASK: u64 = 63;
/// The largest round trip the histogram holds (longer ones are clamped to it).
const HIST_MAX_NS: u64 = 60_000_000_000;

#[derive(Clone, Copy, Debug)]
pub(crate) struct PingPlan {
    pub cpu: u32,
    pub warmup_ns: u64,
    pub duration_ns: u64,
    pub work_ns: u64,
    /// Time every Nth round trip; 0 = none, 1 = every one.
    pub rtt_every: u64,
}

#[derive(Debug)]
pub(crate) struct PingResult {
    pub round_trips: u64,
    pub window_ns: u64,
    pub rtt: Histogram<u64>,
}

/// Why one side ended without a result.
#[derive(Debug)]
pub(crate) enum SideError {
    /// The other side sent Stop (it failed, or a supervisor saw it die), or its pipe is
    /// closed.
    PeerStopped,
    Interrupted,
    Failed(String),
}

impl From<SideError> for WorkloadError {
    fn from(e: SideError) -> Self {
        match e {
            SideError::PeerStopped => {
                WorkloadError::Failed("ctxsw: the other side stopped before the end".into())
            }
            SideError::Interrupted => WorkloadError::Interrupted,
            SideError::Failed(m) => WorkloadError::Failed(m),
        }
    }
}

/// Everything one measurement needs besides the mechanism.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunSpec {
    pub plan: PingPlan,
    pub cpu_b: u32,
    pub process: bool,
}

/// The ping side's result, or the error that explains it: when ping only saw its peer
/// stop, the peer's own error says why.
pub(crate) fn combine(
    ping: Result<PingResult, SideError>,
    pong: Result<(), SideError>,
) -> Result<PingResult, WorkloadError> {
    match (ping, pong) {
        (Ok(r), _) => Ok(r),
        (Err(SideError::PeerStopped), Err(e)) => Err(e.into()),
        (Err(e), _) => Err(e.into()),
    }
}

/// Pins the calling thread to one CPU.
pub(crate) fn pin_self(role: &str, cpu: u32) -> Result<(), SideError> {
    crate::affinity::pin(0, &[cpu]).map_err(|e| {
        SideError::Failed(format!(
            "ctxsw: cannot pin the {role} side to CPU {cpu}: {e}"
        ))
    })
}

fn spin_ns(ns: u64) {
    let end = monotonic_ns() + ns;
    while monotonic_ns() < end {
        std::hint::spin_loop();
    }
}

fn io_err(role: &str, e: std::io::Error) -> SideError {
    SideError::Failed(format!("ctxsw {role}: {e}"))
}

/// A send that finds the peer's pipe closed (EPIPE: the pong process died between two
/// round trips) means the peer is gone, as end-of-file on receive does; the peer's own
/// error, not "Broken pipe", then says why.
fn send_err(role: &str, e: std::io::Error) -> SideError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        SideError::PeerStopped
    } else {
        io_err(role, e)
    }
}

/// Blocks SIGPIPE for the calling thread, so that writing to a dead peer's pipe returns
/// EPIPE instead of killing the process whatever the process's disposition (the perflab
/// binary ignores SIGPIPE; a program using this crate may not). Only for the side threads
/// and the pong child, which end after their side does, so the pending signal is discarded
/// with them.
fn block_sigpipe() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGPIPE);
    // Cannot fail with a valid `how`; without the mask a dead peer only fails loudlier.
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
}

/// Sends Stop to the peer however the holder leaves (return, error or unwind), so the
/// peer never waits forever.
struct StopOnDrop<'a, E: Endpoint>(&'a E);

impl<E: Endpoint> Drop for StopOnDrop<'_, E> {
    fn drop(&mut self) {
        // The peer may already be gone; nothing more can be done about it here.
        let _ = self.0.send(Msg::Stop);
    }
}

/// The driving side: pins itself, waits for pong to be ready, warms up, then counts and
/// times round trips over its own window.
pub(crate) fn ping<E: Endpoint>(
    end: &E,
    plan: PingPlan,
    ctx: &MeasureCtx,
) -> Result<PingResult, SideError> {
    block_sigpipe();
    let _stop = StopOnDrop(end);
    pin_self("ping", plan.cpu)?;
    let mut probe = ctx.threads.begin("ping", Some(plan.cpu));
    let res = ping_loop(end, plan, ctx, &mut probe);
    probe.finish(&ctx.threads, None);
    res
}

/// CLOCK_MONOTONIC in ns, inlined into the loops (`perflab_core::monotonic_ns` is a call
/// into another crate's code, away from the loop's).
#[inline(always)]
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One round trip. Inlined, with the ends' `send` and `recv`: the loop then runs from a
/// few cache lines of code, where calls into functions spread over the binary were about
/// 90 ns of a same-CPU round trip's CPU time against 40 for a C loop's (perf record,
/// 2-vCPU guest): their code is cold again after each context switch.
#[inline(always)]
fn round_trip<E: Endpoint>(end: &E, work_ns: u64) -> Result<(), SideError> {
    if work_ns > 0 {
        spin_ns(work_ns);
    }
    end.send(Msg::Go).map_err(|e| send_err("ping send", e))?;
    match end.recv().map_err(|e| io_err("ping receive", e))? {
        Msg::Go => Ok(()),
        Msg::Stop => Err(SideError::PeerStopped),
    }
}

/// Waits for pong's hello, then ping-pongs untimed for the warm-up, sampling the CPU.
fn warm_up<E: Endpoint>(
    end: &E,
    plan: PingPlan,
    ctx: &MeasureCtx,
    probe: &mut perflab_core::ThreadProbe,
) -> Result<(), SideError> {
    // Pong announces itself once pinned.
    match end.recv().map_err(|e| io_err("ping receive", e))? {
        Msg::Go => {}
        Msg::Stop => return Err(SideError::PeerStopped),
    }

    let warm_end = monotonic_ns() + plan.warmup_ns;
    let mut next_sample = 0;
    loop {
        let t = monotonic_ns();
        if t >= warm_end {
            break;
        }
        if ctx.stop.load(Ordering::Relaxed) {
            return Err(SideError::Interrupted);
        }
        if t >= next_sample {
            probe.sample_cpu();
            next_sample = t + SAMPLE_EVERY_NS;
        }
        round_trip(end, plan.work_ns)?;
    }
    Ok(())
}

fn ping_loop<E: Endpoint>(
    end: &E,
    plan: PingPlan,
    ctx: &MeasureCtx,
    probe: &mut perflab_core::ThreadProbe,
) -> Result<PingResult, SideError> {
    let stopping = || ctx.stop.load(Ordering::Relaxed);
    let mut rtt = Histogram::<u64>::new_with_bounds(1, HIST_MAX_NS, 3)
        .map_err(|e| SideError::Failed(format!("ctxsw: histogram: {e}")))?;
    let mut batch = RttBatch::new();

    warm_up(end, plan, ctx, probe)?;
    let every = plan.rtt_every;
    let check_each = every == 1 || plan.work_ns > 0;
    let t_start = now_ns();
    let deadline = t_start + plan.duration_ns;
    let mut next_sample = t_start + SAMPLE_EVERY_NS;
    let mut prev = t_start;
    let mut count: u64 = 0;
    let mut countdown = every;
    let t_end = loop {
        // Timing every round trip chains the timestamps: one clock read per round trip.
        let timed = if every == 1 {
            true
        } else if every > 1 {
            countdown -= 1;
            if countdown == 0 {
                countdown = every;
                prev = now_ns();
                true
            } else {
                false
            }
        } else {
            false
        };
        round_trip(end, plan.work_ns)?;
        count += 1;
        if !(timed || check_each || count & CHECK_MASK == 0) {
            continue;
        }
        let t = now_ns();
        let full = timed && batch.push(t - prev);
        prev = t;
        if t >= deadline {
            break t;
        }
        if full {
            batch.flush(&mut rtt);
            // Keep the recording out of the next round trip's time.
            prev = now_ns();
        }
        if stopping() {
            return Err(SideError::Interrupted);
        }
        if t >= next_sample {
            probe.sample_cpu();
            next_sample = t + SAMPLE_EVERY_NS;
            // Keep the sampling call out of the next round trip's time.
            prev = now_ns();
        }
    };
    batch.flush(&mut rtt);
    Ok(PingResult {
        round_trips: count,
        window_ns: t_end - t_start,
        rtt,
    })
}

/// The answering side: pins itself, says it is ready, and answers until Stop. Records
/// its thread into `tracker`. Returns how many round trips it answered.
pub(crate) fn pong<E: Endpoint>(
    end: &E,
    cpu: u32,
    work_ns: u64,
    tracker: &ThreadTracker,
) -> Result<u64, SideError> {
    block_sigpipe();
    let _stop = StopOnDrop(end);
    pin_self("pong", cpu)?;
    let mut probe = tracker.begin("pong", Some(cpu));
    let res = pong_loop(end, work_ns, &mut probe);
    probe.finish(tracker, None);
    res
}

fn pong_loop<E: Endpoint>(
    end: &E,
    work_ns: u64,
    probe: &mut perflab_core::ThreadProbe,
) -> Result<u64, SideError> {
    end.send(Msg::Go).map_err(|e| send_err("pong send", e))?;
    let mut n: u64 = 0;
    loop {
        match end.recv().map_err(|e| io_err("pong receive", e))? {
            Msg::Stop => return Ok(n),
            Msg::Go => {}
        }
        if work_ns > 0 {
            spin_ns(work_ns);
        }
        end.send(Msg::Go).map_err(|e| send_err("pong send", e))?;
        n += 1;
        if n & (PONG_SAMPLE_EVERY - 1) == 0 {
            probe.sample_cpu();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctxsw::channel::Pair;
    use crate::Mechanism;

    #[test]
    fn sending_to_a_pong_that_is_gone_is_a_peer_stop() {
        // What ping sees when the pong process died between two round trips: its send,
        // not its receive, is the first to notice. Combined with the pong's exit status,
        // that must say what happened to the pong, not "Broken pipe".
        let Ok(Pair::Pipe(ping_end, pong_end)) = Pair::new(Mechanism::Pipe, false) else {
            panic!("pipe pair");
        };
        drop(pong_end);
        block_sigpipe();
        let Err(seen) = round_trip(&ping_end, 0) else {
            panic!("a send into a closed pipe succeeded");
        };
        assert!(matches!(seen, SideError::PeerStopped), "{seen:?}");
        let gone = SideError::Failed("the pong process was killed".into());
        let e = combine(Err(seen), Err(gone));
        assert!(matches!(e, Err(WorkloadError::Failed(m)) if m.contains("pong")));
    }
}
