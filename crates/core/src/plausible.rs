//! Values that cannot be: a count, a rate, a size, a bandwidth or a duration below zero, or
//! a figure that is infinite or not a number. The rule lives with the unit
//! ([`Unit::may_be_negative`]) so that every boundary where outside figures come in (the
//! parsers of other tools' output, `perflab-json` documents) applies the same one, and a
//! file holding such a value is refused whole instead of stored to mislead a summary.

use std::fmt;

use crate::output::{HistogramData, Metric, WorkloadOutput};
use crate::record::MeasurementRecord;
use crate::units::Unit;

/// Whether a figure that is not a number may stand for "undefined". A `perflab-json`
/// document writes an undefined figure (the mean of an empty histogram) as `null`, read
/// back as NaN; a tool's text output has no such convention, so a `nan` there is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nan {
    Undefined,
    Refused,
}

/// What is wrong with one value.
#[derive(Clone, Debug, PartialEq)]
pub struct Impossible {
    /// The field, as a person finds it in the file (`bandwidth_mib_s`, `histogram rtt min`).
    pub field: String,
    pub value: f64,
    pub unit: Unit,
}

impl fmt::Display for Impossible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.value;
        // -1e308 written out is 309 digits; a person reads the exponent.
        let shown = crate::limits::number(v);
        if v.is_nan() {
            write!(f, "field {}: not a number", self.field)
        } else if v.is_infinite() {
            write!(f, "field {}: {shown} is infinite", self.field)
        } else {
            write!(
                f,
                "field {}: {shown} is negative, and {} cannot be",
                self.field,
                self.unit.noun()
            )
        }
    }
}

/// Checks one value of `unit`; `field` names it in the error.
pub fn check_value(field: &str, value: f64, unit: Unit, nan: Nan) -> Result<(), Impossible> {
    let ok = if value.is_nan() {
        nan == Nan::Undefined
    } else {
        value.is_finite() && (value >= 0.0 || unit.may_be_negative())
    };
    if ok {
        return Ok(());
    }
    Err(Impossible {
        field: field.to_string(),
        value,
        unit,
    })
}

pub fn check_metric(m: &Metric, nan: Nan) -> Result<(), Impossible> {
    check_value(&m.name, m.value, m.unit, nan)
}

/// Every summary figure of a histogram is a value of its unit (the standard deviation too:
/// it is never negative, whatever the unit).
pub fn check_histogram(h: &HistogramData, nan: Nan) -> Result<(), Impossible> {
    // A histogram with overflowed samples states its censored figures as NaN: not known,
    // by design, whatever the source.
    let nan = if h.above.is_some() {
        Nan::Undefined
    } else {
        nan
    };
    if let Some(a) = h.above {
        check_value(
            &format!("histogram {} range", h.name),
            a.limit,
            h.unit,
            Nan::Refused,
        )?;
    }
    let figures = [
        ("min", h.min),
        ("mean", h.mean),
        ("max", h.max),
        ("p50", h.p50),
        ("p90", h.p90),
        ("p99", h.p99),
        ("p99.9", h.p999),
        ("p99.99", h.p9999),
    ];
    for (name, v) in figures {
        check_value(&format!("histogram {} {name}", h.name), v, h.unit, nan)?;
    }
    // A spread is never negative, whatever its unit.
    let unit = if h.unit.may_be_negative() {
        Unit::Count
    } else {
        h.unit
    };
    check_value(&format!("histogram {} stddev", h.name), h.stddev, unit, nan)
}

pub fn check_output(o: &WorkloadOutput, nan: Nan) -> Result<(), Impossible> {
    for m in &o.metrics {
        check_metric(m, nan)?;
    }
    for h in &o.histograms {
        check_histogram(h, nan)?;
    }
    Ok(())
}

/// A stored measurement: its duration, figures and telemetry. `started_at` is a point in
/// time, not a quantity of a unit, and is left alone.
pub fn check_record(r: &MeasurementRecord, nan: Nan) -> Result<(), Impossible> {
    check_value("elapsed_s", r.elapsed_s, Unit::Seconds, nan)?;
    check_output(&r.output, nan)?;
    for t in &r.telemetry {
        let cpu = t.cpu.map(|c| format!(" cpu {c}")).unwrap_or_default();
        check_value(
            &format!("telemetry {} {}{cpu}", t.source, t.key),
            t.value,
            t.unit,
            nan,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Better;

    #[test]
    fn quantities_cannot_be_negative_but_changes_can() {
        let m = |v, unit| Metric::new("x", v, unit, Better::Higher);
        for unit in [
            Unit::Count,
            Unit::PerSecond,
            Unit::Nanoseconds,
            Unit::Seconds,
            Unit::Bytes,
            Unit::MibPerSecond,
        ] {
            assert!(check_metric(&m(0.0, unit), Nan::Refused).is_ok());
            let e = check_metric(&m(-1.0, unit), Nan::Refused).unwrap_err();
            assert!(e.to_string().contains("-1 is negative"), "{e}");
        }
        assert!(check_metric(&m(-5.0, Unit::Percent), Nan::Refused).is_ok());
        assert!(check_metric(&m(-5.0, Unit::Ratio), Nan::Refused).is_ok());
        let inf = check_metric(&m(f64::INFINITY, Unit::Percent), Nan::Refused).unwrap_err();
        assert!(inf.to_string().contains("infinite"), "{inf}");
        assert!(check_metric(&m(f64::NAN, Unit::Count), Nan::Refused).is_err());
        assert!(check_metric(&m(f64::NAN, Unit::Count), Nan::Undefined).is_ok());
        assert_eq!(
            check_metric(&m(-163306.0, Unit::PerSecond), Nan::Refused)
                .unwrap_err()
                .to_string(),
            "field x: -163306 is negative, and a rate cannot be"
        );
    }
}
