//! Per-sample summaries: location, spread, a bootstrap interval for the median and
//! Tukey's outlier fences.
//!
//! The median's interval is Efron's percentile bootstrap (Efron 1979, "Bootstrap methods:
//! another look at the jackknife"; Efron & Tibshirani 1993, ch. 13): resample the values
//! with replacement, take the median of each resample, and report the central
//! `confidence` fraction of those medians. Outliers are marked with Tukey's fences
//! (Tukey 1977, "Exploratory Data Analysis"): below Q1 − 1.5·IQR or above Q3 + 1.5·IQR.
//! They are only marked, never removed: a slow repetition is data.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng, RngExt, SeedableRng};
use serde::Serialize;

use crate::config::StatsConfig;
use crate::sample::{quantile_of_sorted, Sample};

/// What a person wants to know about one set of repetitions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1).
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation, stddev / mean, as a fraction (0.01 = 1%); 0 when the
    /// mean is 0.
    pub cv: f64,
    /// Percentile-bootstrap interval of the median at `StatsConfig::confidence`.
    pub median_ci: (f64, f64),
    /// True when n < 2: there is no spread to resample, the interval is (median, median)
    /// and says nothing about uncertainty.
    pub median_ci_degenerate: bool,
    /// Indices (in the order given) of values outside Tukey's fences.
    pub outliers: Vec<usize>,
}

impl Summary {
    pub fn new(sample: &Sample, cfg: &StatsConfig) -> Self {
        let median = sample.median();
        let mean = sample.mean();
        let stddev = sample.stddev();
        let degenerate = sample.len() < 2;
        let median_ci = if degenerate {
            (median, median)
        } else {
            bootstrap_median_ci(sample, cfg)
        };
        Self {
            n: sample.len(),
            median,
            mean,
            stddev,
            min: sample.min(),
            max: sample.max(),
            cv: if mean != 0.0 {
                stddev / mean.abs()
            } else {
                0.0
            },
            median_ci,
            median_ci_degenerate: degenerate,
            outliers: tukey_outliers(sample),
        }
    }
}

/// Percentile-bootstrap confidence interval of the median, reproducible for a given seed.
///
/// A report summarizes the same repetitions more than once (a comparison's sides, then
/// the spread of each run), and at 500 repetitions a cell's 2,000 resamples are most of
/// its cost; the interval depends only on the values in order and the configuration, so
/// each is computed once per thread and remembered.
pub fn bootstrap_median_ci(sample: &Sample, cfg: &StatsConfig) -> (f64, f64) {
    type Key = (u64, usize, u64, Vec<u64>);
    thread_local! {
        static SEEN: std::cell::RefCell<std::collections::HashMap<Key, (f64, f64)>> =
            Default::default();
    }
    let key: Key = (
        cfg.seed,
        cfg.resamples,
        cfg.confidence.to_bits(),
        sample.values().iter().map(|v| v.to_bits()).collect(),
    );
    if let Some(ci) = SEEN.with(|s| s.borrow().get(&key).copied()) {
        return ci;
    }
    let ci = bootstrap(sample, cfg);
    SEEN.with(|s| {
        let mut seen = s.borrow_mut();
        // A long-lived process (an adaptive run's checks) must not keep every sample.
        if seen.len() >= 4096 {
            seen.clear();
        }
        seen.insert(key, ci);
    });
    ci
}

fn bootstrap(sample: &Sample, cfg: &StatsConfig) -> (f64, f64) {
    let values = sample.values();
    let sorted = sample.sorted();
    let n = values.len();
    // Each value's rank in the sorted order: a resample's median is then found by
    // counting how often each rank was drawn, a pass over n counters, instead of selecting
    // among n copied values. The same draws give the same order statistics, so the same
    // medians as `median_by_selection` (the tests compare the two).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut rank = vec![0; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let mut medians = Vec::with_capacity(cfg.resamples.max(1));
    let mut counts = vec![0u32; n];
    for _ in 0..cfg.resamples.max(1) {
        counts.fill(0);
        match u32::try_from(n) {
            Ok(n32) => {
                for _ in 0..n {
                    counts[rank[below(&mut rng, n32)]] += 1;
                }
            }
            Err(_) => {
                for _ in 0..n {
                    counts[rank[rng.random_range(0..n)]] += 1;
                }
            }
        }
        medians.push(median_of_counts(&counts, sorted));
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - cfg.confidence) / 2.0;
    (
        quantile_of_sorted(&medians, tail),
        quantile_of_sorted(&medians, 1.0 - tail),
    )
}

/// `rng.random_range(0..n)` as rand 0.10 draws it for a range that fits 32 bits (a
/// widening multiply of one 32-bit draw, and Canon's correction with a second draw when
/// the low half lands within `n` of the top), written out so it inlines into the
/// resampling loop: through the library's generic call, drawing was half of a 500-value
/// bootstrap. `same_draws_as_random_range` holds it to the library's draws.
#[inline(always)]
fn below(rng: &mut Xoshiro256PlusPlus, n: u32) -> usize {
    let wide = |x: u32| u64::from(x) * u64::from(n);
    let first = wide(rng.next_u32());
    let (hi, lo) = ((first >> 32) as u32, first as u32);
    if lo > n.wrapping_neg() {
        let next_hi = (wide(rng.next_u32()) >> 32) as u32;
        return (hi + u32::from(lo.checked_add(next_hi).is_none())) as usize;
    }
    hi as usize
}

/// The median of the resample that drew `sorted[r]` `counts[r]` times, as
/// `median_by_selection` computes it.
fn median_of_counts(counts: &[u32], sorted: &[f64]) -> f64 {
    let n: usize = counts.len();
    // The k-th smallest (from 0) is where the running count first exceeds k.
    let (k, even) = (n / 2, n.is_multiple_of(2));
    let (mut seen, mut below, mut r) = (0usize, None, 0);
    loop {
        seen += counts[r] as usize;
        if even && below.is_none() && seen > k - 1 {
            below = Some(sorted[r]);
        }
        if seen > k {
            let mid = sorted[r];
            return match below {
                Some(b) if even => b / 2.0 + mid / 2.0,
                _ => mid,
            };
        }
        r += 1;
    }
}

/// Indices of values outside Tukey's fences, Q1 − 1.5·IQR and Q3 + 1.5·IQR.
pub fn tukey_outliers(sample: &Sample) -> Vec<usize> {
    let q1 = sample.quantile(0.25);
    let q3 = sample.quantile(0.75);
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    sample
        .values()
        .iter()
        .enumerate()
        .filter(|(_, &v)| v < lo || v > hi)
        .map(|(i, _)| i)
        .collect()
}

/// The median of `v` (non-empty), reordering it; equal to sorting and taking the middle.
/// The bootstrap computed its medians so before it counted ranks; the tests hold the two
/// equal.
#[cfg(test)]
fn median_by_selection(v: &mut [f64]) -> f64 {
    let n = v.len();
    let (lower, mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let mid = *mid;
    if n % 2 == 1 {
        mid
    } else {
        let below = lower.iter().copied().max_by(f64::total_cmp).unwrap_or(mid);
        below / 2.0 + mid / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::new(v.to_vec()).unwrap()
    }

    #[test]
    fn summary_of_known_values() {
        let cfg = StatsConfig::default();
        let sum = Summary::new(&s(&[10.0, 12.0, 11.0, 13.0, 9.0]), &cfg);
        assert_eq!(sum.n, 5);
        assert_eq!(sum.median, 11.0);
        assert_eq!(sum.mean, 11.0);
        assert!((sum.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        assert!((sum.cv - 2.5f64.sqrt() / 11.0).abs() < 1e-12);
        assert!(sum.median_ci.0 <= 11.0 && 11.0 <= sum.median_ci.1);
        assert!(sum.median_ci.0 >= 9.0 && sum.median_ci.1 <= 13.0);
        assert!(sum.median_ci.0 < sum.median_ci.1, "{:?}", sum.median_ci);
        assert!(!sum.median_ci_degenerate);
        assert!(sum.outliers.is_empty());
    }

    #[test]
    fn single_value_has_a_flagged_point_interval() {
        let sum = Summary::new(&s(&[42.0]), &StatsConfig::default());
        assert_eq!(sum.median_ci, (42.0, 42.0));
        assert!(sum.median_ci_degenerate);
    }

    #[test]
    fn bootstrap_is_reproducible_and_seed_dependent() {
        let data = s(&[1.0, 5.0, 2.0, 8.0, 3.0, 9.0, 4.0, 7.0]);
        let cfg = StatsConfig::default();
        assert_eq!(
            bootstrap_median_ci(&data, &cfg),
            bootstrap_median_ci(&data, &cfg)
        );
        let other = StatsConfig {
            seed: 7,
            resamples: 50,
            ..cfg
        };
        let third = StatsConfig {
            seed: 8,
            resamples: 50,
            ..cfg
        };
        // Different seeds draw different resamples; with 50 draws the two interval ends
        // coinciding for both seeds would be a sign that the seed is ignored.
        let (a, b) = (
            bootstrap_median_ci(&data, &other),
            bootstrap_median_ci(&data, &third),
        );
        let c = bootstrap_median_ci(
            &data,
            &StatsConfig {
                seed: 9,
                resamples: 50,
                ..cfg
            },
        );
        assert!(a != b || b != c, "{a:?} {b:?} {c:?}");
    }

    /// The bootstrap as it was before it counted ranks: copy the drawn values, select.
    fn bootstrap_by_selection(sample: &Sample, cfg: &StatsConfig) -> (f64, f64) {
        let values = sample.values();
        let n = values.len();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
        let mut medians = Vec::new();
        let mut resample = vec![0.0; n];
        for _ in 0..cfg.resamples.max(1) {
            for slot in resample.iter_mut() {
                *slot = values[rng.random_range(0..n)];
            }
            medians.push(median_by_selection(&mut resample));
        }
        medians.sort_by(f64::total_cmp);
        let tail = (1.0 - cfg.confidence) / 2.0;
        (
            quantile_of_sorted(&medians, tail),
            quantile_of_sorted(&medians, 1.0 - tail),
        )
    }

    #[test]
    fn same_draws_as_random_range() {
        // Small ranges, a bootstrap's, and ranges near 2^32 where the second draw of
        // Canon's correction is taken often.
        for n in [
            1u32,
            2,
            3,
            7,
            500,
            1000,
            1 << 31,
            (1 << 31) + 1,
            u32::MAX - 1,
            u32::MAX,
        ] {
            for seed in [0u64, 1, 2026] {
                let mut ours = Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut theirs = Xoshiro256PlusPlus::seed_from_u64(seed);
                for i in 0..20_000 {
                    assert_eq!(
                        below(&mut ours, n),
                        theirs.random_range(0..n as usize),
                        "n {n} seed {seed} draw {i}"
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// Counting ranks gives the intervals selection gave, bit for bit: ties, odd and
        /// even counts, signed zeros.
        #[test]
        fn counted_bootstrap_equals_selection_bootstrap(
            v in proptest::collection::vec(
                proptest::prop_oneof![
                    -1e6f64..1e6,
                    proptest::strategy::Just(0.0),
                    proptest::strategy::Just(-0.0),
                    proptest::strategy::Just(3.5),
                ],
                2..60,
            ),
            seed in 0u64..1000,
        ) {
            let cfg = StatsConfig { seed, resamples: 300, ..StatsConfig::default() };
            let sample = s(&v);
            proptest::prop_assert_eq!(bootstrap(&sample, &cfg), bootstrap_by_selection(&sample, &cfg));
        }

        #[test]
        fn selection_median_equals_sorted_median(
            v in proptest::collection::vec(-1e300f64..1e300, 1..40)
        ) {
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let mut scratch = v;
            proptest::prop_assert_eq!(
                median_by_selection(&mut scratch),
                crate::sample::median_of_sorted(&sorted)
            );
        }
    }

    #[test]
    fn tukey_marks_the_far_value_only() {
        // Q1 = 10.75, Q3 = 12, IQR = 1.25: fences at 8.875 and 13.875.
        let data = s(&[10.0, 11.0, 12.0, 10.0, 11.0, 12.0, 30.0, 11.0]);
        assert_eq!(tukey_outliers(&data), vec![6]);
        assert!(tukey_outliers(&s(&[5.0, 5.0, 5.0])).is_empty());
    }
}
