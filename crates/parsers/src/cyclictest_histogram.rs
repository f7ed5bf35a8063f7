//! cyclictest --histogram output: one line per µs bucket with a count per thread, then
//! summary comment lines:
//!
//! ```text
//! # Histogram
//! 000000 000000\t000000
//! 000005 000001\t000000
//! # Total: 000000957 000000958
//! # Min Latencies: 00005 00007
//! # Avg Latencies: 00015 00014
//! # Max Latencies: 00465 00102
//! # Histogram Overflows: 00043 00042
//! ```
//!
//! `# Total` counts only the samples inside the buckets; overflows are the rest, at or
//! above the end of the buckets' range (`-h 50`: 50 µs). Their values are unknown, so a
//! percentile that falls among them is censored (`perflab_core::censored`), never placed
//! at the maximum.

use perflab_core::{AboveRange, HistogramData, Unit};

use crate::cyclictest_thread::{Thread, TOOL};
use crate::error::ParseError;
use crate::text::{bad, num, shown};

/// What the histogram output holds: each thread's figures, and its latency histogram
/// (named `latency`; a thread whose buckets and overflows are all empty has none).
#[derive(Clone, Debug, Default)]
pub(crate) struct Histogram {
    pub threads: Vec<Thread>,
    pub histograms: Vec<(String, HistogramData)>,
}

pub(crate) fn read_histogram(text: &str) -> Result<Option<Histogram>, ParseError> {
    let Some(start) = text.lines().position(|l| l.trim() == "# Histogram") else {
        return Ok(None);
    };
    let (buckets, totals) = read_lines(text, start)?;
    let get = |key: &str| totals.iter().find(|(k, _, _)| *k == key);
    let (Some(min), Some(avg), Some(max)) = (
        get("Min Latencies"),
        get("Avg Latencies"),
        get("Max Latencies"),
    ) else {
        return Err(bad(
            TOOL,
            text.lines().count(),
            "histogram without its \"# Min/Avg/Max Latencies\" lines (cut short?)",
        ));
    };
    let n = min.2.len();
    check_widths(&totals, &buckets, start, n)?;
    let total = get("Total");
    let overflows = get("Histogram Overflows");
    if let Some((_, line, counts)) = overflows {
        if let Some(v) = counts.iter().find(|v| !is_count(**v)) {
            return Err(bad(
                TOOL,
                *line,
                format!("\"# Histogram Overflows\" holds {v}, which is not a count of cycles"),
            ));
        }
    }
    // cyclictest prints every bucket of its range, 0 to N-1: an overflow is at least N.
    let limit = buckets.iter().map(|(b, _)| b + 1).max().unwrap_or(0) as f64;
    let mut out = Histogram::default();
    for t in 0..n {
        let in_buckets = total.map_or(0.0, |x| x.2[t]);
        let over = overflows.map(|x| x.2[t]);
        out.threads.push(Thread {
            id: t.to_string(),
            cycles: in_buckets + over.unwrap_or(0.0),
            min: min.2[t],
            avg: avg.2[t],
            max: max.2[t],
            overflows: over,
        });
        let Some(in_range) = hdr(&buckets, t) else {
            continue;
        };
        // Every overflow count was checked above to be a count (is_count).
        let above = AboveRange {
            limit,
            count: over.unwrap_or(0.0).max(0.0) as u64,
        };
        if in_range.is_empty() && above.count == 0 {
            continue;
        }
        let h = HistogramData::censored(
            "latency",
            Unit::Microseconds,
            &in_range,
            above,
            (min.2[t], avg.2[t], max.2[t]),
        );
        out.histograms.push((t.to_string(), h));
    }
    Ok(Some(out))
}

/// A count cyclictest could have printed: whole, not negative, and below 2^53 (a cycle a
/// microsecond for 285 years), so that sums of counts stay exact and cannot overflow.
fn is_count(v: f64) -> bool {
    v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0
}

/// Each bucket (µs) with its count per thread.
type Buckets = Vec<(u64, Vec<u64>)>;

/// The "# Key: v v …" totals wanted, each with its line number.
type Totals = Vec<(&'static str, usize, Vec<f64>)>;

/// The bucket lines (bucket, count per thread) and the totals after "# Histogram".
fn read_lines(text: &str, start: usize) -> Result<(Buckets, Totals), ParseError> {
    let mut buckets: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut totals: Totals = Vec::new();
    for (i, raw) in text.lines().enumerate().skip(start + 1) {
        let line_no = i + 1;
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix('#') {
            let Some((key, values)) = rest.split_once(':') else {
                continue;
            };
            let key = key.trim();
            let wanted = [
                "Total",
                "Min Latencies",
                "Avg Latencies",
                "Max Latencies",
                "Histogram Overflows",
            ];
            if let Some(k) = wanted.iter().find(|k| **k == key) {
                let v: Option<Vec<f64>> = values.split_whitespace().map(num).collect();
                let v =
                    v.ok_or_else(|| bad(TOOL, line_no, format!("cannot read {}", shown(raw))))?;
                totals.push((*k, line_no, v));
            }
            continue;
        }
        if line.is_empty() || line.starts_with("T:") {
            continue;
        }
        let mut words = line.split_whitespace();
        let parsed: Option<(u64, Vec<u64>)> = (|| {
            let bucket = words.next()?.parse().ok()?;
            let counts: Option<Vec<u64>> = words.map(|w| w.parse().ok()).collect();
            Some((bucket, counts?))
        })();
        match parsed {
            Some(b) => buckets.push(b),
            None => {
                return Err(bad(
                    TOOL,
                    line_no,
                    format!("not a histogram bucket: {}", shown(raw)),
                ))
            }
        }
    }
    Ok((buckets, totals))
}

/// Every totals line and bucket has one value per thread of the summary (`n`).
fn check_widths(
    totals: &Totals,
    buckets: &[(u64, Vec<u64>)],
    start: usize,
    n: usize,
) -> Result<(), ParseError> {
    for (_, line_no, v) in totals {
        if v.len() != n {
            return Err(bad(
                TOOL,
                *line_no,
                format!("{} values where the other lines have {n}", v.len()),
            ));
        }
    }
    if let Some((b, _)) = buckets.iter().find(|(_, c)| c.len() != n) {
        return Err(bad(TOOL, start + 1, format!("bucket {b} has a count per thread for a different number of threads than the {n} in the summary")));
    }
    Ok(())
}

/// The thread's buckets (its samples within the range) as an HDR histogram.
fn hdr(buckets: &[(u64, Vec<u64>)], t: usize) -> Option<hdrhistogram::Histogram<u64>> {
    let mut h = hdrhistogram::Histogram::<u64>::new(3).ok()?;
    for (value, counts) in buckets {
        let c = *counts.get(t)?;
        if c > 0 {
            h.record_n(*value, c).ok()?;
        }
    }
    Some(h)
}
