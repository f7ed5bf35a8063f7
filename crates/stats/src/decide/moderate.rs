//! Variance borrowed across the rows of one family: the empirical-Bayes moderated t of
//! limma (Smyth 2004, "Linear models and empirical Bayes methods for assessing
//! differential expression in microarray experiments", Stat. Appl. Genet. Mol. Biol.
//! 3(1), §6; the moment estimator is his `fitFDist`).
//!
//! Each row g has its own variance s²_g on d_g degrees of freedom. The rows' true
//! variances are taken to scatter about a common s²₀ like a scaled inverse χ² on d₀
//! degrees of freedom; then the posterior variance of a row is
//!
//!   s̃²_g = (d₀ s²₀ + d_g s²_g) / (d₀ + d_g),
//!
//! and (mean / √(s̃²_g v_g)) follows a t law on d₀ + d_g degrees of freedom. d₀ and s²₀
//! come from the first two moments of ln s²_g across the family: when the rows' variances
//! scatter no more than sampling alone explains, d₀ is infinite and every row uses s²₀;
//! when they scatter widely, d₀ is small and each row keeps mostly its own.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use statrs::function::gamma::digamma;

/// Rows below this many do not moderate: two or fewer variances say nothing about their
/// spread.
pub const MIN_ROWS: usize = 3;
/// An "infinite" prior is held at this many degrees of freedom, so the t law stays a
/// number (at 10,000 degrees of freedom it is the normal law to four digits).
pub const DF_CAP: f64 = 10_000.0;

/// The family's prior of the row variances.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prior {
    /// d₀: how many degrees of freedom the family's variance is worth to each row.
    pub df: f64,
    /// s²₀: the family's typical per-observation variance.
    pub var: f64,
    /// Rows the prior was estimated from.
    pub rows: usize,
    /// Their degrees of freedom together: no row's t may claim more (limma's
    /// `df.total <- pmin(df.total, sum(df.residual))`), or an infinite prior estimated
    /// from few rows would pass for a known variance.
    pub pooled_df: f64,
}

impl Prior {
    /// s̃²: a row's variance after borrowing, with its degrees of freedom.
    pub fn moderate(&self, var: f64, df: f64) -> (f64, f64) {
        let d0 = self.df.min(DF_CAP);
        let total = (d0 + df).min(self.pooled_df).min(DF_CAP);
        ((d0 * self.var + df * var) / (d0 + df), total)
    }
}

/// Smyth's moment estimate of the prior from (s², d) of each row; `None` with fewer than
/// [`MIN_ROWS`] usable rows (a zero variance has no logarithm and is left out).
pub fn estimate(rows: &[(f64, f64)]) -> Option<Prior> {
    let used: Vec<(f64, f64)> = rows
        .iter()
        .copied()
        .filter(|(v, d)| *v > 0.0 && v.is_finite() && *d > 0.0)
        .collect();
    let g = used.len();
    if g < MIN_ROWS {
        return None;
    }
    // e_g = ln s²_g − ψ(d_g/2) + ln(d_g/2) has mean ln s²₀ − ψ(d₀/2) + ln(d₀/2) and
    // variance ψ'(d_g/2) + ψ'(d₀/2).
    let e: Vec<f64> = used
        .iter()
        .map(|(v, d)| v.ln() - digamma(d / 2.0) + (d / 2.0).ln())
        .collect();
    let mean = e.iter().sum::<f64>() / g as f64;
    let spread = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (g - 1) as f64;
    let sampling = used.iter().map(|(_, d)| trigamma(d / 2.0)).sum::<f64>() / g as f64;
    let excess = spread - sampling;
    let df = if excess > 0.0 {
        2.0 * inverse_trigamma(excess)
    } else {
        f64::INFINITY
    };
    let var = if df.is_finite() {
        (mean + digamma(df / 2.0) - (df / 2.0).ln()).exp()
    } else {
        mean.exp()
    };
    let pooled_df = used.iter().map(|(_, d)| d).sum();
    Some(Prior {
        df,
        var,
        rows: g,
        pooled_df,
    })
}

/// The prior of the rows whose variance is not far out: a robust first pass (in the
/// spirit of limma's `robust = TRUE`, Phipson et al. 2016) takes the median of the rows'
/// variances, each scaled by its χ² median, as the family's variance and sets aside the
/// rows above the χ²_d/d quantile 1 − 0.01/G of it; the moments are then taken over the
/// rest. Without it, a few rows with one disturbed repetition each inflate the spread of
/// ln s², the prior becomes worth almost nothing, and the disturbed rows are not seen as
/// out of the family (so never read with ranks).
pub fn estimate_robust(rows: &[(f64, f64)]) -> Option<Prior> {
    let used: Vec<(f64, f64)> = rows
        .iter()
        .copied()
        .filter(|(v, d)| *v > 0.0 && v.is_finite() && *d > 0.0)
        .collect();
    if used.len() < MIN_ROWS {
        return None;
    }
    let chi = |d: f64| ChiSquared::new(d).ok();
    let mut scaled: Vec<f64> = used
        .iter()
        .filter_map(|&(v, d)| chi(d).map(|c| v / (c.inverse_cdf(0.5) / d)))
        .collect();
    scaled.sort_by(f64::total_cmp);
    let typical = scaled[scaled.len() / 2];
    let g = used.len() as f64;
    let kept: Vec<(f64, f64)> = used
        .iter()
        .copied()
        .filter(|&(v, d)| chi(d).is_none_or(|c| v / typical <= c.inverse_cdf(1.0 - 0.01 / g) / d))
        .collect();
    estimate(if kept.len() >= MIN_ROWS { &kept } else { &used })
}

/// ψ'(x), the trigamma function: the recurrence ψ'(x) = ψ'(x+1) + 1/x² up to x ≥ 10,
/// then the asymptotic series (Abramowitz & Stegun 6.4.12).
pub fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 10.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let x2 = 1.0 / (x * x);
    acc + 1.0 / x
        + x2 / 2.0
        + (1.0 / x) * x2 * (1.0 / 6.0 - x2 * (1.0 / 30.0 - x2 * (1.0 / 42.0 - x2 * (1.0 / 30.0))))
}

/// The y > 0 with ψ'(y) = x, by bisection on ln y (ψ' falls monotonically).
fn inverse_trigamma(x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-8f64.ln(), 1e8f64.ln());
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if trigamma(mid.exp()) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigamma_matches_known_values() {
        // ψ'(1) = π²/6, ψ'(1/2) = π²/2.
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-10);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-10);
        assert!((inverse_trigamma(trigamma(2.5)) - 2.5).abs() < 1e-8);
    }

    #[test]
    fn equal_variances_give_a_large_prior_and_mixed_ones_a_small_one() {
        let same: Vec<(f64, f64)> = (0..40).map(|_| (1.0, 4.0)).collect();
        let p = estimate(&same).unwrap();
        // Sampling alone explains no spread: d₀ is infinite. The typical variance is
        // above the observed 1 because E[ln s²] = ln σ² + ψ(d/2) − ln(d/2) lies below ln σ².
        let expected = (2f64.ln() - digamma(2.0)).exp();
        assert!(
            p.df.is_infinite() && (p.var - expected).abs() < 1e-12,
            "{p:?}"
        );
        // Variances over four orders of magnitude: each row must keep mostly its own.
        let wide: Vec<(f64, f64)> = (0..40).map(|i| (10f64.powi(i % 5 - 2), 4.0)).collect();
        let p = estimate(&wide).unwrap();
        assert!(p.df < 2.0, "{p:?}");
        assert_eq!(estimate(&same[..2]), None);
        let prior = Prior {
            df: 4.0,
            var: 1.0,
            rows: 3,
            pooled_df: 12.0,
        };
        let (v, d) = prior.moderate(3.0, 4.0);
        assert!((v - 2.0).abs() < 1e-12 && (d - 8.0).abs() < 1e-12);
        // An infinite prior from three rows of 4 is worth their 12 degrees of freedom.
        let (_, d) = Prior {
            df: f64::INFINITY,
            ..prior
        }
        .moderate(3.0, 4.0);
        assert_eq!(d, 12.0);
    }
}
