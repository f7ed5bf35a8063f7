//! `hyperfine --export-json FILE`: every run of every benchmarked command, as a
//! repetition. Each run is one [`ParsedRow`] holding that run's wall-clock time (seconds
//! in the file, milliseconds here), so perflab's own statistics are over the runs rather
//! than hyperfine's mean alone.
//!
//! Several commands at one point (`hyperfine 'a' 'b'`, no `-P`/`-L` parameters, or
//! several commands per parameter value) are what hyperfine compares ("1.86 ± 0.37 times
//! faster"), so each command is a series (a variant on import) and `compare` compares
//! them. Commands that a parameter scan tells apart (`-P n 1 3 'sleep 0.0{n}'`) are
//! points: the parameters and the command identify the row.
//!
//! hyperfine's summary of each command (mean, stddev, median, min, max, user and system
//! CPU time, number of runs) is kept in [`Parsed::summaries`]: user and system time exist
//! only there. A file of one command also carries it in [`Parsed::metrics`], which is
//! what `exec` reports for one measurement.

use std::collections::BTreeMap;

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};
use serde_json::Value;

use crate::error::ParseError;
use crate::json::{document, f64_at, line_of};
use crate::parsed::{Parsed, ParsedRow, ParsedSummary};
use crate::text::{bad, metric, not_this};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "hyperfine",
    help: "hyperfine --export-json file: every run of each command as a repetition \
           (time_ms); several commands are variants that `compare` compares; each \
           command's mean, stddev, median, min, max, user and system time (ms) are kept \
           as hyperfine's summary",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "hyperfine";

/// The per-run metric: one run's wall-clock time.
pub(crate) const RUN_METRIC: &str = "time_ms";

/// One entry of `"results"`, read.
struct Benchmark {
    command: String,
    /// hyperfine's `-P`/`-L` parameters, as text.
    params: Vec<(String, String)>,
    summary: Vec<Metric>,
    /// Each run's time in seconds; `None` when the file has no `times`.
    times: Option<Vec<f64>>,
}

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let (doc, first_line) = document(text, TOOL, "\"exit_codes\"")?;
    let Some(results) = doc.get("results").and_then(Value::as_array) else {
        return Err(not_this(TOOL, "the JSON has no \"results\" array"));
    };
    let looks_like = results
        .iter()
        .all(|r| r.get("command").is_some() && r.get("mean").is_some());
    if !looks_like {
        return Err(not_this(
            TOOL,
            "\"results\" entries lack \"command\" and \"mean\"",
        ));
    }
    if results.is_empty() {
        return Err(bad(TOOL, first_line, "\"results\" is empty"));
    }
    let mut out = Parsed::default();
    let mut benchmarks = Vec::with_capacity(results.len());
    for r in results {
        let b = benchmark(r, text, first_line)?;
        if let Some(note) = failed_runs(r, &b.command) {
            out.notes.push(note);
        }
        benchmarks.push(b);
    }
    let series = series_names(&benchmarks);
    for (b, series) in benchmarks.iter().zip(series) {
        let mut params = b.params.clone();
        if series.is_none() {
            params.insert(0, ("command".to_string(), b.command.clone()));
        }
        push_rows(&mut out, b, &params, &series);
        out.summaries.push(ParsedSummary {
            params,
            series,
            metrics: b.summary.clone(),
        });
    }
    // hyperfine's summary describes all the rows only when they are one command's runs.
    if let [b] = benchmarks.as_slice() {
        out.metrics = b.summary.clone();
    }
    Ok(out)
}

fn benchmark(r: &Value, text: &str, first_line: usize) -> Result<Benchmark, ParseError> {
    let command = r
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let quoted = serde_json::to_string(&command).unwrap_or_default();
    let at = line_of(text, &quoted, first_line);
    let fail = |why: String| bad(TOOL, at, format!("{command}: {why}"));
    let summary = summary_metrics(r).map_err(fail)?;
    let times = run_times(r).map_err(fail)?;
    let mut params = Vec::new();
    if let Some(p) = r.get("parameters").and_then(Value::as_object) {
        for (k, v) in p {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            params.push((k.clone(), v));
        }
    }
    Ok(Benchmark {
        command,
        params,
        summary,
        times,
    })
}

/// A note when some runs of `command` exited non-zero (`hyperfine -i` keeps them).
fn failed_runs(r: &Value, command: &str) -> Option<String> {
    let codes = r.get("exit_codes").and_then(Value::as_array)?;
    let failed = codes.iter().filter(|c| c.as_i64() != Some(0)).count();
    (failed > 0).then(|| {
        format!(
            "hyperfine: {failed} of {} runs of {command:?} exited non-zero",
            codes.len()
        )
    })
}

/// A benchmark's parameters, which name its point.
type Point<'a> = &'a [(String, String)];

/// Each benchmark's series: its command where several commands share one parameter set
/// (hyperfine compares them), else `None` (the command is a parameter of its point). A
/// command given twice is told apart by its place (`true (2)`), so no runs merge.
fn series_names(benchmarks: &[Benchmark]) -> Vec<Option<String>> {
    let mut per_point: BTreeMap<Point, usize> = BTreeMap::new();
    for b in benchmarks {
        *per_point.entry(&b.params).or_default() += 1;
    }
    if per_point.values().all(|&n| n == 1) {
        return benchmarks.iter().map(|_| None).collect();
    }
    let mut seen: BTreeMap<(Point, &str), usize> = BTreeMap::new();
    benchmarks
        .iter()
        .map(|b| {
            let n = seen.entry((&b.params, &b.command)).or_default();
            *n += 1;
            Some(match *n {
                1 => b.command.clone(),
                n => format!("{} ({n})", b.command),
            })
        })
        .collect()
}

/// One row per run, or one row of the summary when the file has no per-run times.
fn push_rows(
    out: &mut Parsed,
    b: &Benchmark,
    params: &[(String, String)],
    series: &Option<String>,
) {
    let row = |metrics: Vec<Metric>| ParsedRow {
        histograms: Vec::new(),
        telemetry: Vec::new(),
        params: params.to_vec(),
        series: series.clone(),
        metrics,
    };
    match &b.times {
        Some(times) => out.rows.extend(times.iter().map(|t| {
            row(vec![metric(
                RUN_METRIC,
                t * 1e3,
                Unit::Milliseconds,
                Better::Lower,
            )])
        })),
        // Without the runs, hyperfine's summary is all there is: one row of it.
        None => {
            out.notes.push(format!(
                "hyperfine: no per-run \"times\" for {:?}; its summary is one measurement",
                b.command
            ));
            out.rows.push(row(b.summary.clone()));
        }
    }
}

/// Each run's wall-clock time in seconds, `None` when the file has no `times`.
fn run_times(r: &Value) -> Result<Option<Vec<f64>>, String> {
    let Some(times) = r.get("times") else {
        return Ok(None);
    };
    let Some(times) = times.as_array() else {
        return Err("\"times\" is not an array".into());
    };
    if times.is_empty() {
        return Err("\"times\" is empty".into());
    }
    let mut out = Vec::with_capacity(times.len());
    for (i, t) in times.iter().enumerate() {
        match t.as_f64().filter(|x| x.is_finite() && *x >= 0.0) {
            Some(s) => out.push(s),
            None => return Err(format!("run {} of \"times\" is not a time: {t}", i + 1)),
        }
    }
    Ok(Some(out))
}

fn summary_metrics(r: &Value) -> Result<Vec<Metric>, String> {
    let mut m = Vec::new();
    for key in ["mean", "stddev", "median", "min", "max", "user", "system"] {
        match f64_at(r, &[key]) {
            Some(s) => m.push(metric(
                format!("{key}_ms"),
                s * 1e3,
                Unit::Milliseconds,
                Better::Lower,
            )),
            // hyperfine writes null for the stddev of a single run.
            None if key == "stddev" => {}
            None => return Err(format!("no number for {key:?}")),
        }
    }
    if let Some(times) = r.get("times").and_then(Value::as_array) {
        m.push(metric(
            "runs",
            times.len() as f64,
            Unit::Count,
            Better::Neither,
        ));
    }
    Ok(m)
}
