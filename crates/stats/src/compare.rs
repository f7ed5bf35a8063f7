//! Two-sample comparison of a baseline A with a candidate B: medians, change in percent
//! with its interval, the Mann-Whitney p-value, the Hodges-Lehmann shift and a verdict.

use perflab_core::Better;
use serde::Serialize;

use crate::config::{trim_float, StatsConfig};
use crate::hodges_lehmann::{hodges_lehmann, Shift};
use crate::mann_whitney::{mann_whitney, min_p_value, reps_needed, MannWhitney};
use crate::sample::Sample;
use crate::summary::Summary;
use crate::verdict::{regression_pct, Verdict};

/// Everything known about B relative to A.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Summary,
    pub b: Summary,
    pub better: Better,
    /// (median B − median A) / median A × 100; `None` when median A is 0.
    pub change_pct: Option<f64>,
    /// The Hodges-Lehmann shift interval divided by median A, in percent.
    pub change_ci_pct: Option<(f64, f64)>,
    /// Positive = worse (see [`regression_pct`]); `None` when `change_pct` is.
    pub regression_pct: Option<f64>,
    /// The Mann-Whitney p-value of this row read alone.
    pub p_value: f64,
    /// `p_value` adjusted for the other rows of the same comparison (Benjamini-Hochberg,
    /// see [`crate::fdr`]); equal to `p_value` until [`crate::adjust_family`] runs. The
    /// verdict is drawn from this one.
    pub p_adjusted: f64,
    pub test: MannWhitney,
    pub shift: Shift,
    pub verdict: Verdict,
    /// Caveats a reader must see: significance impossible at these sizes, an interval
    /// widened for lack of data, a zero baseline.
    pub notes: Vec<String>,
}

impl Comparison {
    /// The verdict's symbol, e.g. `~`.
    pub fn symbol(&self) -> &'static str {
        self.verdict.symbol()
    }

    /// Draws the verdict from `p_adjusted` and the noise threshold (benchstat's rule).
    pub(crate) fn redecide(&mut self, cfg: &StatsConfig) {
        let (a, b) = (self.a.median, self.b.median);
        let beyond_noise = match self.change_pct {
            Some(c) => c.abs() > cfg.noise_pct,
            None => b != a,
        };
        self.verdict = Verdict::decide(
            self.p_adjusted < cfg.alpha,
            beyond_noise,
            b > a,
            self.better,
        );
    }
}

/// Compares B against the baseline A for a metric whose better direction is `better`.
pub fn compare(a: &Sample, b: &Sample, better: Better, cfg: &StatsConfig) -> Comparison {
    let sa = Summary::new(a, cfg);
    let sb = Summary::new(b, cfg);
    let test = mann_whitney(a, b);
    let shift = hodges_lehmann(a, b, cfg.confidence);
    let mut notes = Vec::new();

    let base = sa.median;
    let (change_pct, change_ci_pct) = if base != 0.0 {
        let scale = 100.0 / base.abs();
        (
            Some((sb.median - base) * scale),
            Some((shift.ci.0 * scale, shift.ci.1 * scale)),
        )
    } else {
        notes.push(
            "the baseline median is 0, so the change in percent is undefined; \
             the verdict rests on significance alone"
                .to_string(),
        );
        (None, None)
    };

    let floor = min_p_value(a.len(), b.len());
    if floor >= cfg.alpha {
        notes.push(format!(
            "with {} vs {} repetitions the smallest possible p-value is {}, not below \
             alpha={}: no change can be significant; use at least {} repetitions per side",
            a.len(),
            b.len(),
            fmt_p(floor),
            trim_float(cfg.alpha),
            reps_needed(cfg.alpha)
        ));
    }
    if shift.widened {
        notes.push(format!(
            "too few repetitions for a {} interval of the change; the interval shown is the \
             full range of pairwise differences (coverage {})",
            cfg.confidence_label(),
            fmt_pct_level(shift.confidence)
        ));
    }

    let mut c = Comparison {
        regression_pct: change_pct.map(|c| regression_pct(c, better)),
        a: sa,
        b: sb,
        better,
        change_pct,
        change_ci_pct,
        p_value: test.p_value,
        p_adjusted: test.p_value,
        test,
        shift,
        verdict: Verdict::NoChange,
        notes,
    };
    c.redecide(cfg);
    c
}

/// A p-value for people: three decimals, `<0.001` below that.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{:.3}", p)
    }
}

fn fmt_pct_level(x: f64) -> String {
    format!("{}%", trim_float(x * 100.0))
}

/// The geometric mean of positive ratios (e.g. B/A per row); `None` when the slice is
/// empty or holds a value that is not a positive finite number.
pub fn geomean(ratios: &[f64]) -> Option<f64> {
    if ratios.is_empty() || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return None;
    }
    let mean_log = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    Some(mean_log.exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::new(v.to_vec()).unwrap()
    }

    #[test]
    fn seed_like_regression_is_detected() {
        let a = s(&[286_441.6, 286_300.2, 286_512.9, 286_390.4, 286_470.1]);
        let b = s(&[273_925.6, 274_010.3, 273_850.8, 273_990.0, 273_880.5]);
        let c = compare(&a, &b, Better::Higher, &StatsConfig::default());
        assert_eq!(c.verdict, Verdict::Regressed);
        assert!((c.p_value - 2.0 / 252.0).abs() < 1e-12);
        let reg = c.regression_pct.unwrap();
        assert!((reg - 4.37).abs() < 0.02, "{reg}");
        let (lo, hi) = c.change_ci_pct.unwrap();
        assert!(lo <= c.change_pct.unwrap() && c.change_pct.unwrap() <= hi);
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        // The same data read as a latency (lower is better) is an improvement.
        let c = compare(&a, &b, Better::Lower, &StatsConfig::default());
        assert_eq!(c.verdict, Verdict::Improved);
    }

    #[test]
    fn three_reps_cannot_be_significant_and_say_why() {
        let c = compare(
            &s(&[100.0, 101.0, 102.0]),
            &s(&[200.0, 201.0, 202.0]),
            Better::Higher,
            &StatsConfig::default(),
        );
        assert_eq!(c.verdict, Verdict::NoChange);
        assert!((c.p_value - 0.1).abs() < 1e-12);
        let all = c.notes.join("\n");
        assert!(all.contains("smallest possible p-value is 0.100"), "{all}");
        assert!(all.contains("at least 4 repetitions per side"), "{all}");
        assert!(all.contains("full range"), "{all}");
    }

    #[test]
    fn small_change_is_noise_even_when_significant() {
        let a: Vec<f64> = (0..10).map(|i| 1000.0 + i as f64 * 0.01).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.005).collect();
        let c = compare(&s(&a), &s(&b), Better::Higher, &StatsConfig::default());
        assert!(c.p_value < 0.05, "{}", c.p_value);
        assert_eq!(c.verdict, Verdict::NoChange);
        let strict = StatsConfig {
            noise_pct: 0.1,
            ..Default::default()
        };
        assert_eq!(
            compare(&s(&a), &s(&b), Better::Higher, &strict).verdict,
            Verdict::Improved
        );
    }

    #[test]
    fn zero_baseline_has_no_percentages() {
        let c = compare(
            &s(&[0.0, 0.0, 0.0, 0.0, 0.0]),
            &s(&[5.0, 6.0, 7.0, 8.0, 9.0]),
            Better::Neither,
            &StatsConfig::default(),
        );
        assert_eq!(c.change_pct, None);
        assert_eq!(c.regression_pct, None);
        assert_eq!(c.verdict, Verdict::Changed);
        assert!(c.notes[0].contains("baseline median is 0"));
    }

    #[test]
    fn geomean_of_ratios() {
        assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[1.0, 0.0]), None);
        assert_eq!(fmt_p(0.0004), "<0.001");
        assert_eq!(fmt_p(0.0079), "0.008");
    }
}
