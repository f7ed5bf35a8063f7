//! The parallel verdict of one measurement as the store keeps it: a workload that runs
//! threads (xfer, dmatest, gpuxfer) writes it with [`ParallelMetrics::to_metrics`]; the
//! report reads it back with [`ParallelMetrics::from_metrics`]. The metric names live
//! here only, so producer and reader cannot drift apart.

use crate::{Better, Metric, Unit};

/// The metric whose presence marks a measurement as carrying the verdict.
pub const MARKER: &str = "sum_valid";

/// What the verdict says about one measurement's threads.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelMetrics {
    /// All bytes over the threads' union window, MiB/s.
    pub aggregate_mib_s: f64,
    /// The per-thread bandwidths summed, MiB/s.
    pub summed_mib_s: f64,
    /// How much of the window the threads ran together, 0..1.
    pub overlap: f64,
    /// The threads' busy time over the window.
    pub parallelism: f64,
    pub sum_valid: bool,
    pub threads: f64,
    pub window_s: f64,
    /// Whether `parallelism` comes from each thread's measured CPU time (which the
    /// thread records do not keep). `None` in runs stored before it existed: their
    /// reasons are only in a note's text.
    pub busy_measured: Option<bool>,
}

const AGGREGATE: &str = "aggregate_mib_s";
const SUMMED: &str = "summed_mib_s";
const OVERLAP: &str = "overlap";
const PARALLELISM: &str = "parallelism";
const THREADS: &str = "threads";
const WINDOW: &str = "window_s";
const BUSY_MEASURED: &str = "busy_measured";

impl ParallelMetrics {
    /// The verdict as measurement metrics.
    pub fn to_metrics(&self) -> Vec<Metric> {
        let flag = |b: bool| f64::from(u8::from(b));
        let mut out = vec![
            Metric::new(
                AGGREGATE,
                self.aggregate_mib_s,
                Unit::MibPerSecond,
                Better::Higher,
            ),
            Metric::new(
                SUMMED,
                self.summed_mib_s,
                Unit::MibPerSecond,
                Better::Neither,
            ),
            Metric::new(OVERLAP, self.overlap, Unit::Ratio, Better::Higher),
            Metric::new(PARALLELISM, self.parallelism, Unit::Count, Better::Higher),
            Metric::new(MARKER, flag(self.sum_valid), Unit::Count, Better::Neither),
            Metric::new(THREADS, self.threads, Unit::Count, Better::Neither),
            Metric::new(WINDOW, self.window_s, Unit::Seconds, Better::Neither),
        ];
        if let Some(b) = self.busy_measured {
            out.push(Metric::new(
                BUSY_MEASURED,
                flag(b),
                Unit::Count,
                Better::Neither,
            ));
        }
        out
    }

    /// The verdict a measurement's metrics carry, or `None` when they carry none. A
    /// figure missing from an older run reads as NaN, which summaries leave out.
    pub fn from_metrics(metrics: &[Metric]) -> Option<Self> {
        let get = |name: &str| metrics.iter().find(|m| m.name == name).map(|m| m.value);
        let num = |name: &str| get(name).unwrap_or(f64::NAN);
        Some(ParallelMetrics {
            sum_valid: get(MARKER)? >= 0.5,
            aggregate_mib_s: num(AGGREGATE),
            summed_mib_s: num(SUMMED),
            overlap: num(OVERLAP),
            parallelism: num(PARALLELISM),
            threads: num(THREADS),
            window_s: num(WINDOW),
            busy_measured: get(BUSY_MEASURED).map(|b| b >= 0.5),
        })
    }

    /// The names [`ParallelMetrics::to_metrics`] writes, in its order.
    pub const NAMES: [&'static str; 8] = [
        AGGREGATE,
        SUMMED,
        OVERLAP,
        PARALLELISM,
        MARKER,
        THREADS,
        WINDOW,
        BUSY_MEASURED,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict() -> ParallelMetrics {
        ParallelMetrics {
            aggregate_mib_s: 900.0,
            summed_mib_s: 1000.0,
            overlap: 0.9,
            parallelism: 3.5,
            sum_valid: true,
            threads: 4.0,
            window_s: 0.5,
            busy_measured: Some(false),
        }
    }

    #[test]
    fn the_metrics_read_back_as_the_verdict() {
        let v = verdict();
        let m = v.to_metrics();
        assert_eq!(
            m.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ParallelMetrics::NAMES
        );
        assert_eq!(ParallelMetrics::from_metrics(&m), Some(v));
    }

    #[test]
    fn no_marker_is_no_verdict_and_an_old_run_lacks_busy_measured() {
        let mut m = verdict().to_metrics();
        m.retain(|m| m.name != BUSY_MEASURED && m.name != WINDOW);
        let old = ParallelMetrics::from_metrics(&m).unwrap();
        assert_eq!(old.busy_measured, None);
        assert!(old.window_s.is_nan());
        m.retain(|m| m.name != MARKER);
        assert_eq!(ParallelMetrics::from_metrics(&m), None);
    }
}
