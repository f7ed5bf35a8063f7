//! The verdict on one measurement's thread intervals, as a workload records it. The
//! analysis is `perflab_stats::parallel` (pure, property-tested); here it becomes the
//! measurement's metrics, which the store keeps and reports read as data, and the note a
//! person reads next to the numbers.

use perflab_core::note::Workers;
use perflab_core::parallel_metrics::ParallelMetrics;
use perflab_core::{Better, Metric, Unit};

pub use perflab_stats::parallel::{judge, spans_from_records, Criteria, Span, Verdict};

use super::format::percent;

/// Names of the metrics [`metrics`] emits, for tests that look for them.
pub const METRIC_NAMES: &[&str] = &ParallelMetrics::NAMES;

/// The bandwidth and bytes a threaded transfer reports first: the aggregate over the
/// threads' union window, which is what may be quoted whatever the verdict says.
pub fn bandwidth_metrics(v: &Verdict) -> [Metric; 2] {
    [
        Metric::new(
            "bandwidth_mib_s",
            v.aggregate_mib_s,
            Unit::MibPerSecond,
            Better::Higher,
        ),
        Metric::new("bytes", v.total_bytes as f64, Unit::Bytes, Better::Neither),
    ]
}

/// The verdict as measurement metrics ([`ParallelMetrics`], the type reports read). With the stored thread records they are all a
/// report needs to judge the measurement again (`perflab_stats::parallel::judge_stored`):
/// `busy_measured` says whether `parallelism` comes from each thread's measured CPU time,
/// which the thread records do not keep.
pub fn metrics(v: &Verdict) -> Vec<Metric> {
    ParallelMetrics {
        aggregate_mib_s: v.aggregate_mib_s,
        summed_mib_s: v.summed_mib_s,
        overlap: v.overlap,
        parallelism: v.parallelism,
        sum_valid: v.sum_valid,
        threads: v.threads as f64,
        window_s: v.window_ns as f64 / 1e9,
        busy_measured: Some(v.busy_measured),
    }
    .to_metrics()
}

/// The verdict as one note a person reads next to the numbers. Reports do not parse it
/// (they judge the stored records again); only runs stored before the verdict's metrics
/// carried `busy_measured` are read from it (`perflab_report::parallel`, legacy).
pub fn notes(v: &Verdict) -> Vec<String> {
    let head = format!(
        "{} threads: aggregate {:.0} MiB/s, summed {:.0} MiB/s, overlap {}, parallelism {:.2}",
        v.threads,
        v.aggregate_mib_s,
        v.summed_mib_s,
        percent(v.overlap),
        v.parallelism
    );
    if v.sum_valid {
        vec![format!("summing per-thread bandwidths is valid: {head}")]
    } else {
        vec![format!(
            "summing per-thread bandwidths is NOT valid: {head}; {}",
            v.reasons
                .iter()
                .map(|r| r.text(Workers::Threads))
                .collect::<Vec<_>>()
                .join("; ")
        )]
    }
}
