//! cyclictest results: the per-thread summary lines
//!
//! ```text
//! T: 0 (15948) P:80 I:1000 C:   1000 Min:      6 Act:   14 Avg:   20 Max:    2574
//! ```
//!
//! (without -q they are reprinted as the run goes, behind cursor-up escapes; the last
//! line of each thread is the result), and the --histogram output: one line per latency
//! bucket with a count per thread, then `# Min Latencies:` … per thread. Values are µs
//! unless cyclictest ran with -N, which the output does not say.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, HistogramData, Metric, Unit};

use crate::cyclictest_histogram::read_histogram;
use crate::cyclictest_thread::{Thread, TOOL};
use crate::error::ParseError;
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this, num, shown, strip_ansi, word_after};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "cyclictest",
    help: "cyclictest summary lines (T: ... Min: Act: Avg: Max:) or --histogram output: \
           one row per thread, overall min/avg/max latency (µs unless run with -N)",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

impl Thread {
    fn metrics(&self) -> Vec<Metric> {
        let mut m = vec![
            metric(
                "latency_min_us",
                self.min,
                Unit::Microseconds,
                Better::Lower,
            ),
            metric(
                "latency_avg_us",
                self.avg,
                Unit::Microseconds,
                Better::Lower,
            ),
            metric(
                "latency_max_us",
                self.max,
                Unit::Microseconds,
                Better::Lower,
            ),
            metric("cycles", self.cycles, Unit::Count, Better::Neither),
        ];
        if let Some(o) = self.overflows {
            m.push(metric("histogram_overflows", o, Unit::Count, Better::Lower));
        }
        m
    }
}

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let clean = strip_ansi(text);
    let mut threads = thread_summaries(&clean)?;
    let hist = read_histogram(&clean)?;
    if threads.is_empty() && hist.is_none() {
        return Err(not_this(
            TOOL,
            "no \"T: n (tid) ... Max:\" lines and no \"# Histogram\"",
        ));
    }
    let mut out = Parsed::default();
    if let Some(h) = &hist {
        if threads.is_empty() {
            threads = h.threads.clone();
        } else {
            for (t, ht) in threads.iter_mut().zip(&h.threads) {
                t.overflows = ht.overflows;
            }
        }
    }
    let histogram_of = |id: &str| -> Vec<HistogramData> {
        hist.iter()
            .flat_map(|h| &h.histograms)
            .filter(|(t, _)| t == id)
            .map(|(_, h)| h.clone())
            .collect()
    };
    let (ran, idle): (Vec<Thread>, Vec<Thread>) = threads.into_iter().partition(|t| t.cycles > 0.0);
    if !idle.is_empty() {
        let ids: Vec<&str> = idle.iter().map(|t| t.id.as_str()).collect();
        out.notes.push(format!(
            "cyclictest threads with no cycles (left out): {}",
            ids.join(", ")
        ));
    }
    if ran.is_empty() {
        return Err(bad(
            TOOL,
            clean.lines().count(),
            "no thread completed a cycle",
        ));
    }
    if ran.len() == 1 {
        out.metrics = ran[0].metrics();
        out.histograms = histogram_of(&ran[0].id);
        return Ok(out);
    }
    out.metrics = all_threads(&ran);
    out.rows = ran
        .iter()
        .map(|t| ParsedRow {
            histograms: histogram_of(&t.id),
            telemetry: Vec::new(),
            params: vec![("thread".to_string(), t.id.clone())],
            series: None,
            metrics: t.metrics(),
        })
        .collect();
    Ok(out)
}

/// The last "T: n (tid) ... Max:" summary of each thread, in order of first appearance.
fn thread_summaries(clean: &str) -> Result<Vec<Thread>, ParseError> {
    let mut threads: Vec<Thread> = Vec::new();
    for (i, raw) in clean.lines().enumerate() {
        let line = raw.trim();
        if !line.starts_with("T:") || !line.contains("Max:") {
            continue;
        }
        let t = summary_line(line).ok_or_else(|| {
            bad(
                TOOL,
                i + 1,
                format!("cannot read the thread summary {}", shown(raw)),
            )
        })?;
        match threads.iter_mut().find(|x| x.id == t.id) {
            Some(old) => *old = t,
            None => threads.push(t),
        }
    }
    Ok(threads)
}

/// The metrics of all threads together.
fn all_threads(ran: &[Thread]) -> Vec<Metric> {
    let cycles: f64 = ran.iter().map(|t| t.cycles).sum();
    let min = ran.iter().map(|t| t.min).fold(f64::INFINITY, f64::min);
    let max = ran.iter().map(|t| t.max).fold(f64::NEG_INFINITY, f64::max);
    // cyclictest's per-thread averages are integers of µs; weighting by cycles keeps a
    // thread with a longer interval from counting as much as one that woke more often.
    let avg = ran.iter().map(|t| t.avg * t.cycles).sum::<f64>() / cycles;
    let mut metrics = vec![
        metric("latency_min_us", min, Unit::Microseconds, Better::Lower),
        metric("latency_avg_us", avg, Unit::Microseconds, Better::Lower),
        metric("latency_max_us", max, Unit::Microseconds, Better::Lower),
        metric("cycles", cycles, Unit::Count, Better::Neither),
    ];
    if ran.iter().all(|t| t.overflows.is_some()) {
        let o = ran.iter().filter_map(|t| t.overflows).sum();
        metrics.push(metric("histogram_overflows", o, Unit::Count, Better::Lower));
    }
    metrics
}

fn summary_line(line: &str) -> Option<Thread> {
    let field = |key: &str| word_after(line, key).and_then(num);
    let id = word_after(line, "T:")?;
    if !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Thread {
        id: id.to_string(),
        cycles: field(" C:")?,
        min: field("Min:")?,
        avg: field("Avg:")?,
        max: field("Max:")?,
        overflows: None,
    })
}
