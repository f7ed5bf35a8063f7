//! `perf bench` in its default format. sched benchmarks:
//!
//! ```text
//! # Running 'sched/pipe' benchmark:
//! # Executed 20000 pipe operations between two processes
//!
//!      Total time: 0.241 [sec]
//!
//!       12.078800 usecs/op
//!           82789 ops/sec
//! ```
//!
//! mem benchmarks print one result per function:
//!
//! ```text
//! # function 'default' (Default memcpy() provided by glibc)
//! # Copying 1MB bytes ...
//!
//!       17.488583 GB/sec
//! ```
//!
//! where perf's K is 1024 (tools/perf/bench/mem-functions.c), so "GB/sec" is GiB/s, and
//! its KB/sec is printed as `%14lfd KB/sec`, with a stray 'd'.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};

use crate::error::ParseError;
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this, num, shown};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "perf-bench",
    help: "perf bench (default format) sched pipe/messaging: time per op, ops/s; \
           mem memcpy/memset: MiB/s (or cycles/byte with -c) per function",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "perf-bench";

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut bench: Option<(usize, String)> = None;
    let mut top: Vec<Metric> = Vec::new();
    let mut functions: Vec<(String, Vec<Metric>)> = Vec::new();
    let mut out = Parsed::default();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("# Running '") {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            if let Some((first, _)) = &bench {
                return Err(bad(
                    TOOL,
                    line_no,
                    format!(
                        "a second benchmark (the first began on line {first}); give one at a time"
                    ),
                ));
            }
            bench = Some((line_no, name));
            continue;
        }
        if bench.is_none() {
            if line.starts_with("# function '") {
                return Err(bad(
                    TOOL,
                    line_no,
                    "no \"# Running\" line: the --format=simple output is bare numbers whose \
                     unit depends on the options; use the default format",
                ));
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("# function '") {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            functions.push((name, Vec::new()));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# Memory allocation failed") {
            let f = functions.last().map_or("?", |(n, _)| n.as_str());
            out.notes.push(format!(
                "perf bench: function {f}: memory allocation failed{rest}"
            ));
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        read_result(line, raw, line_no, &mut top, &mut functions)?;
    }
    into_parsed(text, bench, top, functions, out)
}

/// A result line ("Total time:", "<value> <unit>"): a metric of the benchmark or of the
/// current mem function; prose and failure messages are skipped.
fn read_result(
    line: &str,
    raw: &str,
    line_no: usize,
    top: &mut Vec<Metric>,
    functions: &mut [(String, Vec<Metric>)],
) -> Result<(), ParseError> {
    let err = |why: &str| bad(TOOL, line_no, format!("{why}: {}", shown(raw)));
    if let Some(rest) = line.strip_prefix("Total time:") {
        let v = rest
            .split_whitespace()
            .next()
            .and_then(num)
            .ok_or_else(|| err("no number"))?;
        top.push(metric("total_time_s", v, Unit::Seconds, Better::Lower));
        return Ok(());
    }
    let mut words = line.split_whitespace();
    let (Some(value), Some(unit)) = (words.next(), words.next()) else {
        return Ok(());
    };
    // mem mmap with -t: "GB/sec/thread\t( +- 1.00% )", a per-thread figure.
    let per_thread = unit.ends_with("/thread");
    let Some(m) = result(value, unit.trim_end_matches("/thread")) else {
        // Failure messages ("Failed to open cycles counter") and prose end up here; a
        // run without any result is reported by `into_parsed`.
        if value.starts_with(|c: char| c.is_ascii_digit()) && unit.contains("/sec") {
            return Err(err("cannot read the result"));
        }
        return Ok(());
    };
    let m = if per_thread {
        Metric {
            name: m.name.replacen("bandwidth", "bandwidth_per_thread", 1),
            ..m
        }
    } else {
        m
    };
    match functions.last_mut() {
        Some((_, fm)) if is_mem(&m) => fm.push(m),
        _ => top.push(m),
    }
    Ok(())
}

/// The benchmark's metrics, and one row per mem function when several ran.
fn into_parsed(
    text: &str,
    bench: Option<(usize, String)>,
    top: Vec<Metric>,
    functions: Vec<(String, Vec<Metric>)>,
    mut out: Parsed,
) -> Result<Parsed, ParseError> {
    let Some((bench_line, name)) = bench else {
        return Err(not_this(TOOL, "no \"# Running '…' benchmark:\" line"));
    };
    let ran: Vec<(String, Vec<Metric>)> = functions
        .into_iter()
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if top.is_empty() && ran.is_empty() {
        let why = text
            .lines()
            .skip(bench_line)
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .map_or_else(String::new, |l| format!(" (it says {})", shown(l)));
        return Err(bad(TOOL, bench_line, format!("{name}: no result{why}")));
    }
    out.metrics = top;
    if ran.len() == 1 {
        if let Some((_, m)) = ran.into_iter().next() {
            out.metrics.extend(m);
        }
    } else {
        out.rows = ran
            .into_iter()
            .map(|(f, metrics)| ParsedRow {
                histograms: Vec::new(),
                telemetry: Vec::new(),
                params: vec![("function".to_string(), f)],
                series: None,
                metrics,
            })
            .collect();
    }
    Ok(out)
}

fn is_mem(m: &Metric) -> bool {
    m.name.starts_with("bandwidth") || m.name == "cycles_per_byte"
}

/// A result line's value and unit as a metric.
fn result(value: &str, unit: &str) -> Option<Metric> {
    // "%14lfd KB/sec": the 'd' sticks to the number.
    let v = num(value.trim_end_matches('d'))?;
    let mib = |scale: f64| {
        Some(metric(
            "bandwidth_mib_s",
            v * scale,
            Unit::MibPerSecond,
            Better::Higher,
        ))
    };
    match unit {
        "usecs/op" => Some(metric(
            "time_per_op_us",
            v,
            Unit::Microseconds,
            Better::Lower,
        )),
        "ops/sec" => Some(metric("ops_per_s", v, Unit::PerSecond, Better::Higher)),
        "GB/sec" => mib(1024.0),
        "MB/sec" => mib(1.0),
        "KB/sec" => mib(1.0 / 1024.0),
        "bytes/sec" => mib(1.0 / (1024.0 * 1024.0)),
        "cycles/byte" => Some(metric("cycles_per_byte", v, Unit::Ratio, Better::Lower)),
        _ => None,
    }
}
