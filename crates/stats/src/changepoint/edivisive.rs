//! E-Divisive means with a permutation test (Matteson & James 2014, section 3).
//!
//! A segment's best split ([`best_split`], searching where the part after it ends as well)
//! says where it would divide. Whether it divides at all is a permutation test of the
//! segment's homogeneity: its largest head-versus-rest divergence ([`max_tail_split`]) is
//! compared with that of random permutations of the same segment. Under "no change" every
//! order is as likely, so the share of permutations that divide at least as well is the
//! p-value. Testing head-versus-rest (not the located split with its searched end) keeps
//! the null distribution from being inflated by the end search: measured, this finds the
//! 2σ steps of otava-test-data's multiple-change series that the located statistic's own
//! test missed, at the same false-alarm rate. The test
//! stops as soon as enough permutations have beaten the observed split for p to exceed
//! alpha (Besag & Clifford 1991), so a homogeneous segment costs a few permutations, not
//! all of them. Each segment's permutations come from a generator seeded by the
//! configuration's seed and the segment's bounds, so the result does not depend on the
//! order segments are visited in.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::energy::{best_split, max_tail_split};
use super::{ChangePoint, ChangePointConfig};

/// The change points of `series`, in index order. Non-finite values are the caller's to
/// remove (a run without the figure has no value, not a NaN).
pub fn e_divisive(series: &[f64], cfg: &ChangePointConfig) -> Vec<ChangePoint> {
    let mut found = Vec::new();
    let mut pending = vec![(0, series.len())];
    while let Some((start, end)) = pending.pop() {
        let segment = &series[start..end];
        let Some(split) = best_split(segment, cfg.min_size, cfg.exponent) else {
            continue;
        };
        // The whole series at alpha; once it has moved, its stretches at the level within.
        let level = if start == 0 && end == series.len() {
            cfg.alpha
        } else {
            (cfg.alpha * cfg.within).min(1.0)
        };
        let p_value = permutation_p(segment, cfg, level, start, end);
        if p_value <= level {
            let index = start + split.tau;
            found.push(ChangePoint {
                index,
                p_value,
                strength: split.q,
            });
            pending.push((start, index));
            pending.push((index, end));
        }
    }
    found.sort_by_key(|c| c.index);
    found
}

/// The two statistics a segment is tested with: its located split's divergence (the
/// part after the split ending where it divides best) and its largest head-versus-rest
/// divergence.
fn statistics(v: &[f64], cfg: &ChangePointConfig) -> [f64; 2] {
    [
        best_split(v, cfg.min_size, cfg.exponent).map_or(0.0, |s| s.q),
        max_tail_split(v, cfg.min_size, cfg.exponent),
    ]
}

/// Each statistic's p = (1 + permutations dividing at least as well) / (1 + drawn); the
/// segment's p is twice the smaller (Bonferroni over the two).
fn permutation_p(
    segment: &[f64],
    cfg: &ChangePointConfig,
    level: f64,
    start: usize,
    end: usize,
) -> f64 {
    let observed = statistics(segment, cfg);
    if observed.iter().all(|&q| q <= 0.0) {
        return 1.0;
    }
    let seed = cfg.seed ^ (start as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (end as u64) << 32;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut shuffled = segment.to_vec();
    // Beyond this many successes a statistic's p can no longer reach level / 2.
    let give_up = (level / 2.0 * (cfg.permutations + 1) as f64).floor() as usize;
    let mut beaten = [0usize; 2];
    let mut drawn = 0;
    for _ in 0..cfg.permutations {
        shuffle(&mut shuffled, &mut rng);
        drawn += 1;
        let q = statistics(&shuffled, cfg);
        for k in 0..2 {
            // A relative tolerance: a permutation that reproduces the observed order
            // (ties, constant stretches) must count as dividing as well, whatever the
            // rounding; a statistic that saw nothing is beaten by anything.
            if observed[k] <= 0.0 || q[k] >= observed[k] * (1.0 - 1e-12) {
                beaten[k] += 1;
            }
        }
        if beaten.iter().all(|&b| b > give_up) {
            break;
        }
    }
    let smaller = beaten.iter().min().copied().unwrap_or(0);
    (2.0 * (1 + smaller) as f64 / (1 + drawn) as f64).min(1.0)
}

/// Fisher-Yates.
fn shuffle(v: &mut [f64], rng: &mut Xoshiro256PlusPlus) {
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
}
