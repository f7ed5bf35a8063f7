//! The crosscheck against `perf bench mem memcpy`, short, at 1M. Needs perf (Debian:
//! linux-perf); skipped, saying so, where it is missing.

use perflab_crosscheck::lab_side::LabSide;
use perflab_crosscheck::mem::{memcpy_vs_perf_bench, MemCrossError};
use perflab_crosscheck::peer_tool::PeerError;

/// Both tools run, in pairs, and their bandwidths are reported together. How close they
/// are is a speed comparison of two measurements, which a loaded machine can skew at will:
/// that is the job of `perflab crosscheck memcpy` and its stated tolerance, not of a test.
/// Here only an order of magnitude is asserted, which a unit error (MB for MiB is 5%, but
/// KiB for MiB or bytes for MiB are a thousandfold) still breaks; bytes counted twice are
/// caught by xfer's own test (bytes is exactly iterations times the size).
#[test]
fn xfer_memcpy_and_perf_bench_both_run_and_report_bandwidths() {
    let mut lab = LabSide::new().expect("scratch store");
    let rows = match memcpy_vs_perf_bench(&mut lab, &[1 << 20], 0.2, ((6, 6), 3.0)) {
        Err(MemCrossError::Peer(PeerError::PerfMissing(why))) => {
            perflab_testkit::skip("perf", format!("perf is not usable here ({why})"));
            return;
        }
        other => other.expect("crosscheck"),
    };
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r.size, 1 << 20);
    assert_eq!(r.pairs.len(), 6);
    assert!(r.perflab_mib_s > 0.0 && r.peer_mib_s > 0.0, "{r:?}");
    assert!(
        r.perflab_mib_s.is_finite() && r.peer_mib_s.is_finite(),
        "{r:?}"
    );
    assert!(
        r.pairs
            .iter()
            .all(|(p, q)| *p > 0.0 && *q > 0.0 && (p / q).is_finite()),
        "{r:?}"
    );
    assert!(r.peer_loops >= 1);
    let e = &r.estimate;
    assert!(e.ci.0 <= e.median && e.median <= e.ci.1, "{r:?}");
    assert!((0.1..10.0).contains(&e.median), "{r:?}");
}
