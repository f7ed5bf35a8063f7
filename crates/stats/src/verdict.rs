//! The three-way verdict (benchstat's rule): a change counts only when it is both
//! statistically significant and larger than the noise threshold.

use perflab_core::Better;
use serde::Serialize;

/// What a comparison concluded about B relative to A.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    /// Not significant, or within the noise threshold: `~`.
    NoChange,
    /// Significant and above the threshold, for a metric with no better direction
    /// (`Better::Neither`, e.g. a count of interrupts).
    Changed,
}

impl Verdict {
    /// The short word shown in tables. `~` is benchstat's "no significant change".
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Improved => "better",
            Verdict::Regressed => "WORSE",
            Verdict::NoChange => "~",
            Verdict::Changed => "changed",
        }
    }

    /// Applies the rule: `significant` (p < alpha) and `beyond_noise` (|change| above the
    /// threshold) both hold, then `increased` (B above A) gives the direction.
    pub fn decide(significant: bool, beyond_noise: bool, increased: bool, better: Better) -> Self {
        if !(significant && beyond_noise) {
            return Verdict::NoChange;
        }
        match (better, increased) {
            (Better::Higher, true) | (Better::Lower, false) => Verdict::Improved,
            (Better::Higher, false) | (Better::Lower, true) => Verdict::Regressed,
            (Better::Neither, _) => Verdict::Changed,
        }
    }
}

/// The change of B relative to A in the seed's sense of "regression": positive means
/// worse. For `Better::Neither` it is the size of the change, |change|.
pub fn regression_pct(change_pct: f64, better: Better) -> f64 {
    match better {
        Better::Higher => -change_pct,
        Better::Lower => change_pct,
        Better::Neither => change_pct.abs(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_follows_better() {
        use Verdict::*;
        assert_eq!(Verdict::decide(true, true, true, Better::Higher), Improved);
        assert_eq!(
            Verdict::decide(true, true, false, Better::Higher),
            Regressed
        );
        assert_eq!(Verdict::decide(true, true, true, Better::Lower), Regressed);
        assert_eq!(Verdict::decide(true, true, false, Better::Lower), Improved);
        assert_eq!(Verdict::decide(true, true, false, Better::Neither), Changed);
        assert_eq!(Verdict::decide(false, true, true, Better::Higher), NoChange);
        assert_eq!(Verdict::decide(true, false, true, Better::Higher), NoChange);
    }

    #[test]
    fn regression_is_positive_when_worse() {
        // The seed: snooze 286441.60 vs all 273925.60 context switches/s -> 4.37 % worse.
        let change = (273925.60 - 286441.60) / 286441.60 * 100.0;
        assert!((regression_pct(change, Better::Higher) - 4.3695).abs() < 1e-3);
        assert_eq!(regression_pct(3.0, Better::Lower), 3.0);
        assert_eq!(regression_pct(-3.0, Better::Neither), 3.0);
    }
}
