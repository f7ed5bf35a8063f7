//! Short number formats for tick labels and hover text.

const DECIMAL: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];

const BINARY: [(f64, &str); 5] = [
    (1_125_899_906_842_624.0, "P"),
    (1_099_511_627_776.0, "T"),
    (1_073_741_824.0, "G"),
    (1_048_576.0, "M"),
    (1024.0, "K"),
];

/// `v` with at most three significant digits and a decimal suffix: 1500 → "1.5k".
pub(crate) fn short(v: f64) -> String {
    with_suffix(v, &DECIMAL)
}

/// `v` bytes with a binary suffix: 4096 → "4K", 2097152 → "2M", 1536 → "1.5K".
pub(crate) fn bytes(v: f64) -> String {
    with_suffix(v, &BINARY)
}

fn with_suffix(v: f64, units: &[(f64, &str)]) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a >= units[0].0 * 1e3 {
        return format!("{v:.2e}");
    }
    for &(factor, suffix) in units {
        if a >= factor {
            return format!("{}{suffix}", sig3(v / factor));
        }
    }
    sig3(v)
}

/// Three significant digits, trailing zeros trimmed; scientific below 1e-9.
pub(crate) fn sig3(v: f64) -> String {
    sig(v, 3)
}

/// Five significant digits, for hover text where the reader wants the number itself.
pub(crate) fn precise(v: f64) -> String {
    if v.abs() >= 1e6 && v.is_finite() {
        return format!("{v:.4e}");
    }
    sig(v, 5)
}

fn sig(v: f64, digits: u32) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 {
            "0".to_string()
        } else {
            format!("{v}")
        };
    }
    let a = v.abs();
    if a < 1e-9 {
        return format!("{v:.2e}");
    }
    let decimals = (f64::from(digits) - 1.0 - a.log10().floor()).clamp(0.0, 12.0) as usize;
    trim(format!("{v:.decimals$}"))
}

/// Linear tick labels sharing one suffix and a number of decimals fit for `step`, so
/// neighbouring ticks never print alike (0.5M, 1M, 1.5M; 1.0002, 1.0004).
pub(crate) fn linear_labels(ticks: &[f64], step: f64) -> Vec<String> {
    let max_abs = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    let (unit, suffix) = if max_abs >= 1e4 {
        DECIMAL
            .iter()
            .find(|(f, _)| max_abs >= *f)
            .map_or((1.0, ""), |&(f, s)| (f, s))
    } else {
        (1.0, "")
    };
    let scaled_step = step / unit;
    let decimals = if scaled_step >= 1.0 || !scaled_step.is_finite() || scaled_step <= 0.0 {
        0
    } else {
        (-scaled_step.log10() - 1e-9).ceil().clamp(0.0, 15.0) as usize
    };
    ticks
        .iter()
        .map(|&t| {
            let t = if t == 0.0 { 0.0 } else { t };
            let text = trim(format!("{:.decimals$}", t / unit));
            if text == "0" || text == "-0" {
                "0".to_string()
            } else {
                format!("{text}{suffix}")
            }
        })
        .collect()
}

fn trim(s: String) -> String {
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
    fn short_numbers() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(1.0), "1");
        assert_eq!(short(1000.0), "1k");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(0.01), "0.01");
        assert_eq!(short(123456.0), "123k");
        assert_eq!(short(-2e6), "-2M");
        assert_eq!(short(f64::NAN), "NaN");
        assert_eq!(precise(1234.5678), "1234.6");
        assert_eq!(precise(0.000123456), "0.00012346");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(bytes(512.0), "512");
        assert_eq!(bytes(4096.0), "4K");
        assert_eq!(bytes(65536.0), "64K");
        assert_eq!(bytes(2.0 * 1048576.0), "2M");
        assert_eq!(bytes(1073741824.0), "1G");
        assert_eq!(bytes(1536.0), "1.5K");
    }

    #[test]
    fn linear_labels_share_suffix_and_stay_distinct() {
        let ticks = [0.0, 500_000.0, 1_000_000.0, 1_500_000.0];
        assert_eq!(
            linear_labels(&ticks, 500_000.0),
            ["0", "0.5M", "1M", "1.5M"]
        );
        let fine = [1.0002, 1.0004, 1.0006];
        assert_eq!(linear_labels(&fine, 0.0002), ["1.0002", "1.0004", "1.0006"]);
        assert_eq!(linear_labels(&[-0.0, 2.0], 2.0), ["0", "2"]);
    }
}
