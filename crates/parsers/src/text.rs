//! Small text helpers every parser shares: names, numbers, errors.

use std::borrow::Cow;

use perflab_core::{Better, Metric, Unit};

use crate::error::ParseError;

pub(crate) fn not_this(tool: &'static str, why: impl Into<String>) -> ParseError {
    ParseError::NotThisTool {
        tool,
        why: why.into(),
    }
}

pub(crate) fn bad(tool: &'static str, line: usize, why: impl Into<String>) -> ParseError {
    ParseError::Bad {
        tool,
        line,
        why: why.into(),
    }
}

/// A line shortened for an error message, so a megabyte of garbage is not echoed back.
pub(crate) fn shown(line: &str) -> String {
    const MAX: usize = 120;
    match line.char_indices().nth(MAX) {
        Some((at, _)) => format!("{:?}…", &line[..at]),
        None => format!("{line:?}"),
    }
}

/// Lower snake case from a tool's label: `L1-dcache-loads` → `l1_dcache_loads`.
pub(crate) fn snake(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// A finite number; "inf" and "nan" are not measurements.
pub(crate) fn num(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

/// A number that may carry thousands separators (`77,313,298,506`), as perf prints them
/// in an English locale. A comma not followed by exactly three digits means a locale with
/// a decimal comma, which would otherwise be read 100 times too large: None.
pub(crate) fn grouped_num(s: &str) -> Option<f64> {
    let s = s.trim();
    if !s.contains(',') {
        return num(s);
    }
    let (int_part, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let mut groups = int_part.split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 || !first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut digits = first.to_string();
    for g in groups {
        if g.len() != 3 || !g.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.push_str(g);
    }
    if let Some(f) = frac {
        digits.push('.');
        digits.push_str(f);
    }
    num(&digits)
}

/// Removes ANSI escape sequences (sockperf colours its summary, cyclictest moves the
/// cursor), so the text can be matched as printed.
pub(crate) fn strip_ansi(s: &str) -> Cow<'_, str> {
    if !s.contains('\u{1b}') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // CSI: parameters and intermediates, then one final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    Cow::Owned(out)
}

/// The value after `key` in `line` (`Min:   6` → "6"), up to the next whitespace.
pub(crate) fn word_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)? + key.len();
    line[at..].split_whitespace().next()
}

pub(crate) fn metric(name: impl Into<String>, value: f64, unit: Unit, better: Better) -> Metric {
    Metric::new(name, value, unit, better)
}

/// A percentile label as a metric name part: `99.900000` → `p99_9`, `50.000` → `p50`.
pub(crate) fn percentile_name(label: &str) -> Option<String> {
    let v = num(label)?;
    if !(0.0..=100.0).contains(&v) {
        return None;
    }
    let text = label.trim();
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    };
    Some(format!("p{}", text.replace('.', "_")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake("L1-dcache-loads"), "l1_dcache_loads");
        assert_eq!(snake("cpu_core/cycles/"), "cpu_core_cycles");
        assert_eq!(snake("cycles:u"), "cycles_u");
        assert_eq!(snake("--x--"), "x");
        assert_eq!(snake("é"), "");
    }

    #[test]
    fn grouped_numbers_refuse_decimal_commas() {
        assert_eq!(grouped_num("77,313,298,506"), Some(77_313_298_506.0));
        assert_eq!(grouped_num("1,234.5"), Some(1234.5));
        assert_eq!(grouped_num("0.92"), Some(0.92));
        assert_eq!(grouped_num("1,46"), None);
        assert_eq!(grouped_num("1234,567"), None);
        assert_eq!(grouped_num(",123"), None);
        assert_eq!(grouped_num("inf"), None);
    }

    #[test]
    fn ansi_sequences_are_removed() {
        assert_eq!(strip_ansi("a\u{1b}[2;35mb\u{1b}[0m"), "ab");
        assert_eq!(strip_ansi("\u{1b}[4Apolicy"), "policy");
        assert_eq!(strip_ansi("x\u{1b}"), "x");
    }

    #[test]
    fn percentile_names() {
        assert_eq!(percentile_name("99.900000").as_deref(), Some("p99_9"));
        assert_eq!(percentile_name("50.000000").as_deref(), Some("p50"));
        assert_eq!(percentile_name("99.990").as_deref(), Some("p99_99"));
        assert_eq!(percentile_name("100").as_deref(), Some("p100"));
        assert_eq!(percentile_name("150"), None);
        assert_eq!(percentile_name("x"), None);
    }

    #[test]
    fn long_lines_are_shortened() {
        let s = shown(&"é".repeat(500));
        assert!(s.ends_with('…') && s.chars().count() < 130, "{s}");
    }
}
