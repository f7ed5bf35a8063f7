//! The boundary every parser's result crosses: a figure its unit says cannot be (a negative
//! rate or percentage, an infinite latency, a `nan`, a bandwidth of 1e308) refuses the
//! whole output, naming where it is, so no parser has to remember the rule and none can
//! let such a value into the store. A tool reports readings, never changes, so no metric
//! here is below zero whatever its unit; shares (0 to 100) are checked by the parser that
//! knows which of its percentages are one ([`share`]).

use perflab_core::plausible::{check_histogram, check_reading, check_share, Impossible, Nan};
use perflab_core::Metric;

use crate::error::ParseError;
use crate::parsed::Parsed;

/// Checks every figure of `parsed`; the error names the row (1-based, as a person counts
/// the rows of the tool's table), or the summary or histogram it sits in, and the field.
pub(crate) fn check(tool: &'static str, parsed: &Parsed) -> Result<(), ParseError> {
    let refuse = |place: String, why: Impossible| ParseError::Impossible {
        tool,
        place,
        why: why.to_string(),
    };
    for m in &parsed.metrics {
        reading(m).map_err(|e| refuse("summary".into(), e))?;
    }
    for (i, row) in parsed.rows.iter().enumerate() {
        for m in &row.metrics {
            reading(m).map_err(|e| refuse(row_place(i, row), e))?;
        }
        for h in &row.histograms {
            check_histogram(h, Nan::Refused).map_err(|e| refuse(row_place(i, row), e))?;
        }
    }
    for h in &parsed.histograms {
        check_histogram(h, Nan::Refused).map_err(|e| refuse("histogram".into(), e))?;
    }
    for t in &parsed.telemetry {
        check_reading(&t.key, t.value, t.unit).map_err(|e| refuse("telemetry".into(), e))?;
    }
    for s in &parsed.summaries {
        for m in &s.metrics {
            let place = match &s.series {
                Some(series) => format!("summary of {series}"),
                None => "summary".into(),
            };
            reading(m).map_err(|e| refuse(place, e))?;
        }
    }
    Ok(())
}

fn reading(m: &Metric) -> Result<(), Impossible> {
    check_reading(&m.name, m.value, m.unit)
}

/// A share in percent (perf's time on a counter, iperf3's packets lost) read at `line` of
/// `tool`'s output: 0 to 100, or the error naming the line.
pub(crate) fn share(
    tool: &'static str,
    line: usize,
    name: &str,
    v: f64,
) -> Result<f64, ParseError> {
    check_share(name, v).map_err(|e| ParseError::Bad {
        tool,
        line,
        why: e.to_string(),
    })?;
    Ok(v)
}

fn row_place(i: usize, row: &crate::parsed::ParsedRow) -> String {
    let mut ids: Vec<String> = row.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    ids.extend(row.series.iter().map(|s| format!("series {s}")));
    if ids.is_empty() {
        format!("row {}", i + 1)
    } else {
        format!("row {} ({})", i + 1, ids.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParsedRow;
    use perflab_core::{Better, Unit};

    #[test]
    fn a_negative_rate_in_a_row_is_named_by_row_and_field() {
        let ok = Metric::new("ops_per_s", 5.0, Unit::PerSecond, Better::Higher);
        let bad = Metric::new("ops_per_s", -163306.0, Unit::PerSecond, Better::Higher);
        let parsed = Parsed {
            rows: vec![
                ParsedRow {
                    params: vec![("size".into(), "64".into())],
                    metrics: vec![ok],
                    ..Default::default()
                },
                ParsedRow {
                    params: vec![("size".into(), "128".into())],
                    metrics: vec![bad],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let e = check("perf bench", &parsed).unwrap_err().to_string();
        assert_eq!(
            e,
            "row 2 (size=128), field ops_per_s: -163306 is negative, and a rate cannot be"
        );
    }
}
