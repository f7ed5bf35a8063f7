//! The crosscheck against `perf bench sched pipe -T`, short, on (0,0). Needs perf (Debian:
//! linux-perf); skipped, saying so, where it is missing.

use perflab_workloads::crosscheck::{ctxsw_vs_perf_bench, CrossError, CrossRow};
use perflab_workloads::peer_tool::PeerError;
use perflab_workloads::Mechanism;

#[test]
fn ctxsw_and_perf_bench_agree_roughly_on_one_cpu() {
    // Loose on purpose and retried: CI shares two vCPUs with whatever else runs, and a
    // burst of other work can halve either side of one short run. A systematic error such
    // as counting switches instead of round trips (2x) still fails every attempt. The real
    // comparison is the longer one documented in ctxsw's module docs.
    let mut seen: Vec<CrossRow> = Vec::new();
    for _ in 0..3 {
        let rows = match ctxsw_vs_perf_bench(&[(0, 0)], 0.3, Mechanism::Pipe) {
            Err(CrossError::Peer(PeerError::PerfMissing(why))) => {
                eprintln!("skipping: perf is not usable here ({why})");
                return;
            }
            other => other.expect("crosscheck"),
        };
        assert_eq!(rows.len(), 1);
        let r = rows[0].clone();
        assert_eq!((r.a, r.b), (0, 0));
        assert!(r.perflab_rate > 0.0 && r.peer_rate > 0.0, "{r:?}");
        assert!(!r.peer_first && r.peer_pinned_after_ms.is_none(), "{r:?}");
        if (0.6..1.6).contains(&r.ratio) {
            return;
        }
        seen.push(r);
    }
    panic!("ctxsw and perf bench disagree on every attempt: {seen:?}");
}
