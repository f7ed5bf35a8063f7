//! What a workload returns for one measurement.

use serde::{Deserialize, Serialize};

use crate::cpu_path::CpuPath;
use crate::units::{Better, Unit};

/// One scalar result of a measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub value: f64,
    pub unit: Unit,
    pub better: Better,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: Unit, better: Better) -> Self {
        Self {
            name: name.into(),
            value,
            unit,
            better,
        }
    }
}

/// Percentiles of a latency histogram, plus the HDR histogram itself (V2 serialized) so
/// any percentile can be recomputed later.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistogramData {
    pub name: String,
    pub unit: Unit,
    pub count: u64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub min: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub mean: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub max: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub stddev: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub p50: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub p90: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub p99: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub p999: f64,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub p9999: f64,
    /// Written as an array of byte values (the export writes base64 instead); either
    /// is read.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::serde_base64::bytes_or_base64"
    )]
    pub encoded: Vec<u8>,
    /// Samples past the range of a tool's fixed buckets (cyclictest's overflows): counted
    /// in `count`, absent from `encoded`, each at least `limit`; see `crate::censored`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<AboveRange>,
}

/// The samples of a histogram past its range (a tool with a fixed range counts them as
/// overflows without their values; `crate::censored` reads percentiles around them):
/// counted in its `count`, absent from its encoded buckets, each at least `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AboveRange {
    /// The lowest value an overflowed sample can have (the end of the buckets' range).
    pub limit: f64,
    pub count: u64,
}

impl HistogramData {
    /// Summarises an HDR histogram whose values are in `unit`.
    pub fn from_hdr(name: &str, unit: Unit, h: &hdrhistogram::Histogram<u64>) -> Self {
        use hdrhistogram::serialization::{Serializer, V2Serializer};
        let mut encoded = Vec::new();
        // A failed encoding loses only the raw buckets, never the summary.
        if V2Serializer::new().serialize(h, &mut encoded).is_err() {
            encoded.clear();
        }
        let empty = h.is_empty();
        let q = |p: f64| {
            if empty {
                0.0
            } else {
                h.value_at_quantile(p) as f64
            }
        };
        Self {
            name: name.to_string(),
            unit,
            count: h.len(),
            min: if empty { 0.0 } else { h.min() as f64 },
            mean: if empty { 0.0 } else { h.mean() },
            max: if empty { 0.0 } else { h.max() as f64 },
            stddev: if empty { 0.0 } else { h.stdev() },
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            encoded,
            above: None,
        }
    }
}

/// What one workload thread did: when it ran, where, and how much it moved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadRecord {
    pub role: String,
    pub tid: i32,
    /// The CPU the thread was pinned to, if any.
    pub pinned_cpu: Option<u32>,
    /// CPUs observed with sched_getcpu during the run, with how many samples saw each.
    pub cpu_samples: Vec<(u32, u64)>,
    /// se.nr_migrations from /proc/thread-self/sched where the kernel has SCHED_DEBUG.
    pub migrations: Option<u64>,
    pub voluntary_switches: Option<u64>,
    pub involuntary_switches: Option<u64>,
    /// CLOCK_MONOTONIC nanoseconds.
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: Option<u64>,
    /// The CPU at each change seen by the same samples, for a timeline of where the
    /// thread ran; empty where nothing sampled over time (old records, dmatest's threads).
    #[serde(default, skip_serializing_if = "CpuPath::is_empty")]
    pub cpu_path: CpuPath,
    /// The thread's own perf counts from `begin` to `finish`, when a counters monitor
    /// asked for them (see `ThreadTracker::count_per_thread`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<ThreadCount>,
}

/// One perf event counted on one thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCount {
    pub event: String,
    /// Scaled for multiplexing (value × enabled / running); `None` when the event never
    /// got a hardware counter while the thread ran: unknown, not 0.
    pub value: Option<f64>,
    /// The share of the time the event was on a counter, when it was multiplexed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_pct: Option<f64>,
}

impl ThreadCount {
    /// From one read of (value, enabled ns, running ns).
    pub fn from_times(event: &str, [value, enabled, running]: [u64; 3]) -> Self {
        // Never enabled (its start failed) is as unknown as never running.
        let (value, running_pct) = if enabled == 0 {
            (None, Some(0.0))
        } else if running >= enabled {
            (Some(value as f64), None)
        } else if running == 0 {
            (None, Some(0.0))
        } else {
            (
                Some(value as f64 * enabled as f64 / running as f64),
                Some(100.0 * running as f64 / enabled as f64),
            )
        };
        Self {
            event: event.to_string(),
            value,
            running_pct,
        }
    }
}

/// Everything a workload produced in one measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOutput {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<HistogramData>,
    pub threads: Vec<ThreadRecord>,
    /// Remarks a person should see next to the numbers.
    pub notes: Vec<String>,
}

impl WorkloadOutput {
    /// The metric called `name`, under its current or an old spelling (a run stored
    /// before a rename is still read by the new name, and the other way round).
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name).or_else(|| {
            self.metrics
                .iter()
                .find(|m| crate::metric_names::same_metric(&m.name, name))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_summary_reports_percentiles() {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        let d = HistogramData::from_hdr("rtt", Unit::Nanoseconds, &h);
        assert_eq!(d.count, 1000);
        assert_eq!(d.min, 1.0);
        assert!((d.p50 - 500.0).abs() <= 1.0, "{}", d.p50);
        assert!((d.p99 - 990.0).abs() <= 1.0, "{}", d.p99);
        assert!(!d.encoded.is_empty());
        let empty = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        assert_eq!(
            HistogramData::from_hdr("x", Unit::Nanoseconds, &empty).count,
            0
        );
    }
}
