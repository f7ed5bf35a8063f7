//! The procedure behind every comparison, described once. The report's "How to read" text,
//! a table's legend and `show`'s advice on repetitions are written from this description,
//! not from sentences of their own, so the words cannot drift from the method in use
//! (issue 32: every report described Mann-Whitney with `~` while the tables used paired
//! log-ratios and four verdicts). A change of method here changes every text with it.

use crate::config::StatsConfig;

/// What a comparison's numbers rest on, in words a reader sees.
#[derive(Clone, Debug, PartialEq)]
pub struct Procedure {
    /// How a side's median gets its interval.
    pub summary_interval: &'static str,
    /// Confidence of a side's median interval, e.g. "95%".
    pub summary_level: String,
    /// The change of a row measured interleaved within one run.
    pub paired_change: &'static str,
    /// The change of a row of two runs measured apart.
    pub unpaired_change: &'static str,
    /// The test a row's verdict rests on, and when it borrows from the other rows.
    pub test: &'static str,
    /// When a row is read with ranks instead.
    pub fallback: &'static str,
    /// How a table's rows share the error rate, and the intervals shown.
    pub family: &'static str,
    /// The verdict words, each with its rule, in the order a legend gives them.
    pub verdicts: [(&'static str, &'static str); 4],
    /// The false-verdict rate a table is held to.
    pub alpha: f64,
    /// The noise threshold θ in percent: `same` lies inside ±θ.
    pub noise_pct: f64,
    /// The fewest repetitions per side from which a row alone can be decided (fewer give no
    /// spread: `NoSpread::OneValuePerSide`).
    pub min_reps_alone: usize,
}

impl StatsConfig {
    /// The procedure [`crate::compare_paired`] and [`crate::adjust_family`] follow with this
    /// configuration.
    pub fn procedure(&self) -> Procedure {
        Procedure {
            summary_interval: "percentile-bootstrap",
            summary_level: self.confidence_label(),
            paired_change: "the mean log-ratio of the pairs A1 B1, A2 B2, ...",
            unpaired_change: "the difference of the mean logs (runs measured apart do not pair)",
            test: "a t test on the log-ratios, its variance moderated across the table's rows",
            fallback: "a rank test where the repetitions do not look like one bell",
            family: "the rows of a table are decided together (Benjamini-Hochberg; intervals \
                     at 1 - R*alpha/m for R of m rows decided)",
            verdicts: [
                ("better/WORSE", "CI beyond the threshold"),
                ("same", "CI inside"),
                ("undecided", "CI across"),
                (
                    "undecided, no spread",
                    "one value per side or identical repetitions, so no CI",
                ),
            ],
            alpha: self.alpha,
            noise_pct: self.noise_pct,
            min_reps_alone: 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The minimum stated is the one the decision keeps: one value per side gives no
    /// verdict, two decide a clear change.
    #[test]
    fn the_stated_minimum_is_the_deciding_one() {
        let cfg = StatsConfig::default();
        let min = cfg.procedure().min_reps_alone;
        let s = |v: Vec<f64>| crate::Sample::new(v).unwrap();
        let below = crate::compare(
            &s(vec![100.0; min - 1]),
            &s(vec![150.0; min - 1]),
            perflab_core::Better::Higher,
            &cfg,
        );
        assert!(!below.verdict.moved(), "{:?}", below.verdict);
        let a: Vec<f64> = (0..min).map(|i| 100.0 + i as f64 * 0.1).collect();
        let b: Vec<f64> = (0..min).map(|i| 150.0 - i as f64 * 0.07).collect();
        let pairs: Vec<(usize, usize)> = (0..min).map(|i| (i, i)).collect();
        let at = crate::compare_paired(&s(a), &s(b), &pairs, perflab_core::Better::Higher, &cfg);
        assert!(
            at.verdict.moved(),
            "{:?} {:?}",
            at.verdict,
            at.change_ci_pct
        );
    }
}
