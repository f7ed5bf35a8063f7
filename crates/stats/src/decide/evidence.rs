//! What one row's repetitions say about the change of B relative to A, before the
//! family is looked at: the mean log-ratio, its variance and degrees of freedom.
//!
//! The interleaved design measures A and B in alternation (A₁B₁, A₂B₂, …), so the
//! repetitions pair up and dᵢ = ln Bᵢ − ln Aᵢ removes whatever drifted between pairs
//! (Student 1908; the paired t). Two runs measured apart have no pairs, and the row is
//! the difference of the mean logs with the pooled variance (the two-sample t, same
//! variance on the log scale). On the log scale a ratio interval exp([lo, hi]) is always
//! positive and a change never falls below −100 %. Values ≤ 0 (counts that can be zero)
//! have no logarithm: such a row is read on the linear scale relative to median A, and
//! keeps its own variance (it does not share the family's, which is on another scale).

use serde::Serialize;

use crate::sample::{median, Sample};

/// How a row's differences are formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// ln B − ln A: a ratio.
    Log,
    /// (B − A) / |median A|: values ≤ 0 leave no logarithm.
    Relative,
}

/// One row's own statistics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    pub scale: Scale,
    /// True when repetitions were matched A₁B₁, A₂B₂, … (interleaved within one run).
    pub paired: bool,
    /// Pairs, or the smaller side's repetitions when unpaired.
    pub n: usize,
    /// Mean difference (mean log-ratio on the log scale).
    pub estimate: f64,
    /// Per-observation variance of the differences (s²), 0 when there is no spread.
    pub var: f64,
    /// Its degrees of freedom: n − 1 paired, n_A + n_B − 2 unpaired.
    pub df: f64,
    /// se² = var · factor: 1/n paired, 1/n_A + 1/n_B unpaired.
    pub factor: f64,
    /// The paired differences, for the rank fallback.
    #[serde(skip)]
    pub diffs: Vec<f64>,
    /// Each side's transformed values, for the unpaired rank fallback.
    #[serde(skip)]
    pub sides: (Vec<f64>, Vec<f64>),
}

impl Evidence {
    /// From the two samples, paired through `pairs` (indices into `a` and `b` of the
    /// repetitions measured together) when there are at least two; `None` when the
    /// baseline's median is 0, which leaves no relative scale at all.
    pub fn new(a: &Sample, b: &Sample, pairs: &[(usize, usize)]) -> Option<Self> {
        let positive = a.min() > 0.0 && b.min() > 0.0;
        let base = a.median().abs();
        if !positive && base == 0.0 {
            return None;
        }
        let (scale, f): (Scale, Box<dyn Fn(f64) -> f64>) = if positive {
            (Scale::Log, Box::new(f64::ln))
        } else {
            (Scale::Relative, Box::new(move |x| x / base))
        };
        let ta: Vec<f64> = a.values().iter().map(|&x| f(x)).collect();
        let tb: Vec<f64> = b.values().iter().map(|&x| f(x)).collect();
        if pairs.len() >= 2 {
            let diffs: Vec<f64> = pairs.iter().map(|&(i, j)| tb[j] - ta[i]).collect();
            let n = diffs.len();
            let (mean, var) = mean_var(&diffs);
            return Some(Self {
                scale,
                paired: true,
                n,
                estimate: mean,
                var,
                df: (n - 1) as f64,
                factor: 1.0 / n as f64,
                diffs,
                sides: (ta, tb),
            });
        }
        let (ma, va) = mean_var(&ta);
        let (mb, vb) = mean_var(&tb);
        let (na, nb) = (ta.len() as f64, tb.len() as f64);
        let df = na + nb - 2.0;
        let var = if df > 0.0 {
            ((na - 1.0) * va + (nb - 1.0) * vb) / df
        } else {
            0.0
        };
        Some(Self {
            scale,
            paired: false,
            n: ta.len().min(tb.len()),
            estimate: mb - ma,
            var,
            df,
            factor: 1.0 / na + 1.0 / nb,
            diffs: Vec::new(),
            sides: (ta, tb),
        })
    }

    /// The change in percent that a difference `x` on this row's scale means.
    pub fn to_pct(&self, x: f64) -> f64 {
        match self.scale {
            Scale::Log => x.exp_m1() * 100.0,
            Scale::Relative => x * 100.0,
        }
    }

    /// The threshold ±`noise_pct` % on this row's scale: ln(1 + θ) for ratios (so +θ %
    /// and its reciprocal, about −θ %, bound "the same").
    pub fn threshold(&self, noise_pct: f64) -> f64 {
        match self.scale {
            Scale::Log => (noise_pct / 100.0).ln_1p(),
            Scale::Relative => noise_pct / 100.0,
        }
    }

    /// The residuals the assumption check looks at: each difference from the row's
    /// centre (paired), or each value from its side's mean (unpaired).
    pub fn residuals(&self) -> Vec<f64> {
        if self.paired {
            let c = self.estimate;
            self.diffs.iter().map(|d| d - c).collect()
        } else {
            let centre = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let (ca, cb) = (centre(&self.sides.0), centre(&self.sides.1));
            let ra = self.sides.0.iter().map(move |x| x - ca);
            ra.chain(self.sides.1.iter().map(move |x| x - cb)).collect()
        }
    }

    /// A far-out value by Tukey's outer fences (3 IQR beyond the quartiles) among the
    /// residuals: one disturbed repetition in a row read alone. Below 8 values the
    /// quartiles are two order statistics apart and flag bell-shaped rows too often; there
    /// the t's own variance, inflated by the odd value, already widens the interval.
    pub fn far_out(&self) -> bool {
        let r = self.residuals();
        if r.len() < 8 {
            return false;
        }
        let s = match Sample::new(r.clone()) {
            Ok(s) => s,
            Err(_) => return false,
        };
        let (q1, q3) = (s.quantile(0.25), s.quantile(0.75));
        let iqr = q3 - q1;
        iqr > 0.0 && r.iter().any(|&x| x < q1 - 3.0 * iqr || x > q3 + 3.0 * iqr)
    }

    /// The centre of the differences a rank test sees: the median of the paired
    /// differences, else the difference of the sides' medians.
    pub fn rank_centre(&self) -> f64 {
        if self.paired {
            median(self.diffs.iter().copied()).unwrap_or(self.estimate)
        } else {
            let ma = median(self.sides.0.iter().copied()).unwrap_or(0.0);
            let mb = median(self.sides.1.iter().copied()).unwrap_or(0.0);
            mb - ma
        }
    }
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() > 1 {
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::new(v.to_vec()).unwrap()
    }

    #[test]
    fn pairs_cancel_a_drift_that_the_two_sample_form_keeps() {
        // Both sides drift upward together; B is 2 % above A in every pair.
        let a: Vec<f64> = (0..5).map(|i| 100.0 + 10.0 * i as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.02).collect();
        let pairs: Vec<(usize, usize)> = (0..5).map(|i| (i, i)).collect();
        let p = Evidence::new(&s(&a), &s(&b), &pairs).unwrap();
        assert!(p.paired && p.var < 1e-20 && (p.to_pct(p.estimate) - 2.0).abs() < 1e-9);
        let u = Evidence::new(&s(&a), &s(&b), &[]).unwrap();
        assert!(!u.paired && u.var > 0.01, "{u:?}");
    }

    #[test]
    fn zero_values_use_the_relative_scale_and_a_zero_baseline_none() {
        let e = Evidence::new(&s(&[0.0, 10.0, 10.0]), &s(&[5.0, 15.0, 15.0]), &[]).unwrap();
        assert_eq!(e.scale, Scale::Relative);
        assert!((e.to_pct(e.estimate) - 50.0).abs() < 1e-9);
        assert!(Evidence::new(&s(&[0.0, 0.0, 0.0]), &s(&[1.0, 2.0, 3.0]), &[]).is_none());
    }
}
