//! Cross-check of `ctxsw` against the tool kernel engineers already trust:
//! `perf bench sched pipe -T` (two threads, one pipe each way, one op = one round trip).
//!
//! For each CPU pair both run in interleaved pairs, back to back, the order alternating from
//! pair to pair so a drift of the machine does not always favour the same side; the row is
//! the median of the pair ratios with its interval, judged within / OUTSIDE / undecided
//! against the tolerance, pairs added while undecided ([`crate::pairs`]).
//!
//! Placement of the peer: perf bench sched pipe has no CPU option (perf 6.1 here has only
//! `-l` and `-T`; later versions add `-G` cgroups and `-n` non-blocking, still no CPU
//! pinning), so:
//! - `a == b`: `taskset -c a`, which pins everything, as ctxsw does;
//! - `a != b`: `taskset -c a,b`, then, as soon as both worker threads show up in
//!   `/proc/<pid>/task`, each is pinned by its tid (the first-created worker, which reads
//!   first, to `b` like ctxsw's pong; the second to `a`). `/proc` is polled every 0.2 ms,
//!   so the workers run unpinned (both possibly on one CPU) for well under a millisecond
//!   of a multi-second run. `peer_pinned_after_ms` counts from spawning taskset and so
//!   includes perf's own start-up (9–12 ms here).
//!
//! The peer's loop count is sized from a short calibration run (10 000 loops) so that it
//! lasts about `duration_s`; perf's time includes creating and joining its threads, which
//! is negligible at that length.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perflab_core::SysRoot;
use perflab_workloads::Mechanism;

use crate::lab_side::{LabSide, LabSideError};
use crate::pairs::{self, Estimate, Judgement};
use crate::peer_tool::{self, PeerError, TASKSET_HINT};

/// One CPU pair measured by both tools. Rates are round trips per second.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossRow {
    pub a: u32,
    pub b: u32,
    /// Medians of each side's rates over the pairs.
    pub perflab_rate: f64,
    pub peer_rate: f64,
    /// The median of the pair ratios perflab / perf and its interval.
    pub estimate: Estimate,
    pub judgement: Judgement,
    /// (perflab, perf) rates of each pair in the order run; perf ran first on odd pairs.
    pub pairs: Vec<(f64, f64)>,
    /// For a != b: the longest it took, after perf started, to pin its workers by tid.
    pub peer_pinned_after_ms: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum CrossError {
    #[error(transparent)]
    Peer(#[from] PeerError),
    #[error("perflab ctxsw on CPUs {a},{b}: {source}")]
    Ctxsw {
        a: u32,
        b: u32,
        #[source]
        source: LabSideError,
    },
}

const CALIBRATION_LOOPS: u64 = 10_000;

/// Runs ctxsw (threads, `mechanism`, through the lab runner into `lab`) and `perf bench
/// sched pipe -T` on CPUs `(a, b)` for about `duration_s` each, in interleaved pairs until
/// the ratio is decided against ±`pct` % or `plan`'s most pairs are spent. perf only knows
/// pipes: another mechanism compares against perf's pipe.
pub fn ctxsw_vs_perf_bench(
    lab: &mut LabSide,
    (a, b): (u32, u32),
    duration_s: f64,
    mechanism: Mechanism,
    (plan, pct): ((usize, usize), f64),
) -> Result<CrossRow, CrossError> {
    peer_tool::check_perf("perf", &["bench", "sched", "pipe"], "--loop")?;
    let calib = run_peer(a, b, CALIBRATION_LOOPS)?;
    let loops = (calib.0 * duration_s).clamp(CALIBRATION_LOOPS as f64, i32::MAX as f64) as u64;
    let mut pinned: Option<f64> = None;
    let (estimate, judgement, pairs) = pairs::decide(plan, pct, |k| {
        let (ours, (theirs, pin)) = if k % 2 == 1 {
            let peer = run_peer(a, b, loops)?;
            (run_perflab(lab, a, b, duration_s, mechanism)?, peer)
        } else {
            let ours = run_perflab(lab, a, b, duration_s, mechanism)?;
            (ours, run_peer(a, b, loops)?)
        };
        if let Some(ms) = pin {
            pinned = Some(pinned.map_or(ms, |p| p.max(ms)));
        }
        Ok::<_, CrossError>((ours, theirs))
    })?;
    let side = |pick: fn(&(f64, f64)) -> f64| {
        perflab_stats::median(pairs.iter().map(pick)).unwrap_or(f64::NAN)
    };
    Ok(CrossRow {
        a,
        b,
        perflab_rate: side(|p| p.0),
        peer_rate: side(|p| p.1),
        estimate,
        judgement,
        pairs,
        peer_pinned_after_ms: pinned,
    })
}

/// ctxsw's round trips per second on (a, b), threads, measured by the lab runner.
fn run_perflab(
    lab: &mut LabSide,
    a: u32,
    b: u32,
    duration_s: f64,
    mech: Mechanism,
) -> Result<f64, CrossError> {
    let wrap = |source: LabSideError| CrossError::Ctxsw { a, b, source };
    let params = [
        ("cpu_a", a.to_string()),
        ("cpu_b", b.to_string()),
        ("mechanism", mech.name().to_string()),
        ("duration", format!("{duration_s}")),
        ("process", "false".to_string()),
    ];
    let out = lab.measure("ctxsw", &params).map_err(wrap)?;
    out.metric("round_trips_per_s")
        .map(|m| m.value)
        .ok_or_else(|| wrap(LabSideError::Failed("no round_trips_per_s metric".into())))
}

/// perf's round trips per second, and when its workers were pinned (a != b).
fn run_peer(a: u32, b: u32, loops: u64) -> Result<(f64, Option<f64>), CrossError> {
    let cpus = if a == b {
        a.to_string()
    } else {
        format!("{a},{b}")
    };
    let loops_s = loops.to_string();
    let args = [
        "-c", &cpus, "perf", "bench", "sched", "pipe", "-T", "-l", &loops_s,
    ];
    let cmd = format!("taskset {}", args.join(" "));
    let started = Instant::now();
    let child = Command::new("taskset")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| peer_tool::spawn_error(&cmd, TASKSET_HINT, source))?;
    let pinned = if a != b {
        pin_workers(child.id(), a, b).map(|()| started.elapsed().as_secs_f64() * 1e3)
    } else {
        None
    };
    let out = peer_tool::succeeded(&cmd, TASKSET_HINT, child.wait_with_output())?;
    let parsed = peer_tool::parse_perf_bench(&cmd, &out.stdout)?;
    // One sched-pipe op is a write and a read on each side: one round trip. usecs/op is
    // printed with six decimals, finer than the integer ops/sec.
    let rate = match (parsed.metric("time_per_op_us"), parsed.metric("ops_per_s")) {
        (Some(us), _) if us.value > 0.0 => 1e6 / us.value,
        (_, Some(ops)) => ops.value,
        _ => {
            return Err(PeerError::NoResult {
                cmd,
                what: "usecs/op or ops/sec",
            }
            .into())
        }
    };
    Ok((rate, pinned))
}

/// Waits for perf's two worker threads and pins them: the first created (perf's thread
/// 0, which reads first like ctxsw's pong) to `b`, the second to `a`. None when they did
/// not appear within two seconds (the run then keeps the taskset placement).
fn pin_workers(pid: u32, a: u32, b: u32) -> Option<()> {
    let sys = SysRoot::host();
    let dir = format!("proc/{pid}/task");
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let mut tids: Vec<i32> = sys
            .list_dir(&dir)
            .ok()?
            .iter()
            .filter_map(|n| n.parse().ok())
            .filter(|&t| t != pid as i32)
            .collect();
        if tids.len() >= 2 {
            tids.sort_unstable();
            let first = perflab_workloads::affinity::pin(tids[0], &[b]);
            let second = perflab_workloads::affinity::pin(tids[1], &[a]);
            return (first.is_ok() && second.is_ok()).then_some(());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    None
}
