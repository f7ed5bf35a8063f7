//! Values that cannot be: a count, a rate, a size, a bandwidth or a duration below zero, a
//! figure beyond what its unit can physically be (a count past 2^64, a bandwidth of 1e308),
//! or one that is infinite or not a number. The rules live here, one ceiling per unit
//! ([`ceiling`]) and the sign with the unit ([`Unit::may_be_negative`]), so that every
//! boundary where outside figures come in (the parsers of other tools' output,
//! `perflab-json` documents, a fingerprint's timing probe) applies the same ones, and a
//! file holding such a value is refused whole instead of stored to mislead a summary.

use std::fmt;

use crate::output::{HistogramData, Metric, WorkloadOutput};
use crate::record::MeasurementRecord;
use crate::timing_probe::TimingProbe;
use crate::units::Unit;

/// Whether a figure that is not a number may stand for "undefined". A `perflab-json`
/// document writes an undefined figure (the mean of an empty histogram) as `null`, read
/// back as NaN; a tool's text output has no such convention, so a `nan` there is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nan {
    Undefined,
    Refused,
}

/// The largest magnitude a figure of `unit` can physically have. Generous by orders of
/// magnitude over anything measured (so no real figure is refused), and far below what a
/// corrupted or hostile file writes (1e308, 2^63).
pub fn ceiling(unit: Unit) -> f64 {
    // Counters and sizes are 64-bit in every kernel and tool.
    const U64: f64 = 18_446_744_073_709_551_615.0;
    // A thousand years: no measurement or run lasts longer.
    const SECONDS: f64 = 1000.0 * 365.25 * 86_400.0;
    // 1 PB/s: a hundred times the fastest memory there is.
    const BYTES_PER_S: f64 = 1e15;
    match unit {
        Unit::Count | Unit::Bytes => U64,
        // Events per second: a 10 GHz clock on a million CPUs is 1e16.
        Unit::PerSecond => 1e16,
        Unit::Nanoseconds => SECONDS * 1e9,
        Unit::Microseconds => SECONDS * 1e6,
        Unit::Milliseconds => SECONDS * 1e3,
        Unit::Seconds => SECONDS,
        Unit::BytesPerSecond => BYTES_PER_S,
        Unit::MibPerSecond => BYTES_PER_S / (1u64 << 20) as f64,
        // A change of a million times, or the CPU time of ten thousand CPUs, is 1e6 %.
        Unit::Percent => 1e9,
        Unit::Ratio => 1e12,
    }
}

/// What is wrong with a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Problem {
    NotANumber,
    Infinite,
    Negative,
    /// Its magnitude is above [`ceiling`] of its unit.
    TooLarge,
    /// A share (the part of a whole, in percent) outside 0 to 100.
    NotAShare,
    /// Zero where only a positive value means anything (a probe's time per operation).
    Zero,
}

/// What is wrong with one value.
#[derive(Clone, Debug, PartialEq)]
pub struct Impossible {
    /// The field, as a person finds it in the file (`bandwidth_mib_s`, `histogram rtt min`).
    pub field: String,
    pub value: f64,
    pub unit: Unit,
    pub problem: Problem,
}

impl fmt::Display for Impossible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // -1e308 written out is 309 digits; a person reads the exponent.
        let shown = crate::limits::number(self.value);
        let field = &self.field;
        let noun = self.unit.noun();
        match self.problem {
            Problem::NotANumber => write!(f, "field {field}: not a number"),
            Problem::Infinite => write!(f, "field {field}: {shown} is infinite"),
            Problem::Negative => {
                write!(
                    f,
                    "field {field}: {shown} is negative, and {noun} cannot be"
                )
            }
            Problem::TooLarge => write!(
                f,
                "field {field}: {shown} is more than {noun} can be (at most {}{})",
                if self.unit.may_be_negative() {
                    "±"
                } else {
                    ""
                },
                crate::limits::number(ceiling(self.unit))
            ),
            Problem::Zero => write!(f, "field {field}: 0, and {noun} here is above zero"),
            Problem::NotAShare => write!(
                f,
                "field {field}: {shown} is not a share, which is 0 to 100 percent"
            ),
        }
    }
}

/// Checks one value of `unit`; `field` names it in the error.
pub fn check_value(field: &str, value: f64, unit: Unit, nan: Nan) -> Result<(), Impossible> {
    check_signed(field, value, unit, nan, unit.may_be_negative())
}

/// Checks one figure a tool reported. A tool reports readings, never changes, so even a
/// percentage or a ratio cannot be below zero (perf's multiplexing share, fio's CPU use,
/// a relative deviation); `nan` is refused, as a tool's text has no "undefined".
pub fn check_reading(field: &str, value: f64, unit: Unit) -> Result<(), Impossible> {
    check_signed(field, value, unit, Nan::Refused, false)
}

/// Checks a share in percent: the part of a whole (the time a counter ran, the packets
/// lost), so 0 to 100.
pub fn check_share(field: &str, value: f64) -> Result<(), Impossible> {
    check_reading(field, value, Unit::Percent)?;
    if value > 100.0 {
        return Err(Impossible {
            field: field.to_string(),
            value,
            unit: Unit::Percent,
            problem: Problem::NotAShare,
        });
    }
    Ok(())
}

fn check_signed(
    field: &str,
    value: f64,
    unit: Unit,
    nan: Nan,
    negative_allowed: bool,
) -> Result<(), Impossible> {
    let problem = if value.is_nan() {
        (nan == Nan::Refused).then_some(Problem::NotANumber)
    } else if value.is_infinite() {
        Some(Problem::Infinite)
    } else if value < 0.0 && !negative_allowed {
        Some(Problem::Negative)
    } else if value.abs() > ceiling(unit) {
        Some(Problem::TooLarge)
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(Impossible {
            field: field.to_string(),
            value,
            unit,
            problem,
        }),
    }
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

/// A fingerprint's timing probe: each reading a positive time per operation or bandwidth
/// within its unit's ceiling, the tries a count, the time it was taken a time. A reading
/// in a unit this perflab does not know is held to being finite and above zero.
pub fn check_probe(p: &TimingProbe) -> Result<(), Impossible> {
    for r in &p.readings {
        let field = format!("probe {}", r.name);
        let unit = match r.unit.as_str() {
            "ns/op" | "ns" => Unit::Nanoseconds,
            "MiB/s" => Unit::MibPerSecond,
            "ops/s" | "/s" => Unit::PerSecond,
            _ => Unit::Ratio,
        };
        check_reading(&field, r.value, unit)?;
        if r.value == 0.0 {
            // No operation takes no time and no machine copies at 0 MiB/s: a reading of
            // zero is a probe that did not run.
            return Err(Impossible {
                field,
                value: r.value,
                unit,
                problem: Problem::Zero,
            });
        }
    }
    check_reading("probe at", p.at, Unit::Seconds)?;
    check_reading("probe tries", f64::from(p.tries), Unit::Count)
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

    /// 1e308 came in as fio's iops and write_io_bytes, iperf3's and dmatest's bandwidths
    /// and a seed table's MiB/s; each unit has a ceiling, stated in the refusal.
    #[test]
    fn a_figure_beyond_what_its_unit_can_be_is_refused_naming_the_ceiling() {
        for unit in [
            Unit::Count,
            Unit::PerSecond,
            Unit::Nanoseconds,
            Unit::Microseconds,
            Unit::Milliseconds,
            Unit::Seconds,
            Unit::Bytes,
            Unit::BytesPerSecond,
            Unit::MibPerSecond,
            Unit::Percent,
            Unit::Ratio,
        ] {
            let c = ceiling(unit);
            assert!(check_value("x", c, unit, Nan::Refused).is_ok(), "{unit:?}");
            let e = check_value("iops", 1e308, unit, Nan::Refused).unwrap_err();
            assert_eq!(e.problem, Problem::TooLarge);
            let text = e.to_string();
            assert!(
                text.starts_with("field iops: 1e308 is more than") && text.len() < 100,
                "{text}"
            );
            if unit.may_be_negative() {
                assert!(check_value("x", -1e308, unit, Nan::Refused).is_err());
            }
        }
        assert_eq!(
            check_value("write_io_bytes", 1e308, Unit::Bytes, Nan::Refused)
                .unwrap_err()
                .to_string(),
            "field write_io_bytes: 1e308 is more than a size can be (at most 1.8446744073709552e19)"
        );
        // Real figures pass: a day in ns, 200 GB/s, 2^63 bytes.
        assert!(check_value("t", 8.64e13, Unit::Nanoseconds, Nan::Refused).is_ok());
        assert!(check_value("bw", 2e11, Unit::BytesPerSecond, Nan::Refused).is_ok());
        assert!(check_value("b", 9.2e18, Unit::Bytes, Nan::Refused).is_ok());
    }

    /// perf stat's `cpu_migrations_running_pct = -50` and `task_clock_rel_stddev_pct =
    /// -0.88` were stored: a tool's reading is never negative, a share never above 100.
    #[test]
    fn a_tools_percentages_are_readings_and_shares_are_0_to_100() {
        let e = check_reading("task_clock_rel_stddev_pct", -0.88, Unit::Percent).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field task_clock_rel_stddev_pct: -0.88 is negative, and a percentage cannot be"
        );
        assert!(check_reading("x", -9.2e18, Unit::Percent).is_err());
        assert!(check_reading("x", f64::NAN, Unit::Percent).is_err());
        assert!(check_reading("cpu_pct", 350.0, Unit::Percent).is_ok());
        assert!(check_share("lost_pct", 0.0).is_ok() && check_share("lost_pct", 100.0).is_ok());
        assert_eq!(
            check_share("cpu_migrations_running_pct", 150.0)
                .unwrap_err()
                .to_string(),
            "field cpu_migrations_running_pct: 150 is not a share, which is 0 to 100 percent"
        );
        assert_eq!(
            check_share("cpu_migrations_running_pct", -50.0)
                .unwrap_err()
                .problem,
            Problem::Negative
        );
    }

    #[test]
    fn a_timing_probe_holds_positive_finite_readings() {
        use crate::timing_probe::ProbeReading;
        let probe = |value: f64, unit: &str| TimingProbe {
            readings: vec![ProbeReading {
                name: "integer loop".into(),
                unit: unit.into(),
                value,
                better: crate::Better::Lower,
            }],
            tries: 7,
            build: "release".into(),
            at: 1.7e9,
        };
        assert!(check_probe(&probe(1.9, "ns/op")).is_ok());
        assert!(check_probe(&probe(9000.0, "MiB/s")).is_ok());
        for (v, unit, why) in [
            (-1.0, "ns/op", "negative"),
            (0.0, "ns/op", "above zero"),
            (1e308, "MiB/s", "more than a bandwidth can be"),
            (f64::NAN, "ns/op", "not a number"),
            (1e308, "furlongs", "more than"),
        ] {
            let e = check_probe(&probe(v, unit)).unwrap_err().to_string();
            assert!(
                e.starts_with("field probe integer loop: ") && e.contains(why),
                "{e}"
            );
        }
        let mut p = probe(1.0, "ns/op");
        p.at = -5.0;
        assert!(check_probe(&p)
            .unwrap_err()
            .to_string()
            .contains("probe at"));
    }
}
