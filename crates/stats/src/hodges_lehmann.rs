//! The Hodges-Lehmann shift estimate and its distribution-free confidence interval
//! (Hodges & Lehmann 1963, "Estimates of location based on rank tests", Ann. Math.
//! Statist. 34(2); the interval is due to Moses, in Walker & Lev 1953, and Lehmann 1963).
//!
//! The estimate is the median of all m·n pairwise differences b − a. The interval is
//! [D(k), D(mn+1−k)] of the sorted differences, where k − 1 is the largest c with
//! P(U ≤ c) ≤ (1 − confidence)/2 under the Mann-Whitney null distribution; its exact
//! coverage is 1 − 2·P(U ≤ k−1). The distribution is exact for m·n ≤
//! [`crate::mann_whitney::EXACT_LIMIT`] and normal otherwise. When even k = 1 does not
//! reach the requested confidence (too few repetitions) the interval is widened to the
//! full range of differences and marked as such.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::mann_whitney::{min_p_value, null_distribution, EXACT_LIMIT};
use crate::sample::Sample;

/// A location shift of B relative to A with its interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shift {
    /// Median of the pairwise differences b − a.
    pub estimate: f64,
    pub ci: (f64, f64),
    /// Coverage the interval actually has (≥ the requested one unless `widened`).
    pub confidence: f64,
    /// True when the samples are too small for the requested confidence and the
    /// interval is the full range of differences, with the lower coverage in `confidence`.
    pub widened: bool,
}

/// Hodges-Lehmann shift of `b` relative to `a` with a Moses interval at `confidence`.
pub fn hodges_lehmann(a: &Sample, b: &Sample, confidence: f64) -> Shift {
    let (m, n) = (a.len(), b.len());
    let mut diffs = Vec::with_capacity(m * n);
    for &y in b.values() {
        for &x in a.values() {
            diffs.push(y - x);
        }
    }
    let tail = (1.0 - confidence) / 2.0;
    let mn = m * n;
    let (k, coverage) = if mn <= EXACT_LIMIT {
        exact_rank(m, n, tail)
    } else {
        normal_rank(m, n, confidence)
    };
    // Only four order statistics of the m·n differences are read: selected, not sorted
    // (250,000 differences at 500 repetitions a side, sorted, were a tenth of a report's
    // time). Selection by the same total order yields the very values sorting placed there.
    let (lo, hi) = k.map_or((0, mn - 1), |k| (k - 1, mn - k));
    let [lo, mid_below, mid, hi] = order_statistics(&mut diffs, [lo, (mn - 1) / 2, mn / 2, hi]);
    let estimate = if mn % 2 == 1 {
        mid
    } else {
        // As `median_of_sorted`: halving each term first keeps huge values finite.
        mid_below / 2.0 + mid / 2.0
    };
    Shift {
        estimate,
        ci: (lo, hi),
        confidence: coverage,
        widened: k.is_none(),
    }
}

/// The values at the 0-based `ranks` of `values` sorted by `f64::total_cmp`, as sorting
/// would place them; `values` is reordered. Each rank is selected among the values
/// above the rank before it.
fn order_statistics<const N: usize>(values: &mut [f64], ranks: [usize; N]) -> [f64; N] {
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| ranks[i]);
    let mut out = [f64::NAN; N];
    // Values before `from` are all at or below the last rank selected.
    let (mut from, mut last) = (0, None);
    for i in order {
        let r = ranks[i];
        if last != Some(r) {
            let (_, v, _) = values[from..].select_nth_unstable_by(r - from, f64::total_cmp);
            out[i] = *v;
            from = r + 1;
            last = Some(r);
        } else {
            out[i] = values[r];
        }
    }
    out
}

/// The 1-based order k of the interval's lower end and the interval's coverage; `None`
/// when k = 1 is already too narrow, with the coverage of the full range.
fn exact_rank(m: usize, n: usize, tail: f64) -> (Option<usize>, f64) {
    let dist = null_distribution(m, n);
    let mut cdf = 0.0;
    let mut best: Option<(usize, f64)> = None;
    // Tiny slack: cumulative sums of exact fractions such as 1/20 land a hair above.
    for (c, p) in dist.iter().enumerate() {
        cdf += p;
        if cdf <= tail * (1.0 + 1e-9) && c < dist.len() / 2 {
            best = Some((c + 1, 1.0 - 2.0 * cdf));
        } else {
            break;
        }
    }
    match best {
        Some((k, coverage)) => (Some(k), coverage),
        None => (None, (1.0 - 2.0 * dist[0]).max(0.0)),
    }
}

fn normal_rank(m: usize, n: usize, confidence: f64) -> (Option<usize>, f64) {
    let (mf, nf) = (m as f64, n as f64);
    let z = Normal::default().inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    let k = (mf * nf / 2.0 - z * (mf * nf * (mf + nf + 1.0) / 12.0).sqrt()).floor();
    if k >= 1.0 {
        (Some(k as usize), confidence)
    } else {
        // Only reachable with a lopsided design such as 1 vs 3000; the full range then
        // covers with probability 1 − 2/C(m+n, m).
        (None, 1.0 - min_p_value(m, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::new(v.to_vec()).unwrap()
    }

    #[test]
    fn estimate_is_the_median_of_pairwise_differences() {
        // differences b - a: {4-1, 4-2, 6-1, 6-2} = {3, 2, 5, 4} -> median 3.5
        let r = hodges_lehmann(&s(&[1.0, 2.0]), &s(&[4.0, 6.0]), 0.95);
        assert_eq!(r.estimate, 3.5);
    }

    #[test]
    fn five_by_five_uses_the_third_differences() {
        // Hollander & Wolfe: m = n = 5, 95% -> C = 3, coverage 1 - 2*4/252 = 0.968.
        let a = s(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let b = s(&[11.0, 12.0, 13.0, 14.0, 15.0]);
        let r = hodges_lehmann(&a, &b, 0.95);
        // Differences run 6..=14; sorted, the 3rd is 7 and the 23rd is 13.
        assert_eq!(r.estimate, 10.0);
        assert_eq!(r.ci, (7.0, 13.0));
        assert!((r.confidence - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
        assert!(!r.widened);
    }

    #[test]
    fn three_by_three_is_widened_and_says_so() {
        let a = s(&[1.0, 2.0, 3.0]);
        let b = s(&[11.0, 12.0, 13.0]);
        let r = hodges_lehmann(&a, &b, 0.95);
        assert!(r.widened);
        assert_eq!(r.ci, (8.0, 12.0));
        assert!((r.confidence - 0.9).abs() < 1e-12);
        // At 90% the full range is exactly enough and is not a widening.
        let r = hodges_lehmann(&a, &b, 0.90);
        assert!(!r.widened);
        assert_eq!(r.ci, (8.0, 12.0));
    }

    #[test]
    fn large_samples_use_the_normal_critical_value() {
        let a: Vec<f64> = (0..60).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..60).map(|i| i as f64 + 5.0).collect();
        let r = hodges_lehmann(&s(&a), &s(&b), 0.95);
        assert_eq!(r.estimate, 5.0);
        assert!(r.ci.0 < 5.0 && r.ci.1 > 5.0, "{:?}", r.ci);
        assert_eq!(r.confidence, 0.95);
    }

    /// The estimate and interval as they were computed before selection: every difference
    /// sorted.
    fn by_sorting(a: &Sample, b: &Sample, confidence: f64) -> Shift {
        let (m, n) = (a.len(), b.len());
        let mut diffs: Vec<f64> = b
            .values()
            .iter()
            .flat_map(|&y| a.values().iter().map(move |&x| y - x))
            .collect();
        diffs.sort_by(f64::total_cmp);
        let mn = m * n;
        let (k, confidence) = if mn <= EXACT_LIMIT {
            exact_rank(m, n, (1.0 - confidence) / 2.0)
        } else {
            normal_rank(m, n, confidence)
        };
        let ci = k.map_or((diffs[0], diffs[mn - 1]), |k| (diffs[k - 1], diffs[mn - k]));
        Shift {
            estimate: crate::sample::median_of_sorted(&diffs),
            ci,
            confidence,
            widened: k.is_none(),
        }
    }

    proptest::proptest! {
        /// Selecting the order statistics gives what sorting gave, bit for bit: ties,
        /// signed zeros, odd and even counts, exact and normal ranks, widened intervals.
        #[test]
        fn selected_equals_sorted(
            a in proptest::collection::vec(
                proptest::prop_oneof![
                    -1e6f64..1e6,
                    proptest::strategy::Just(0.0),
                    proptest::strategy::Just(-0.0),
                    proptest::strategy::Just(2.5),
                ],
                1..40,
            ),
            b in proptest::collection::vec(
                proptest::prop_oneof![-1e6f64..1e6, proptest::strategy::Just(2.5)],
                // Up to 40 × 80: past the exact distribution's limit of 2,500.
                1..80,
            ),
            confidence in proptest::prop_oneof![
                proptest::strategy::Just(0.95),
                proptest::strategy::Just(0.99),
                0.5f64..0.999,
            ],
        ) {
            let got = hodges_lehmann(&s(&a), &s(&b), confidence);
            let want = by_sorting(&s(&a), &s(&b), confidence);
            proptest::prop_assert_eq!(got.estimate.to_bits(), want.estimate.to_bits());
            proptest::prop_assert_eq!(got.ci.0.to_bits(), want.ci.0.to_bits());
            proptest::prop_assert_eq!(got.ci.1.to_bits(), want.ci.1.to_bits());
            proptest::prop_assert_eq!(got.confidence, want.confidence);
            proptest::prop_assert_eq!(got.widened, want.widened);
        }
    }
}
