//! Runs stored before the rate spelling was settled (`round_trips_per_sec`) are still
//! compared and reported against runs that carry the current name (`round_trips_per_s`),
//! either way round and by either name.

use crate::common;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_report::compare_runs;
use perflab_report::select::choose_metric;
use perflab_stats::StatsConfig;

/// The fixture run (an idle-ipi study stored with the old names) with every metric and
/// the primary metric renamed as the current ctxsw names them.
fn renamed(id: i64) -> (RunInfo, Vec<MeasurementRecord>) {
    let mut info = common::run_info(id);
    info.spec.primary_metric = "round_trips_per_s".into();
    let mut ms = common::records(1.02, None);
    for m in &mut ms {
        for x in &mut m.output.metrics {
            x.name = perflab_core::metric_names::canonical(&x.name).to_string();
        }
    }
    (info, ms)
}

#[test]
fn an_old_name_run_is_compared_with_a_new_name_run() {
    let old = (common::run_info(1), common::records(1.0, None));
    assert!(old.1[0].output.metrics[0].name.ends_with("_per_sec"));
    let new = renamed(2);
    assert!(new.1[0].output.metrics[0].name.ends_with("_per_s"));
    let cfg = StatsConfig::default();
    for (a, b) in [(&old, &new), (&new, &old)] {
        for wanted in [None, Some("round_trips_per_sec"), Some("round_trips_per_s")] {
            let t = compare_runs(&a.0, &a.1, &b.0, &b.1, wanted, &cfg).unwrap();
            // Every point matched but the fixture's one whose measurements all failed.
            assert_eq!(t.rows.len(), 11, "{wanted:?}");
            assert!(
                t.unmatched.iter().all(|u| u.reason.contains("failed")),
                "{wanted:?}: {:?}",
                t.unmatched
            );
            for r in &t.rows {
                assert!(r.cmp.a.n > 0 && r.cmp.a.n == r.cmp.b.n, "{wanted:?}");
                // B is A scaled by 1.02 (or the reverse): the rows matched the metric.
                let ratio = r.cmp.b.median / r.cmp.a.median;
                assert!(
                    (ratio - 1.02).abs() < 1e-5 || (ratio - 1.0 / 1.02).abs() < 1e-5,
                    "{ratio}"
                );
            }
        }
    }
    // Either name finds the metric of either run.
    for run in [&old, &new] {
        for name in ["round_trips_per_sec", "round_trips_per_s"] {
            assert!(choose_metric(&run.0, &run.1, Some(name)).is_ok(), "{name}");
        }
    }
}
