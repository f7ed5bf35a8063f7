//! The four verdicts of a comparison row: `better` / `worse` when the change lies beyond
//! ±threshold, `same` when it lies inside, `undecided` when the interval the verdict used
//! straddles a threshold (see [`crate::decide`] for how that interval is built).

use perflab_core::Better;
use serde::Serialize;

/// What a comparison concluded about B relative to A.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Verdict {
    /// The change lies beyond the threshold in the better direction.
    #[serde(rename = "better")]
    Improved,
    /// The change lies beyond the threshold in the worse direction.
    #[serde(rename = "worse")]
    Regressed,
    /// The change lies inside ±threshold: an equivalence verdict.
    #[serde(rename = "same")]
    Same,
    /// The interval straddles a threshold: more repetitions would tell.
    #[serde(rename = "undecided")]
    Undecided,
    /// Beyond the threshold, for a metric with no better direction (`Better::Neither`,
    /// e.g. a count of interrupts).
    #[serde(rename = "changed")]
    Changed,
    /// The comparison tested nothing: what the variant's settings are meant to move did
    /// not move (no idle entries in either variant, no interrupt moved, no huge page
    /// used). No interval or repetition count can change that; the reason is in
    /// [`crate::Decision::void`].
    #[serde(rename = "void")]
    Void,
}

impl Verdict {
    /// The word shown in tables; `WORSE` shouts because it is the one to act on.
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Improved => "better",
            Verdict::Regressed => "WORSE",
            Verdict::Same => "same",
            Verdict::Undecided => "undecided",
            Verdict::Changed => "changed",
            Verdict::Void => "void",
        }
    }

    /// The name JSON carries: better, worse, same, undecided (or changed).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Improved => "better",
            Verdict::Regressed => "worse",
            Verdict::Same => "same",
            Verdict::Undecided => "undecided",
            Verdict::Changed => "changed",
            Verdict::Void => "void",
        }
    }

    /// True for better, worse and changed: the rows where something moved.
    pub fn moved(self) -> bool {
        matches!(
            self,
            Verdict::Improved | Verdict::Regressed | Verdict::Changed
        )
    }

    /// Where the interval `(lo, hi)` of the change (on a scale where `tau` is the
    /// threshold and 0 no change) lies: wholly above +tau, wholly below −tau, wholly
    /// inside, or across a threshold.
    pub fn from_interval((lo, hi): (f64, f64), tau: f64, better: Better) -> Self {
        let up = lo > tau;
        let down = hi < -tau;
        if !(up || down) {
            return if lo > -tau && hi < tau {
                Verdict::Same
            } else {
                Verdict::Undecided
            };
        }
        match (better, up) {
            (Better::Higher, true) | (Better::Lower, false) => Verdict::Improved,
            (Better::Higher, false) | (Better::Lower, true) => Verdict::Regressed,
            (Better::Neither, _) => Verdict::Changed,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.symbol())
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
    fn the_interval_decides_and_direction_follows_better() {
        use Verdict::*;
        let t = 0.01;
        assert_eq!(
            Verdict::from_interval((0.02, 0.05), t, Better::Higher),
            Improved
        );
        assert_eq!(
            Verdict::from_interval((0.02, 0.05), t, Better::Lower),
            Regressed
        );
        assert_eq!(
            Verdict::from_interval((-0.05, -0.02), t, Better::Higher),
            Regressed
        );
        assert_eq!(
            Verdict::from_interval((-0.05, -0.02), t, Better::Lower),
            Improved
        );
        assert_eq!(
            Verdict::from_interval((0.02, 0.05), t, Better::Neither),
            Changed
        );
        assert_eq!(
            Verdict::from_interval((-0.005, 0.009), t, Better::Higher),
            Same
        );
        assert_eq!(
            Verdict::from_interval((0.005, 0.02), t, Better::Higher),
            Undecided
        );
        assert_eq!(
            Verdict::from_interval((-0.02, 0.02), t, Better::Higher),
            Undecided
        );
        assert_eq!(serde_json::to_string(&Regressed).unwrap(), "\"worse\"");
        assert_eq!(serde_json::to_string(&Same).unwrap(), "\"same\"");
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
