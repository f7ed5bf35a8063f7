//! The knobs of the analysis, with the defaults documented in docs/METHODOLOGY.md.

use serde::{Deserialize, Serialize};

use crate::error::StatsError;

/// Settings for summaries and comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsConfig {
    /// Significance level of the Mann-Whitney test: a change needs p < alpha.
    pub alpha: f64,
    /// Changes of the median smaller than this (in percent) are noise, whatever p says.
    pub noise_pct: f64,
    /// Coverage asked of confidence intervals (bootstrap and Hodges-Lehmann), e.g. 0.95.
    pub confidence: f64,
    /// Bootstrap resamples for the median's confidence interval.
    pub resamples: usize,
    /// Seed of the bootstrap's random numbers, so that a report is reproducible.
    pub seed: u64,
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            noise_pct: 1.0,
            confidence: 0.95,
            resamples: 2000,
            seed: 0x5EED_0F9E_2F1A_B004,
        }
    }
}

impl StatsConfig {
    /// Checks that every setting is usable; call it on settings that came from users.
    pub fn validate(&self) -> Result<(), StatsError> {
        let bad = |name, value, reason| {
            Err(StatsError::Config {
                name,
                value,
                reason,
            })
        };
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad("alpha", self.alpha, "must be between 0 and 1, e.g. 0.05");
        }
        // A noise band wider than ±100% would call a halving "the same".
        if !(0.0..=100.0).contains(&self.noise_pct) {
            return bad(
                "noise_pct",
                self.noise_pct,
                "must be a percentage from 0 to 100, e.g. 1",
            );
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return bad(
                "confidence",
                self.confidence,
                "must be between 0 and 1, e.g. 0.95",
            );
        }
        if self.resamples == 0 {
            return bad("resamples", 0.0, "must be at least 1, e.g. 2000");
        }
        Ok(())
    }

    /// The confidence level as a whole percentage for labels ("95%").
    pub fn confidence_label(&self) -> String {
        format!("{}%", trim_float(self.confidence * 100.0))
    }
}

/// `95.0` → "95", `99.9` → "99.9".
pub(crate) fn trim_float(x: f64) -> String {
    let s = format!("{:.3}", x);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_bad_values_are_named() {
        assert!(StatsConfig::default().validate().is_ok());
        let cfg = StatsConfig {
            alpha: 1.5,
            ..Default::default()
        };
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("alpha=1.5"), "{e}");
        let cfg = StatsConfig {
            noise_pct: f64::NAN,
            ..Default::default()
        };
        assert!(cfg.validate().is_err());
        let cfg = StatsConfig {
            resamples: 0,
            ..Default::default()
        };
        assert!(cfg.validate().is_err());
        assert_eq!(StatsConfig::default().confidence_label(), "95%");
    }
}
