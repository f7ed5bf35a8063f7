//! The boundary every parser's result crosses: a figure its unit says cannot be (a negative
//! rate, an infinite latency, a `nan`) refuses the whole output, naming where it is, so no
//! parser has to remember the rule and none can let such a value into the store.

use perflab_core::plausible::{check_histogram, check_metric, Impossible, Nan};

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
        check_metric(m, Nan::Refused).map_err(|e| refuse("summary".into(), e))?;
    }
    for (i, row) in parsed.rows.iter().enumerate() {
        for m in &row.metrics {
            check_metric(m, Nan::Refused).map_err(|e| refuse(row_place(i, row), e))?;
        }
        for h in &row.histograms {
            check_histogram(h, Nan::Refused).map_err(|e| refuse(row_place(i, row), e))?;
        }
    }
    for h in &parsed.histograms {
        check_histogram(h, Nan::Refused).map_err(|e| refuse("histogram".into(), e))?;
    }
    Ok(())
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
    use perflab_core::{Better, Metric, Unit};

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
