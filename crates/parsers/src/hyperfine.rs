//! `hyperfine --export-json FILE`: per benchmarked command, the wall-clock statistics
//! (seconds in the file, milliseconds here) and the user/system CPU time.

use perflab_core::{Better, Metric, Unit};
use serde_json::Value;

use crate::json::{document, f64_at, line_of};
use crate::text::{bad, metric, not_this};
use crate::{ParseError, Parsed, ParsedRow};

const TOOL: &str = "hyperfine";

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
    let mut rows = Vec::new();
    for r in results {
        let command = r
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let quoted = serde_json::to_string(&command).unwrap_or_default();
        let at = line_of(text, &quoted, first_line);
        let metrics =
            command_metrics(r).map_err(|why| bad(TOOL, at, format!("{command}: {why}")))?;
        if let Some(codes) = r.get("exit_codes").and_then(Value::as_array) {
            let failed = codes.iter().filter(|c| c.as_i64() != Some(0)).count();
            if failed > 0 {
                out.notes.push(format!(
                    "hyperfine: {failed} of {} runs of {command:?} exited non-zero",
                    codes.len()
                ));
            }
        }
        let mut params = vec![("command".to_string(), command)];
        if let Some(p) = r.get("parameters").and_then(Value::as_object) {
            for (k, v) in p {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                params.push((k.clone(), v));
            }
        }
        rows.push(ParsedRow {
            params,
            series: None,
            metrics,
        });
    }
    if rows.len() == 1 {
        if let Some(row) = rows.pop() {
            out.metrics = row.metrics;
        }
    } else {
        out.rows = rows;
    }
    Ok(out)
}

fn command_metrics(r: &Value) -> Result<Vec<Metric>, String> {
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
