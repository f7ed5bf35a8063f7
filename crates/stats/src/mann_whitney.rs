//! The Mann-Whitney U test (Mann & Whitney 1947, "On a test of whether one of two random
//! variables is stochastically larger than the other", Ann. Math. Statist. 18(1)).
//!
//! It compares two samples by ranks only, so it assumes no particular distribution of
//! benchmark noise (which is rarely normal: it has floors, long right tails and modes).
//!
//! Without ties and with m·n ≤ [`EXACT_LIMIT`] the two-sided p-value comes from the exact
//! null distribution of U, computed with the recurrence
//! p(u; m, n) = m/(m+n)·p(u−n; m−1, n) + n/(m+n)·p(u; m, n−1) (the larger of the pooled
//! values comes from one sample or the other). Otherwise it uses the normal approximation
//! with the tie-corrected variance σ² = mn/12·((N+1) − Σ(t³−t)/(N(N−1))) and a continuity
//! correction of ½.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::sample::Sample;

/// Largest m·n for which the exact distribution is computed; its cost grows as (m·n)².
pub const EXACT_LIMIT: usize = 2500;

/// How the p-value was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MwMethod {
    Exact,
    /// Normal approximation with tie and continuity correction.
    Normal,
}

impl MwMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            MwMethod::Exact => "exact",
            MwMethod::Normal => "normal approximation",
        }
    }
}

/// Result of a two-sided Mann-Whitney U test of A against B.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MannWhitney {
    /// Pairs (a, b) with a > b, ties counting ½.
    pub u_a: f64,
    /// Pairs (a, b) with b > a, ties counting ½; u_a + u_b = m·n.
    pub u_b: f64,
    pub p_value: f64,
    pub method: MwMethod,
    /// True when some value occurs in the pooled data more than once.
    pub ties: bool,
}

/// Two-sided Mann-Whitney U test. Swapping `a` and `b` gives the same p-value.
pub fn mann_whitney(a: &Sample, b: &Sample) -> MannWhitney {
    let (m, n) = (a.len(), b.len());
    let mut u_a = 0.0;
    for &x in a.values() {
        for &y in b.values() {
            if x > y {
                u_a += 1.0;
            } else if x == y {
                u_a += 0.5;
            }
        }
    }
    let u_b = (m * n) as f64 - u_a;
    let ties = a.has_ties_with(b);
    let u_min = u_a.min(u_b);
    let (p, method) = if !ties && m * n <= EXACT_LIMIT {
        // Without ties U is a whole number.
        let dist = null_distribution(m, n);
        let tail: f64 = dist[..=(u_min as usize)].iter().sum();
        ((2.0 * tail).min(1.0), MwMethod::Exact)
    } else {
        // Ties make the normal approximation's variance smaller, and with few repetitions
        // it can then claim a p below any arrangement of m + n values allows (3 against 3
        // all tied within each side: 0.046, where the smallest possible is 0.1). Ties only
        // coarsen the permutation distribution, so that floor holds for them too.
        (
            normal_p_value(a, b, u_min).max(min_p_value(m, n)),
            MwMethod::Normal,
        )
    };
    MannWhitney {
        u_a,
        u_b,
        p_value: p.clamp(0.0, 1.0),
        method,
        ties,
    }
}

fn normal_p_value(a: &Sample, b: &Sample, u_min: f64) -> f64 {
    let (m, n) = (a.len() as f64, b.len() as f64);
    let total = m + n;
    let mut pooled: Vec<f64> = a.values().iter().chain(b.values()).copied().collect();
    pooled.sort_by(f64::total_cmp);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i;
        while j < pooled.len() && pooled[j] == pooled[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let var = if total > 1.0 {
        m * n / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)))
    } else {
        0.0
    };
    if var <= 0.0 {
        // Every value equal: nothing distinguishes the samples.
        return 1.0;
    }
    let dev = (m * n / 2.0 - u_min - 0.5).max(0.0);
    let z = dev / var.sqrt();
    2.0 * standard_normal().sf(z)
}

fn standard_normal() -> Normal {
    Normal::default()
}

/// P(U = u) for u in 0..=m·n under the null hypothesis (no ties).
pub fn null_distribution(m: usize, n: usize) -> Vec<f64> {
    // row[j] holds the distribution for sizes (i, j) while i grows; sizes with a zero
    // have all their mass at U = 0.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]);
        for j in 1..=n {
            let mut d = vec![0.0; i * j + 1];
            let wa = i as f64 / (i + j) as f64;
            let wb = j as f64 / (i + j) as f64;
            // Largest pooled value from A: it beats all j values of B.
            for (u, p) in prev[j].iter().enumerate() {
                d[u + j] += wa * p;
            }
            for (u, p) in cur[j - 1].iter().enumerate() {
                d[u] += wb * p;
            }
            cur.push(d);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// The smallest two-sided p-value any data could give with these sample sizes (all of
/// one sample above all of the other, no ties): 2 / C(m+n, m).
pub fn min_p_value(m: usize, n: usize) -> f64 {
    // C(m+n, m) in floating point: the product form stays accurate long before overflow.
    let k = m.min(n);
    let mut c = 1.0f64;
    for i in 1..=k {
        c = c * (m + n - k + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

/// Repetitions per side (equal sizes) needed before p < alpha is possible at all.
pub fn reps_needed(alpha: f64) -> usize {
    (1..=1000)
        .find(|&k| min_p_value(k, k) < alpha)
        .unwrap_or(1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::stats_tests::mannwhitneyu::{mannwhitneyu, MannWhitneyUMethod};
    use statrs::stats_tests::Alternative;

    fn s(v: &[f64]) -> Sample {
        Sample::new(v.to_vec()).unwrap()
    }

    #[test]
    fn tied_small_samples_never_claim_a_p_below_the_smallest_possible() {
        // Every value of a side equal: the normal approximation with the tie correction
        // gave 0.046 here, below the 0.1 that 3 against 3 can ever reach.
        let r = mann_whitney(&s(&[100.0, 100.0, 100.0]), &s(&[200.0, 200.0, 200.0]));
        assert_eq!(r.method, MwMethod::Normal);
        assert!(
            (r.p_value - min_p_value(3, 3)).abs() < 1e-12,
            "{}",
            r.p_value
        );
        let r = mann_whitney(&s(&[1.0, 1.0, 2.0, 2.0]), &s(&[3.0, 3.0, 4.0, 4.0]));
        assert!(r.p_value >= min_p_value(4, 4), "{}", r.p_value);
    }

    #[test]
    fn exact_distribution_matches_tables() {
        // m = n = 3: 20 equally likely rank arrangements; U counts 1,1,2,3,3,3,3,2,1,1.
        let d = null_distribution(3, 3);
        let counts: Vec<f64> = d.iter().map(|p| (p * 20.0).round()).collect();
        assert_eq!(
            counts,
            vec![1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 2.0, 1.0, 1.0]
        );
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Table of critical values (e.g. Siegel & Castellan, table J): m = n = 5,
        // P(U <= 2) = 4/252 and P(U <= 3) = 7/252.
        let d = null_distribution(5, 5);
        assert!((d[..=2].iter().sum::<f64>() - 4.0 / 252.0).abs() < 1e-12);
        assert!((d[..=3].iter().sum::<f64>() - 7.0 / 252.0).abs() < 1e-12);
        assert_eq!(null_distribution(2, 0), vec![1.0]);
    }

    #[test]
    fn complete_separation_gives_the_minimum_p() {
        let r = mann_whitney(&s(&[1.0, 2.0, 3.0]), &s(&[4.0, 5.0, 6.0]));
        assert_eq!(r.method, MwMethod::Exact);
        assert_eq!((r.u_a, r.u_b), (0.0, 9.0));
        assert!((r.p_value - 0.1).abs() < 1e-12, "{}", r.p_value);
        assert!((min_p_value(3, 3) - 0.1).abs() < 1e-12);
        assert!((min_p_value(5, 5) - 2.0 / 252.0).abs() < 1e-12);
        assert_eq!(reps_needed(0.05), 4);
        assert_eq!(reps_needed(0.01), 5);
    }

    #[test]
    fn matches_scipy_example_and_statrs() {
        // scipy.stats.mannwhitneyu([19,22,16,29,24], [20,11,17,12]) -> U=17, p=0.1111
        let male = [19.0, 22.0, 16.0, 29.0, 24.0];
        let female = [20.0, 11.0, 17.0, 12.0];
        let r = mann_whitney(&s(&male), &s(&female));
        assert_eq!(r.u_a, 17.0);
        assert!((r.p_value - 0.111_111_111).abs() < 1e-6, "{}", r.p_value);
        let (_, p) = mannwhitneyu(
            &male,
            &female,
            MannWhitneyUMethod::Exact,
            Alternative::TwoSided,
        )
        .unwrap();
        assert!((r.p_value - p).abs() < 1e-12);
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        let a = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0];
        let b = [3.0, 4.0, 6.0, 6.0, 7.0, 8.0, 9.0];
        let r = mann_whitney(&s(&a), &s(&b));
        assert!(r.ties);
        assert_eq!(r.method, MwMethod::Normal);
        let (u, p) = mannwhitneyu(
            &a,
            &b,
            MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
            Alternative::TwoSided,
        )
        .unwrap();
        assert_eq!(r.u_a, u);
        assert!((r.p_value - p).abs() < 1e-12, "{} vs {p}", r.p_value);
        let same = mann_whitney(&s(&[2.0, 2.0]), &s(&[2.0, 2.0, 2.0]));
        assert_eq!(same.p_value, 1.0);
    }

    #[test]
    fn large_samples_agree_with_statrs_normal() {
        let a: Vec<f64> = (0..60).map(|i| (i * 37 % 101) as f64 + 0.25).collect();
        let b: Vec<f64> = (0..70).map(|i| (i * 53 % 103) as f64 + 10.5).collect();
        let r = mann_whitney(&s(&a), &s(&b));
        assert_eq!(r.method, MwMethod::Normal);
        let (_, p) = mannwhitneyu(
            &a,
            &b,
            MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
            Alternative::TwoSided,
        )
        .unwrap();
        assert!((r.p_value - p).abs() < 1e-12, "{} vs {p}", r.p_value);
    }
}
