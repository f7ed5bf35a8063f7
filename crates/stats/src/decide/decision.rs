//! How a row's verdict was reached: the test it rests on and the interval it read, kept
//! with the row ([`crate::Comparison::decision`]) for the reader and for JSON.

use serde::Serialize;

use super::evidence::Evidence;

/// The test a row's verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// t on the row's differences, its variance moderated across the family.
    ModeratedT,
    /// t on the row's own variance (a family too small to borrow from, or a row on
    /// another scale than the family's).
    T,
    /// Wilcoxon signed rank on the paired differences (the t's assumptions failed).
    SignedRank,
    /// Mann-Whitney on the two sides' logs (unpaired, the t's assumptions failed).
    RankSum,
    /// Nothing to test: the baseline's median is 0.
    None,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::ModeratedT => "moderated t",
            Method::T => "t",
            Method::SignedRank => "signed rank",
            Method::RankSum => "rank sum",
            Method::None => "none",
        }
    }
}

/// Why a row cannot be judged at all: its repetitions estimate no spread, so no interval
/// can be drawn and no verdict follows (a zero-width interval never carries one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoSpread {
    /// One value per side (a single repetition, an import of single figures), and no
    /// family with repetitions to borrow a spread from.
    OneValuePerSide,
    /// Every difference is the same (identical repetitions): the spread estimate is 0.
    AllEqual,
}

impl NoSpread {
    /// The reason, as a reader sees it beside the row.
    pub fn reason(self) -> &'static str {
        match self {
            NoSpread::OneValuePerSide => {
                "one value per side: no spread to judge a change by (run 2 or more repetitions)"
            }
            NoSpread::AllEqual => {
                "every repetition gave the same difference: no spread to judge a change by"
            }
        }
    }
}

/// The row's change and its sides' medians tell different stories: their ratio points the
/// other way, or lies further from the change than the interval is wide (issue 32: irq-fill
/// medians +9.5 % beside a change of −12.13 %). The row keeps its verdict and carries `!`
/// with this reason.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Disagreement {
    /// B's median over A's, minus 1, in percent.
    pub medians_pct: f64,
    /// The change the verdict estimates, in percent.
    pub change_pct: f64,
    pub cause: DisagreementCause,
}

/// What most likely pulls the change away from the medians.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DisagreementCause {
    /// A repetition far from the others (Tukey's fences on a side, or the rank fallback's
    /// far-out value) pulls the mean log-ratio; the medians ignore it.
    WildRepetition,
    /// No single value stands out: a side's values are not one bell (bimodal, skewed), so
    /// its median and its mean differ.
    Shape,
}

impl Disagreement {
    /// The one-line reason beside the row.
    pub fn reason(&self) -> String {
        let why = match self.cause {
            DisagreementCause::WildRepetition => {
                "a repetition far from the others pulls the change; the medians ignore it"
            }
            DisagreementCause::Shape => {
                "a side's repetitions are not one bell (bimodal or skewed), so its median \
                 and its mean differ"
            }
        };
        format!(
            "! the medians' ratio ({:+.2}%) and the change ({:+.2}%) disagree: {why}",
            self.medians_pct, self.change_pct
        )
    }
}

/// How a row's verdict was reached, for the reader and for JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    pub method: Method,
    /// The row's own statistics (`None` with a zero baseline).
    pub evidence: Option<Evidence>,
    /// Degrees of freedom of the t law used (own plus borrowed); `None` for rank tests.
    pub df: Option<f64>,
    /// The threshold θ, in percent: "same" lies inside ±θ.
    pub threshold_pct: f64,
    /// Confidence of the interval shown, 1 − R·α/m.
    pub level: f64,
    /// The interval, on the row's scale (log-ratio, or relative).
    pub interval: (f64, f64),
    /// The rank interval cannot reach `level` with so few repetitions: the full range is
    /// shown and the row is undecided.
    pub widened: bool,
    /// Why the t's assumptions were judged broken, when they were.
    pub fallback: Option<String>,
    /// The row has no spread of its own and none to borrow: undecided, whatever its change.
    pub no_spread: Option<NoSpread>,
    /// The row has no spread of its own (one value per side) and was read with the
    /// family's variance, borrowed from rows that have repetitions.
    pub spread_borrowed: bool,
    /// The change and the sides' medians disagree (see [`Disagreement`]).
    pub disagreement: Option<Disagreement>,
    /// The comparison tested nothing (verdict `void`): why, naming the telemetry that did
    /// not move. Set by [`Decision::make_void`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub void: Option<String>,
    /// For an undecided row: about how many repetitions (pairs) would decide it, if the
    /// change and spread stay as they are; `None` when decided, or beyond practical.
    pub reps_to_decide: Option<u64>,
    /// The share of alpha this row may spend at the look where it stopped: 1 for a fixed
    /// design; less for a row that took repetitions until decided, whose looks share
    /// alpha ([`sequential`]).
    pub weight: f64,
}

impl Decision {
    pub(crate) fn pending(threshold_pct: f64, evidence: Option<Evidence>) -> Self {
        Self {
            method: if evidence.is_some() {
                Method::T
            } else {
                Method::None
            },
            evidence,
            df: None,
            threshold_pct,
            level: 0.0,
            interval: (f64::NEG_INFINITY, f64::INFINITY),
            widened: false,
            fallback: None,
            no_spread: None,
            spread_borrowed: false,
            disagreement: None,
            void: None,
            reps_to_decide: None,
            weight: 1.0,
        }
    }
}
