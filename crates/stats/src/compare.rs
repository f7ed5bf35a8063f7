//! Two-sample comparison of a baseline A with a candidate B: medians, the change in
//! percent with the interval its verdict used, and one of four verdicts.
//!
//! The verdict comes from [`crate::decide`] (paired log-ratios, variance moderated across
//! the family, false-coverage-rate intervals); a comparison made alone is a family of one.
//! The Mann-Whitney test and the Hodges-Lehmann shift of the raw values are kept as
//! descriptions (`test`, `shift`) for drill-downs; no verdict rests on them.

use perflab_core::Better;

use crate::comparison::Comparison;
use crate::config::StatsConfig;
use crate::decide::{decide_family, Decision, Evidence};
use crate::hodges_lehmann::{hodges_lehmann, Shift};
use crate::mann_whitney::{mann_whitney, MannWhitney, MwMethod};
use crate::sample::Sample;
use crate::summary::Summary;
use crate::verdict::Verdict;

/// Compares B against the baseline A, unpaired (e.g. two runs measured apart).
pub fn compare(a: &Sample, b: &Sample, better: Better, cfg: &StatsConfig) -> Comparison {
    compare_paired(a, b, &[], better, cfg)
}

/// Compares B against A with the repetitions measured together listed in `pairs`
/// (indices into `a` and `b`; A₁B₁, A₂B₂, … of an interleaved run). Fewer than two pairs
/// compare unpaired. The verdict is the row's alone; [`crate::adjust_family`] decides the
/// rows of a table together.
pub fn compare_paired(
    a: &Sample,
    b: &Sample,
    pairs: &[(usize, usize)],
    better: Better,
    cfg: &StatsConfig,
) -> Comparison {
    let mut c = build(a, b, pairs, better, cfg, true);
    decide_family(&mut [&mut c], cfg);
    c
}

/// A row not yet decided and without the descriptive Mann-Whitney test and shift (their
/// exact distributions cost more than the verdict): for the seeded simulations, which
/// decide whole families and read only the verdicts.
pub(crate) fn undescribed(
    a: &Sample,
    b: &Sample,
    pairs: &[(usize, usize)],
    better: Better,
    cfg: &StatsConfig,
) -> Comparison {
    build(a, b, pairs, better, cfg, false)
}

fn build(
    a: &Sample,
    b: &Sample,
    pairs: &[(usize, usize)],
    better: Better,
    cfg: &StatsConfig,
    describe: bool,
) -> Comparison {
    let evidence = Evidence::new(a, b, pairs);
    let notes = if evidence.is_none() {
        vec![
            "the baseline median is 0, so there is no change in percent and no verdict".to_string(),
        ]
    } else {
        Vec::new()
    };
    let (test, shift) = if describe {
        (mann_whitney(a, b), hodges_lehmann(a, b, cfg.confidence))
    } else {
        (
            MannWhitney {
                u_a: f64::NAN,
                u_b: f64::NAN,
                p_value: f64::NAN,
                method: MwMethod::Normal,
                ties: false,
            },
            Shift {
                estimate: f64::NAN,
                ci: (f64::NAN, f64::NAN),
                confidence: f64::NAN,
                widened: false,
            },
        )
    };
    Comparison {
        a: Summary::new(a, cfg),
        b: Summary::new(b, cfg),
        better,
        change_pct: None,
        change_ci_pct: None,
        regression_pct: None,
        p_value: 1.0,
        p_adjusted: 1.0,
        test,
        shift,
        verdict: Verdict::Undecided,
        decision: Decision::pending(cfg.noise_pct, evidence),
        notes,
    }
}

/// A p-value for people: three decimals, `<0.001` below that.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{:.3}", p)
    }
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

    fn pairs(n: usize) -> Vec<(usize, usize)> {
        (0..n).map(|i| (i, i)).collect()
    }

    #[test]
    fn seed_like_regression_is_detected() {
        let a = s(&[286_441.6, 286_300.2, 286_512.9, 286_390.4, 286_470.1]);
        let b = s(&[273_925.6, 274_010.3, 273_850.8, 273_990.0, 273_880.5]);
        let c = compare_paired(&a, &b, &pairs(5), Better::Higher, &StatsConfig::default());
        assert_eq!(c.verdict, Verdict::Regressed);
        let reg = c.regression_pct.unwrap();
        assert!((reg - 4.37).abs() < 0.02, "{reg}");
        let (lo, hi) = c.change_ci_pct.unwrap();
        assert!(lo <= c.change_pct.unwrap() && c.change_pct.unwrap() <= hi);
        assert!(hi < -1.0, "the interval shown lies beyond -1 %: {lo} {hi}");
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        // The same data read as a latency (lower is better) is an improvement.
        let c = compare(&a, &b, Better::Lower, &StatsConfig::default());
        assert_eq!(c.verdict, Verdict::Improved);
    }

    #[test]
    fn a_change_within_the_threshold_reads_same_and_a_noisy_one_undecided() {
        let a: Vec<f64> = (0..10).map(|i| 1000.0 + (i % 3) as f64 * 0.5).collect();
        // +0.2 %, each pair off by up to ±0.015 %: a small spread, well inside ±1 %.
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| x * 1.002 * (1.0 + 1e-4 * ((i % 4) as f64 - 1.5)))
            .collect();
        let cfg = StatsConfig::default();
        let c = compare_paired(&s(&a), &s(&b), &pairs(10), Better::Higher, &cfg);
        assert_eq!(c.verdict, Verdict::Same, "{:?}", c.change_ci_pct);
        let (lo, hi) = c.change_ci_pct.unwrap();
        assert!(lo > -1.0 && hi < 1.0);
        let noisy = c_noisy();
        assert_eq!(
            noisy.verdict,
            Verdict::Undecided,
            "{:?}",
            noisy.change_ci_pct
        );
        assert!(noisy.decision.reps_to_decide.is_some());
    }

    fn c_noisy() -> Comparison {
        let a = s(&[100.0, 104.0, 97.0, 101.0, 99.0]);
        let b = s(&[101.5, 99.0, 104.0, 100.0, 103.0]);
        compare_paired(&a, &b, &pairs(5), Better::Higher, &StatsConfig::default())
    }

    /// Issue 21 item 16: `run quick` printed −1.24 % [−178.01 %, +78.79 %] for a rate
    /// whose repetitions ranged 4,266 to 74,591. On the log scale the interval of a
    /// change stays above −100 %, and the ratio's above 0.
    #[test]
    fn ratio_intervals_stay_positive_for_widely_spread_rates() {
        let a = s(&[4_266.0, 74_591.0, 52_000.0, 61_000.0, 9_000.0]);
        let b = s(&[70_000.0, 5_100.0, 48_000.0, 8_800.0, 66_000.0]);
        for p in [pairs(5), Vec::new()] {
            let c = compare_paired(&a, &b, &p, Better::Higher, &StatsConfig::default());
            let (lo, hi) = c.change_ci_pct.unwrap();
            assert!(lo > -100.0 && lo < hi, "{lo} {hi}");
            assert_eq!(c.verdict, Verdict::Undecided);
        }
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
        assert_eq!(c.verdict, Verdict::Undecided);
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
