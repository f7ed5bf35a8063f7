//! What a comparison of a candidate B with a baseline A holds: both summaries, the change
//! and its interval, the verdict and how it was reached. Built by [`crate::compare`],
//! decided by [`crate::decide`].

use perflab_core::Better;
use serde::Serialize;

use crate::decide::Decision;
use crate::hodges_lehmann::Shift;
use crate::mann_whitney::MannWhitney;
use crate::summary::Summary;
use crate::verdict::Verdict;

/// Everything known about B relative to A.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Summary,
    pub b: Summary,
    pub better: Better,
    /// The change the verdict estimates, in percent: the geometric mean of the paired
    /// ratios B/A minus 1 (the ratio of the geometric means, unpaired; the rank centre
    /// when a rank test decided). `None` when median A is 0.
    pub change_pct: Option<f64>,
    /// The interval the verdict used, in percent ([`Decision::level`] confidence).
    /// Computed on the log scale, so it never reaches −100 %.
    pub change_ci_pct: Option<(f64, f64)>,
    /// Positive = worse (see [`crate::regression_pct`]); `None` when `change_pct` is.
    pub regression_pct: Option<f64>,
    /// The decision p-value of this row read alone: "the change sits on the nearer
    /// threshold" (see [`crate::decide`]); small when the row is clearly decided.
    pub p_value: f64,
    /// `p_value` adjusted for the other rows of the same family (Benjamini-Hochberg).
    pub p_adjusted: f64,
    /// Mann-Whitney on the raw values, a description only.
    pub test: MannWhitney,
    /// Hodges-Lehmann shift of the raw values, a description only.
    pub shift: Shift,
    pub verdict: Verdict,
    /// How the verdict was reached: method, interval, level, repetitions to decide.
    pub decision: Decision,
    /// Caveats a reader must see: a zero baseline, an interval widened for lack of data.
    pub notes: Vec<String>,
}

impl Comparison {
    /// The verdict's word, e.g. `same`.
    pub fn symbol(&self) -> &'static str {
        self.verdict.symbol()
    }

    /// Marks the row `void`: its comparison tested nothing (`reason` says what did not
    /// move). Its change and medians stay for the record; no interval, verdict or advice on
    /// repetitions stands, since none could come of more of the same. A disagreement of
    /// the change with the medians stays too: the figures are still shown side by side, and
    /// without its `!` they would contradict each other (the sweep found such a row).
    pub fn make_void(&mut self, reason: impl Into<String>) {
        self.verdict = Verdict::Void;
        self.change_ci_pct = None;
        self.decision.void = Some(reason.into());
        self.decision.reps_to_decide = None;
    }
}

#[cfg(test)]
mod void_tests {
    use super::*;

    #[test]
    fn a_void_row_keeps_no_verdict_interval_or_advice() {
        let a = crate::Sample::new(vec![100.0, 101.0, 99.0]).unwrap();
        let b = crate::Sample::new(vec![130.0, 131.0, 129.0]).unwrap();
        let cfg = crate::StatsConfig::default();
        let mut c = crate::compare(&a, &b, Better::Higher, &cfg);
        c.make_void("no idle entries in either variant");
        assert_eq!((c.verdict, c.symbol()), (Verdict::Void, "void"));
        assert_eq!((c.change_ci_pct, c.decision.reps_to_decide), (None, None));
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["verdict"], "void");
        assert_eq!(
            json["decision"]["void"],
            "no idle entries in either variant"
        );
    }

    /// A void row's change that contradicts its medians keeps its `!` (it was cleared,
    /// and irq-fill printed -10.59 % beside medians +2.45 % with nothing said).
    #[test]
    fn a_void_row_keeps_its_disagreement_with_the_medians() {
        let a = crate::Sample::new(vec![100.0, 101.0, 99.0, 100.5]).unwrap();
        let b = crate::Sample::new(vec![102.0, 103.0, 40.0, 102.5]).unwrap();
        let mut c = crate::compare(&a, &b, Better::Higher, &crate::StatsConfig::default());
        let before = c.decision.disagreement;
        assert!(before.is_some(), "{:?}", c.decision);
        c.make_void("no interrupt moved");
        assert_eq!(c.decision.disagreement, before);
    }
}
