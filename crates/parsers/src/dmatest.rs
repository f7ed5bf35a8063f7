//! The kernel's dmatest results as dmesg (or a `/dev/kmsg` dump) shows them: one row per
//! test thread's summary line, read by [`crate::dmatest_log::scan`], the same reader the
//! dmatest workload uses.
//!
//! ```text
//! [  123.456789] dmatest: dma0chan0-copy0: summary 1000 tests, 0 failures 3522.29 iops 28178 KB/s (0)
//! ```
//!
//! KB/s is the kernel's `len >> 10` per second, so KiB/s. A dmatest line that cannot be
//! read (a log cut short, a garbled line) becomes a note naming the line and the reason,
//! and the other threads are still reported; text with dmatest lines but no readable
//! summary is an error naming the first unreadable line.
//!
//! No sum over threads is given: whether per-thread bandwidths add up depends on whether
//! the threads ran at the same time, which the summary lines do not tell.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};

use crate::dmatest_log::{scan, Summary};
use crate::error::ParseError;
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "dmatest",
    help: "kernel dmatest summary lines from dmesg or a /dev/kmsg dump: one row per \
           thread with tests, failures, IOPS and MiB/s; unreadable dmatest lines are \
           skipped with a note",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "dmatest";

/// Failure result lines worth showing; more only repeat the kind of failure.
const RESULT_NOTES: usize = 5;

fn metrics(s: &Summary) -> Vec<Metric> {
    vec![
        metric("tests", s.tests as f64, Unit::Count, Better::Neither),
        metric("failures", s.failures as f64, Unit::Count, Better::Lower),
        metric("iops", s.iops, Unit::PerSecond, Better::Higher),
        metric(
            "bandwidth_mib_s",
            s.kib_s / 1024.0,
            Unit::MibPerSecond,
            Better::Higher,
        ),
    ]
}

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let found = scan(text.as_bytes(), None);
    if found.summaries.is_empty() {
        return Err(match found.skipped.first() {
            Some(s) => bad(
                TOOL,
                s.line,
                format!(
                    "no readable summary line: {}",
                    s.why.trim_end_matches(": skipped")
                ),
            ),
            None if found.dmatest_lines > 0 => bad(
                TOOL,
                text.lines().count(),
                "dmatest lines but no \"<thread>: summary\" line: the test has not finished",
            ),
            None => not_this(TOOL, "no \"dmatest: \" lines"),
        });
    }
    let mut out = Parsed {
        notes: found.skipped.iter().map(ToString::to_string).collect(),
        ..Parsed::default()
    };
    let started: u64 = found.started.iter().map(|(_, n)| u64::from(*n)).sum();
    if started > found.summaries.len() as u64 {
        out.notes.push(format!(
            "dmatest started {started} threads but the log holds {} summaries",
            found.summaries.len()
        ));
    }
    for s in found.summaries.iter().filter(|s| s.status != 0) {
        out.notes.push(format!(
            "dmatest thread {} ended with status {}",
            s.thread, s.status
        ));
    }
    for r in found.results.iter().take(RESULT_NOTES) {
        out.notes.push(format!("dmatest: {r}"));
    }
    if let [one] = found.summaries.as_slice() {
        out.metrics = metrics(one);
        return Ok(out);
    }
    // In f64: counts from a garbled log may be near u64::MAX, and a sum must not overflow.
    let sum = |f: fn(&Summary) -> u64| found.summaries.iter().map(|s| f(s) as f64).sum::<f64>();
    out.metrics = vec![
        metric(
            "threads",
            found.summaries.len() as f64,
            Unit::Count,
            Better::Neither,
        ),
        metric("tests", sum(|s| s.tests), Unit::Count, Better::Neither),
        metric("failures", sum(|s| s.failures), Unit::Count, Better::Lower),
    ];
    out.rows = found
        .summaries
        .iter()
        .map(|s| ParsedRow {
            histograms: Vec::new(),
            telemetry: Vec::new(),
            params: vec![("thread".to_string(), s.thread.clone())],
            series: None,
            metrics: metrics(s),
        })
        .collect();
    Ok(out)
}
