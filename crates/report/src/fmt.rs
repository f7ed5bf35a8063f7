//! Number formatting shared by the renderers, so every report prints figures alike.

pub mod compact;

/// A measured value: two decimals from 1 up (the seed prints 286441.60), four
/// significant digits below 1 so small latencies keep their precision.
pub fn value(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        let decimals = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
        format!("{x:.decimals$}")
    }
}

/// A count-like telemetry figure: whole numbers without decimals (medians of an even
/// number of repetitions may end in .5, which is kept).
pub fn count(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.1}")
    }
}

/// A signed percentage with two decimals: `+4.37%`.
pub fn pct(x: f64) -> String {
    format!("{x:+.2}%")
}

/// An interval of percentages: `[-4.41%, -4.33%]`.
pub fn pct_ci(ci: (f64, f64)) -> String {
    format!("[{:+.2}%, {:+.2}%]", ci.0, ci.1)
}

/// An interval of measured values: `[0.0012, 0.0015]`.
pub fn value_ci(ci: (f64, f64)) -> String {
    format!("[{}, {}]", value(ci.0), value(ci.1))
}

/// `variants: 4k = backing=4k; 2m = hugepages=2M:32, backing=2m`: the knobs and
/// parameters each named variant set, as the run's spec holds them; `None` when none sets
/// anything (an imported run, network paths named by the variant itself).
pub fn variant_settings(info: &perflab_core::record::RunInfo, names: &[&String]) -> Option<String> {
    use perflab_core::spec::Scalar;
    use perflab_core::ParamValue;
    // Each value in its role's unit, as the rows' labels beside it.
    let roles = crate::hints::param_roles(info);
    let said: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let v = info.spec.variants.iter().find(|v| &&v.name == name)?;
            let mut set: Vec<String> = v
                .knobs
                .iter()
                .map(|(k, value)| format!("{k}={value}"))
                .collect();
            set.extend(v.params.iter().map(|(k, value)| {
                let value = match value {
                    Scalar::Bool(b) => ParamValue::Bool(*b),
                    Scalar::Int(i) => ParamValue::Int(*i),
                    Scalar::Float(x) => ParamValue::Float(*x),
                    Scalar::Str(s) => ParamValue::Str(s.clone()),
                };
                roles.named_value(k, &value)
            }));
            // A variant that sets nothing is named by what it is (a network path).
            (!set.is_empty()).then(|| format!("{name} = {}", set.join(", ")))
        })
        .collect();
    (!said.is_empty()).then(|| format!("variants: {}", said.join("; ")))
}

/// A whole number with thousands separated, as the seed writes counts: `2,900`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Text padded (or not) to `width`, right-aligned.
pub fn right(s: &str, width: usize) -> String {
    format!("{s:>width$}")
}

/// A banner as in the seed: the title between two lines of `=` as long as it.
pub fn banner(title: &str) -> String {
    let line = "=".repeat(title.chars().count());
    format!("{line}\n{title}\n{line}\n")
}

/// Seconds since the Unix epoch as a UTC date and time, `2026-11-18 11:06:40`.
/// (Civil-from-days, H. Hinnant, for the proleptic Gregorian calendar.)
pub fn utc(epoch: f64) -> String {
    let secs = epoch.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(value(286441.6), "286441.60");
        assert_eq!(value(0.001234), "0.001234");
        assert_eq!(value(0.5), "0.5000");
        assert_eq!(value(0.0), "0");
        assert_eq!(count(1381.0), "1381");
        assert_eq!(count(1380.5), "1380.5");
        assert_eq!(pct(-4.3695), "-4.37%");
        assert_eq!(pct_ci((-4.41, 4.0)), "[-4.41%, +4.00%]");
        assert_eq!(value_ci((0.5, 286441.6)), "[0.5000, 286441.60]");
        assert_eq!(banner("ab"), "==\nab\n==\n");
    }
}
