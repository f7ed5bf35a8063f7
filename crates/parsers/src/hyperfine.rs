//! `hyperfine --export-json FILE`: every run of every benchmarked command, as a
//! repetition. Each run is one [`ParsedRow`] holding that run's wall-clock time (seconds
//! in the file, milliseconds here) under the command (and hyperfine's `-P`/`-L`
//! parameters), so rows of one command share their parameters and `perflab import` files
//! them as repetitions of one point, with perflab's own statistics over them rather than
//! hyperfine's mean alone. A file of one command also carries hyperfine's summary (mean,
//! stddev, median, min, max, user and system CPU time, number of runs) in
//! [`Parsed::metrics`], which is what `exec` reports for one measurement.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};
use serde_json::Value;

use crate::error::ParseError;
use crate::json::{document, f64_at, line_of};
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "hyperfine",
    help: "hyperfine --export-json file: every run of each command as a repetition \
           (time_ms); one command also gives hyperfine's mean, stddev, median, min, \
           max (ms)",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "hyperfine";

/// The per-run metric: one run's wall-clock time.
pub(crate) const RUN_METRIC: &str = "time_ms";

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
    let mut summaries = Vec::new();
    for r in results {
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
        if let Some(codes) = r.get("exit_codes").and_then(Value::as_array) {
            let failed = codes.iter().filter(|c| c.as_i64() != Some(0)).count();
            if failed > 0 {
                out.notes.push(format!(
                    "hyperfine: {failed} of {} runs of {command:?} exited non-zero",
                    codes.len()
                ));
            }
        }
        let mut params = vec![("command".to_string(), command.clone())];
        if let Some(p) = r.get("parameters").and_then(Value::as_object) {
            for (k, v) in p {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                params.push((k.clone(), v));
            }
        }
        match times {
            Some(times) => out.rows.extend(times.into_iter().map(|t| ParsedRow {
                histograms: Vec::new(),
                params: params.clone(),
                series: None,
                metrics: vec![metric(
                    RUN_METRIC,
                    t * 1e3,
                    Unit::Milliseconds,
                    Better::Lower,
                )],
            })),
            // Without the runs, hyperfine's summary is all there is: one row of it.
            None => {
                out.notes.push(format!(
                    "hyperfine: no per-run \"times\" for {command:?}; its summary is one \
                     measurement"
                ));
                out.rows.push(ParsedRow {
                    histograms: Vec::new(),
                    params,
                    series: None,
                    metrics: summary.clone(),
                });
            }
        }
        summaries.push(summary);
    }
    // hyperfine's summary describes all the rows only when they are one command's runs.
    if let [summary] = summaries.as_slice() {
        out.metrics = summary.clone();
    }
    Ok(out)
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
