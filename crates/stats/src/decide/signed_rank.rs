//! Wilcoxon's signed-rank test of the centre of paired differences and its Walsh-average
//! interval (Wilcoxon 1945; Hollander & Wolfe 1999, §3.1–3.2): the rank fallback of the
//! paired t when a row's differences do not look like one bell (see
//! [`super::evidence`]).
//!
//! W⁺ is the sum of the ranks of |dᵢ − c| over the differences above c. Under "the
//! differences are symmetric about c" every sign is a coin toss, so W⁺ is distributed as
//! the sum of a random subset of 1..n. The interval is [W(k), W(N+1−k)] of the N = n(n+1)/2
//! sorted Walsh averages (dᵢ + dⱼ)/2, i ≤ j, where k − 1 is the largest w with
//! P(W⁺ ≤ w) ≤ (1 − level)/2: the set of centres c the test does not reject.

use statrs::distribution::{ContinuousCDF, Normal};

/// Beyond this many differences the normal approximation replaces the exact law.
const EXACT_LIMIT: usize = 60;

/// P(W⁺ = w) for w in 0..=n(n+1)/2, no ties.
fn null_distribution(n: usize) -> Vec<f64> {
    let top = n * (n + 1) / 2;
    let mut d = vec![0.0; top + 1];
    d[0] = 1.0;
    for r in 1..=n {
        // Rank r is counted with probability ½: shift-and-add from the top down.
        for w in (0..=top).rev() {
            let with = if w >= r { d[w - r] } else { 0.0 };
            d[w] = 0.5 * (d[w] + with);
        }
    }
    d
}

fn cdf(dist: &[f64], w: usize) -> f64 {
    dist.iter().take(w + 1).sum::<f64>().min(1.0)
}

/// Two-sided p-value of "the differences are centred on `c`". Zeros (dᵢ = c) are dropped
/// as Wilcoxon did; ties among the rest switch to the normal approximation with midranks.
pub fn p_value(d: &[f64], c: f64) -> f64 {
    let mut x: Vec<f64> = d.iter().map(|v| v - c).filter(|v| *v != 0.0).collect();
    let n = x.len();
    if n == 0 {
        return 1.0;
    }
    x.sort_by(|p, q| p.abs().total_cmp(&q.abs()));
    let ranks = midranks(&x);
    let w_plus: f64 = x
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    let ties = ranks.iter().any(|r| r.fract() != 0.0);
    if n <= EXACT_LIMIT && !ties {
        let dist = null_distribution(n);
        let w = w_plus.round() as usize;
        let top = n * (n + 1) / 2;
        let lower = cdf(&dist, w);
        let upper = cdf(&dist, top - w);
        (2.0 * lower.min(upper)).min(1.0)
    } else {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0;
        let z = ((w_plus - mean).abs() - 0.5).max(0.0) / var.sqrt();
        (2.0 * Normal::default().sf(z)).min(1.0)
    }
}

/// Ranks 1..n of values sorted by |x|, ties given their mean rank.
fn midranks(sorted_by_abs: &[f64]) -> Vec<f64> {
    let n = sorted_by_abs.len();
    let mut ranks = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && sorted_by_abs[j + 1].abs() == sorted_by_abs[i].abs() {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        ranks[i..=j].iter_mut().for_each(|x| *x = r);
        i = j + 1;
    }
    ranks
}

/// The Walsh-average interval of the centre at `level`, with its exact coverage; `None`
/// when even the full range of Walsh averages falls short of `level` (n ≤ 5 at 95 %).
pub fn interval(d: &[f64], level: f64) -> Option<((f64, f64), f64)> {
    let n = d.len();
    if n == 0 {
        return None;
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let big = walsh.len();
    let tail = (1.0 - level) / 2.0;
    let k = if n <= EXACT_LIMIT {
        let dist = null_distribution(n);
        // k − 1 = the largest w with P(W⁺ ≤ w) ≤ tail.
        let mut acc = 0.0;
        let mut k = 0;
        for (w, p) in dist.iter().enumerate() {
            acc += p;
            if acc > tail {
                break;
            }
            k = w + 1;
        }
        k
    } else {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        let z = Normal::default().inverse_cdf(1.0 - tail);
        (mean - z * sd).floor().max(0.0) as usize
    };
    if k == 0 || k > big / 2 + 1 {
        return None;
    }
    let coverage = if n <= EXACT_LIMIT {
        1.0 - 2.0 * cdf(&null_distribution(n), k - 1)
    } else {
        level
    };
    Some(((walsh[k - 1], walsh[big - k]), coverage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_p_with_five_pairs_is_one_in_sixteen() {
        // All five differences positive: P(W⁺ = 15) = 1/32, two-sided 1/16.
        let p = p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.0);
        assert!((p - 0.0625).abs() < 1e-12, "{p}");
        // Centred at 3, the differences are symmetric: no evidence at all.
        assert!(p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], 3.0) > 0.9);
    }

    #[test]
    fn published_critical_value_n10() {
        // Hollander & Wolfe table A.4: n = 10, P(W⁺ ≥ 47) = 0.024, so P(W⁺ ≤ 8) = 0.024.
        let d = null_distribution(10);
        assert!((cdf(&d, 8) - 0.0244).abs() < 5e-4, "{}", cdf(&d, 8));
    }

    #[test]
    fn five_pairs_cannot_give_a_95_interval_seven_can() {
        assert_eq!(interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95), None);
        let ((lo, hi), cov) = interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 0.95).unwrap();
        assert!(lo > 1.0 && hi < 7.0 && lo < 4.0 && hi > 4.0, "{lo} {hi}");
        assert!((0.95..0.99).contains(&cov), "{cov}");
    }
}
