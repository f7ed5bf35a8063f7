//! Values as a person reads them, each with its unit: a duration `50 µs` rather than
//! `0.00005`, and a measured figure with its unit and the digits that mean something
//! (`1685 MiB/s`, not `1685.402987`). A parameter's value prints by its role
//! ([`crate::ParamRoles::value_text`], which writes its durations here), so reports,
//! `show`, the progress lines and the adaptive status read alike.

use crate::units::Unit;

/// Seconds in the largest unit that keeps the figure at 1 or more: `50 µs`, `100 ms`,
/// `1.5 s`; up to three significant digits, no trailing zeros.
pub fn duration_text(seconds: f64) -> String {
    if seconds == 0.0 || !seconds.is_finite() {
        return format!("{seconds} s");
    }
    let a = seconds.abs();
    let (v, unit) = if a >= 1.0 {
        (seconds, "s")
    } else if a >= 1e-3 {
        (seconds * 1e3, "ms")
    } else if a >= 1e-6 {
        (seconds * 1e6, "µs")
    } else {
        (seconds * 1e9, "ns")
    };
    format!("{} {unit}", significant(v))
}

/// A measured figure with its unit: `1685 MiB/s`, `12.3 µs`, `0.0512` (a count).
pub fn figure_text(value: f64, unit: Unit) -> String {
    let symbol = match unit {
        Unit::Microseconds => "µs",
        u => u.symbol(),
    };
    let v = significant(value);
    match symbol {
        "" => v,
        "%" => format!("{v}%"),
        s => format!("{v} {s}"),
    }
}

/// Four significant digits at most (whole numbers keep all theirs), trailing zeros cut.
fn significant(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 || a == 0.0 {
        0
    } else {
        (3 - a.log10().floor() as i32).clamp(0, 12) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_their_largest_unit() {
        assert_eq!(duration_text(0.00005), "50 µs");
        assert_eq!(duration_text(0.1), "100 ms");
        assert_eq!(duration_text(10.0), "10 s");
        assert_eq!(duration_text(1.5), "1.5 s");
    }

    #[test]
    fn figures_carry_their_unit_and_no_noise_digits() {
        assert_eq!(figure_text(1685.402987, Unit::MibPerSecond), "1685 MiB/s");
        assert_eq!(figure_text(156296.264486, Unit::PerSecond), "156296 /s");
        assert_eq!(figure_text(12.34567, Unit::Microseconds), "12.35 µs");
        assert_eq!(figure_text(0.051234, Unit::Count), "0.05123");
        assert_eq!(figure_text(3.0, Unit::Percent), "3%");
    }
}
