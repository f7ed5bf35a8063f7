//! Durations and shares as a person reads them in a reason (the same wording
//! `perflab-workloads` uses in its notes).

/// `850 ns`, `12.4 µs`, `41 ms`, `1.25 s`: three significant figures at most.
pub fn duration_text(ns: u64) -> String {
    let n = ns as f64;
    let (v, unit) = if ns < 1_000 {
        return format!("{ns} ns");
    } else if ns < 1_000_000 {
        (n / 1e3, "µs")
    } else if ns < 1_000_000_000 {
        (n / 1e6, "ms")
    } else {
        (n / 1e9, "s")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A fraction as a whole percentage, never claiming 100% or 0% for what is not.
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if (p > 99.0 && p < 100.0) || (p > 0.0 && p < 1.0) {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_text(850), "850 ns");
        assert_eq!(duration_text(12_400), "12.4 µs");
        assert_eq!(duration_text(41_000_000), "41.0 ms");
        assert_eq!(duration_text(1_250_000_000), "1.25 s");
        assert_eq!(duration_text(250_000_000), "250 ms");
        assert_eq!(percent(0.6), "60%");
        assert_eq!(percent(0.995), "99.5%");
        assert_eq!(percent(0.004), "0.4%");
    }
}
