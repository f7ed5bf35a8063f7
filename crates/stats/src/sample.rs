//! A set of repeated measurements of one quantity, with its invariants enforced.

use serde::Serialize;

use crate::error::StatsError;

/// Repeated measurements: never empty, every value finite. Values keep the order they
/// were given in, so outlier indices point back at repetitions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    values: Vec<f64>,
    sorted: Vec<f64>,
}

impl Sample {
    pub fn new(values: Vec<f64>) -> Result<Self, StatsError> {
        if values.is_empty() {
            return Err(StatsError::Empty);
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NotFinite { index, value });
        }
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        Ok(Self { values, sorted })
    }

    /// The values in the order given.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The values in increasing order.
    pub fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a `Sample` cannot be empty. Present because `len` is.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn min(&self) -> f64 {
        self.sorted[0]
    }

    pub fn max(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }

    pub fn median(&self) -> f64 {
        median_of_sorted(&self.sorted)
    }

    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// Sample standard deviation (n − 1 denominator); 0 for a single value.
    pub fn stddev(&self) -> f64 {
        let n = self.values.len();
        if n < 2 {
            return 0.0;
        }
        let m = self.mean();
        let ss: f64 = self.values.iter().map(|v| (v - m) * (v - m)).sum();
        (ss / (n - 1) as f64).sqrt()
    }

    /// The q-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics
    /// (Hyndman & Fan type 7, the default of R and NumPy).
    pub fn quantile(&self, q: f64) -> f64 {
        quantile_of_sorted(&self.sorted, q)
    }

    /// True when some value occurs more than once (rank tests then need tie corrections).
    pub fn has_ties_with(&self, other: &Sample) -> bool {
        let mut all: Vec<f64> = self
            .sorted
            .iter()
            .chain(other.sorted.iter())
            .copied()
            .collect();
        all.sort_by(f64::total_cmp);
        all.windows(2).any(|w| w[0] == w[1])
    }
}

/// Median of the finite values, for figures that need no [`Sample`] (telemetry medians,
/// table cells); `None` when there is none.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(median_of_sorted(&v))
}

/// Median of an increasingly sorted, non-empty slice.
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        // Halving each term first keeps huge values from overflowing to infinity.
        sorted[n / 2 - 1] / 2.0 + sorted[n / 2] / 2.0
    }
}

/// Type-7 quantile of an increasingly sorted, non-empty slice.
pub(crate) fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let q = q.clamp(0.0, 1.0);
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_empty_and_non_finite() {
        assert_eq!(Sample::new(vec![]), Err(StatsError::Empty));
        let e = Sample::new(vec![1.0, f64::NAN]).unwrap_err();
        assert!(matches!(e, StatsError::NotFinite { index: 1, .. }), "{e}");
        assert!(Sample::new(vec![f64::INFINITY]).is_err());
    }

    #[test]
    fn order_statistics_match_textbook_values() {
        let s = Sample::new(vec![7.0, 1.0, 3.0, 5.0]).unwrap();
        assert_eq!(s.median(), 4.0);
        assert_eq!(s.min(), 1.0);
        assert_eq!(s.max(), 7.0);
        assert_eq!(s.mean(), 4.0);
        // R: quantile(c(1,3,5,7), c(.25,.75)) = 2.5, 5.5
        assert_eq!(s.quantile(0.25), 2.5);
        assert_eq!(s.quantile(0.75), 5.5);
        // R: sd(c(1,3,5,7)) = 2.581989
        assert!((s.stddev() - 2.581_988_897_471_611).abs() < 1e-12);
        assert_eq!(s.values(), &[7.0, 1.0, 3.0, 5.0]);
        let one = Sample::new(vec![3.0]).unwrap();
        assert_eq!((one.median(), one.stddev()), (3.0, 0.0));
    }

    #[test]
    fn median_skips_non_finite_values_and_is_none_when_empty() {
        assert_eq!(median([3.0, f64::NAN, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median([f64::INFINITY]), None);
        assert_eq!(median(std::iter::empty()), None);
    }

    #[test]
    fn median_of_huge_values_stays_finite() {
        let s = Sample::new(vec![f64::MAX, f64::MAX]).unwrap();
        assert_eq!(s.median(), f64::MAX);
    }
}
