//! Histograms whose top is cut off: a tool with a fixed range (cyclictest `-h 50`: one
//! bucket per µs up to 49) counts the samples past it as overflows without their values.
//! Such a sample is known only to be at or above the range's end. A percentile whose rank
//! falls among them is censored — shown as `≥ 50`, never a number made up for it (placing
//! the overflows at the maximum once gave a p50 of 14,055 µs where the mean was 120).

use crate::output::{AboveRange, HistogramData};
use crate::units::Unit;

/// A percentile as it can honestly be given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantile {
    Value(f64),
    /// Among the overflowed samples: at least this much.
    AtLeast(f64),
}

impl Quantile {
    /// `12.5`, or `≥50` for a censored one; `fmt` formats the number.
    pub fn text(self, fmt: impl Fn(f64) -> String) -> String {
        match self {
            Quantile::Value(v) => fmt(v),
            Quantile::AtLeast(l) => format!("≥{}", fmt(l)),
        }
    }
}

/// Whether quantile `q` of `total` samples, `above` of which overflowed, falls among the
/// overflows: its rank (1-based, the nearest-rank definition HDR uses) is past the
/// samples in range.
pub fn is_censored(q: f64, total: u64, above: u64) -> bool {
    if above == 0 || total == 0 {
        return false;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    rank > total - above
}

/// The quantile within the in-range samples that has the same rank as `q` over all
/// `total` (for reading it off a histogram of the in-range samples only).
pub fn in_range_quantile(q: f64, total: u64, above: u64) -> f64 {
    let in_range = total.saturating_sub(above);
    if in_range == 0 {
        return q;
    }
    let rank = ((q * total as f64).ceil()).clamp(1.0, in_range as f64);
    rank / in_range as f64
}

impl HistogramData {
    /// Summarises `in_range` (the buckets a tool filled) plus `above` overflowed samples;
    /// `min`, `mean` and `max` are the tool's own, over every sample, where it gives them.
    /// Percentiles among the overflows are NaN (the store's "not known") and the standard
    /// deviation too when any sample overflowed: [`HistogramData::quantile`] says why.
    pub fn censored(
        name: &str,
        unit: Unit,
        in_range: &hdrhistogram::Histogram<u64>,
        above: AboveRange,
        (min, mean, max): (f64, f64, f64),
    ) -> Self {
        let mut h = HistogramData::from_hdr(name, unit, in_range);
        // Saturating: a caller's count near u64::MAX is nonsense, but never a panic.
        let total = in_range.len().saturating_add(above.count);
        let at = |q: f64| {
            if is_censored(q, total, above.count) {
                f64::NAN
            } else {
                in_range.value_at_quantile(in_range_quantile(q, total, above.count)) as f64
            }
        };
        h.count = total;
        (h.min, h.mean, h.max) = (min, mean, max);
        if above.count > 0 {
            h.stddev = f64::NAN;
            (h.p50, h.p90, h.p99, h.p999, h.p9999) =
                (at(0.5), at(0.9), at(0.99), at(0.999), at(0.9999));
            h.above = Some(above);
        }
        h
    }

    /// Quantile `q` as stored: `AtLeast` where it falls among overflowed samples.
    pub fn quantile(&self, q: f64, stored: f64) -> Quantile {
        match self.above {
            Some(a) if is_censored(q, self.count, a.count) => Quantile::AtLeast(a.limit),
            _ => Quantile::Value(stored),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_among_the_overflows_are_censored() {
        // 957 samples, 952 above the range: only the lowest 5 are known.
        assert!(!is_censored(0.005, 957, 952));
        assert!(is_censored(0.5, 957, 952));
        assert!(!is_censored(0.99, 1000, 10));
        assert!(is_censored(0.999, 1000, 10));
        assert!(!is_censored(0.5, 10, 0));
    }

    #[test]
    fn a_mostly_overflowed_histogram_states_only_what_it_knows() {
        let mut in_range = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        in_range.record_n(20, 3).unwrap();
        in_range.record_n(40, 2).unwrap();
        let above = AboveRange {
            limit: 50.0,
            count: 952,
        };
        let h = HistogramData::censored(
            "latency",
            Unit::Microseconds,
            &in_range,
            above,
            (20.0, 120.0, 14055.0),
        );
        assert_eq!(h.count, 957);
        assert_eq!((h.min, h.mean, h.max), (20.0, 120.0, 14055.0));
        assert!(h.p50.is_nan() && h.p99.is_nan() && h.stddev.is_nan());
        assert_eq!(h.quantile(0.5, h.p50), Quantile::AtLeast(50.0));
        assert_eq!(h.quantile(0.5, h.p50).text(|v| v.to_string()), "≥50");
        // The lowest ranks are in range and read off the buckets.
        assert_eq!(h.quantile(0.003, 20.0), Quantile::Value(20.0));
    }

    #[test]
    fn without_overflows_it_is_the_plain_summary() {
        let mut in_range = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        in_range.record_n(7, 10).unwrap();
        let h = HistogramData::censored(
            "latency",
            Unit::Microseconds,
            &in_range,
            AboveRange {
                limit: 50.0,
                count: 0,
            },
            (7.0, 7.0, 7.0),
        );
        assert_eq!((h.count, h.p50, h.above), (10, 7.0, None));
    }
}
