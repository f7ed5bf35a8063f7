//! The crosscheck against `perf bench sched pipe -T`, short, on (0,0). Needs perf (Debian:
//! linux-perf); skipped, saying so, where it is missing.

use perflab_crosscheck::ctxsw::{ctxsw_vs_perf_bench, CrossError};
use perflab_crosscheck::lab_side::LabSide;
use perflab_crosscheck::peer_tool::PeerError;
use perflab_workloads::Mechanism;

/// The crosscheck runs both tools and reports rates that belong together. How close they
/// are is a speed comparison of two measurements, which a loaded machine can skew at will
/// (either side may lose the CPU to other work for part of a short run): that is the job
/// of `perflab crosscheck ctxsw` and its stated tolerance, not of a test. Here only an
/// order of magnitude is asserted, which a unit error (ops/s against µs/op, a thousandfold
/// off) still breaks; counting switches instead of round trips (2x) is caught by ctxsw's
/// own test (switches_per_s is exactly twice round_trips_per_s).
#[test]
fn ctxsw_and_perf_bench_both_run_and_report_rates() {
    let mut lab = LabSide::new().expect("scratch store");
    let r = match ctxsw_vs_perf_bench(&mut lab, (0, 0), 0.3, Mechanism::Pipe, ((6, 6), 3.0)) {
        Err(CrossError::Peer(PeerError::PerfMissing(why))) => {
            perflab_testkit::skip("perf", format!("perf is not usable here ({why})"));
            return;
        }
        other => other.expect("crosscheck"),
    };
    assert_eq!((r.a, r.b), (0, 0));
    assert!(r.perflab_rate > 0.0 && r.peer_rate > 0.0, "{r:?}");
    assert!(
        r.perflab_rate.is_finite() && r.peer_rate.is_finite(),
        "{r:?}"
    );
    assert!(r.peer_pinned_after_ms.is_none(), "{r:?}");
    // Six interleaved pairs (the plan's first look is also its most), the ratio the median
    // of their ratios, inside its own interval.
    assert_eq!((r.pairs.len(), r.estimate.pairs), (6, 6), "{r:?}");
    let mut ratios: Vec<f64> = r.pairs.iter().map(|(p, q)| p / q).collect();
    ratios.sort_by(f64::total_cmp);
    let median = (ratios[2] + ratios[3]) / 2.0;
    assert!((r.estimate.median - median).abs() <= 1e-9 * median, "{r:?}");
    assert!(
        r.estimate.ci.0 <= median && median <= r.estimate.ci.1,
        "{r:?}"
    );
    assert!((0.1..10.0).contains(&r.estimate.median), "{r:?}");
}
