//! One tested commit C, read from its rounds (G C B, …) as two paired rows, C against the
//! good end and C against the bad end, decided together by `perflab_stats` with the
//! variance borrowed from the bisection's earlier rows.
//!
//! The threshold is the **midpoint**: half the change from good to bad (Δ̂/2, Δ̂ from
//! every good/bad pair measured so far). "Same as good" is then "C vs G lies within ±Δ̂/2
//! and C vs B beyond it towards good" — each a verdict of its own row, with its interval,
//! so both ends agree before a commit is called. At a threshold of Δ̂/2 a single step's
//! commits sit Δ̂/2 from it on either side, the most a verdict can have, which is what
//! makes a bisect step cheap. A commit that sits between the ends (two steps in the range)
//! never decides at the midpoint; at the cap it is read again at perflab's own threshold
//! (`noise_pct`): moved from good towards bad *and* from bad towards good is `in between`.
//! Anything else undecided stays undecided: no commit is placed from an undecided row.

use perflab_core::Better;
use perflab_stats::decide::decide_family_borrowing;
use perflab_stats::{compare_paired, Comparison, Sample, StatsConfig, Verdict};
use serde::Serialize;

use crate::oracle::Round;

/// Where a tested commit lies between the ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Same as the good end, and beyond the midpoint from the bad one.
    Good,
    /// Same as the bad end, and beyond the midpoint from the good one.
    Bad,
    /// Moved from both ends, towards the other: a second change in the range.
    Between,
    /// Beyond the good end (better than good by more than half the change): a fix and a
    /// regression in the range.
    BeyondGood,
    /// Beyond the bad end.
    BeyondBad,
    /// Not decided at the cap: neither end's, and not placed.
    Undecided,
    /// Not measured: its build failed.
    Skipped,
}

impl Class {
    pub fn words(self) -> &'static str {
        match self {
            Class::Good => "same as good",
            Class::Bad => "same as bad",
            Class::Between => "in between",
            Class::BeyondGood => "beyond good",
            Class::BeyondBad => "beyond bad",
            Class::Undecided => "undecided",
            Class::Skipped => "skipped",
        }
    }

    /// A class that says the range holds more than one change.
    pub fn second_change(self) -> bool {
        matches!(self, Class::Between | Class::BeyondGood | Class::BeyondBad)
    }
}

/// One row's evidence, as reports show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// better / worse / same / undecided, in the metric's own direction.
    pub verdict: Verdict,
    /// The change of the commit over the end, in percent.
    pub change_pct: Option<f64>,
    /// The interval the verdict used, in percent.
    pub interval_pct: Option<(f64, f64)>,
    /// Its confidence.
    pub level: f64,
    /// The threshold the row was decided at, in percent.
    pub threshold_pct: f64,
    pub pairs: usize,
}

impl Row {
    pub fn of(c: &Comparison) -> Self {
        Self {
            verdict: c.verdict,
            change_pct: c.change_pct,
            interval_pct: c.change_ci_pct,
            level: c.decision.level,
            threshold_pct: c.decision.threshold_pct,
            pairs: c.decision.evidence.as_ref().map_or(0, |e| e.n),
        }
    }
}

/// The ends as measured so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ends {
    /// ln(bad / good), the mean of the paired log-ratios over every round.
    pub log_change: f64,
}

impl Ends {
    /// From every round measured so far (ends-only and commit rounds alike).
    pub fn from_rounds<'a>(rounds: impl IntoIterator<Item = &'a Round>) -> Option<Self> {
        let (mut sum, mut n) = (0.0, 0usize);
        for r in rounds {
            if r.good > 0.0 && r.bad > 0.0 {
                sum += (r.bad / r.good).ln();
                n += 1;
            }
        }
        (n > 0).then(|| Self {
            log_change: sum / n as f64,
        })
    }

    /// The midpoint threshold, in percent: half the change from good to bad.
    pub fn midpoint_pct(&self) -> f64 {
        ((self.log_change.abs() / 2.0).exp() - 1.0) * 100.0
    }

    /// +1 when bad is the higher value, −1 when lower.
    fn direction(&self) -> f64 {
        self.log_change.signum()
    }
}

/// A commit's class and the rows it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub class: Class,
    pub vs_good: Comparison,
    pub vs_bad: Comparison,
}

/// How one row reads relative to the ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Same,
    /// The commit's value moved towards the bad end's direction.
    TowardsBad,
    TowardsGood,
    Undecided,
}

fn side(c: &Comparison, ends: &Ends) -> Side {
    match c.verdict {
        Verdict::Same => Side::Same,
        Verdict::Undecided => Side::Undecided,
        _ => match c.change_pct {
            Some(x) if x * ends.direction() > 0.0 => Side::TowardsBad,
            Some(x) if x * ends.direction() < 0.0 => Side::TowardsGood,
            _ => Side::Undecided,
        },
    }
}

/// How much a class needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Either row decided alone places the commit on one side of the midpoint — within
    /// Δ̂/2 of good, or beyond Δ̂/2 from bad towards good, both mean "nearer good than half
    /// the change" — unless the other row, decided, says the opposite (then nothing is
    /// placed) or that it lies beyond an end. What the search steps by.
    Either,
    /// Only the row of the end it is called after: `same as good` is "within Δ̂/2 of the
    /// good end", which also rules out "beyond good" (a fix before a regression). What the
    /// last good and the first bad commit are confirmed by.
    Strict,
}

/// The class two rows' readings give under `rule`.
fn place(g: Side, b: Side, rule: Rule) -> Class {
    if g == Side::TowardsGood {
        return Class::BeyondGood;
    }
    if b == Side::TowardsBad {
        return Class::BeyondBad;
    }
    let good_side = g == Side::Same || (rule == Rule::Either && b == Side::TowardsGood);
    let bad_side = b == Side::Same || (rule == Rule::Either && g == Side::TowardsBad);
    match (good_side, bad_side) {
        (true, false) => Class::Good,
        (false, true) => Class::Bad,
        _ => Class::Undecided,
    }
}

/// Where a reading stands: the look's share of alpha, whether it is the last look, and
/// what a class needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    pub weight: f64,
    /// The cap: an undecided commit is read again for `in between`.
    pub at_cap: bool,
    pub rule: Rule,
}

/// Reads a commit from its rounds (those without a commit value are ignored) at `look`;
/// `borrowed` holds the (s², d) of the bisection's earlier rows.
pub fn classify(
    rounds: &[Round],
    ends: &Ends,
    look: Look,
    borrowed: &[(f64, f64)],
    better: Better,
    cfg: &StatsConfig,
) -> Option<Judged> {
    let Look {
        weight,
        at_cap,
        rule,
    } = look;
    let mid = StatsConfig {
        noise_pct: ends.midpoint_pct(),
        ..*cfg
    };
    let (mut vs_good, mut vs_bad) = rows(rounds, better, &mid)?;
    decide(&mut vs_good, &mut vs_bad, weight, borrowed, &mid);
    let (g, b) = (side(&vs_good, ends), side(&vs_bad, ends));
    let class = place(g, b, rule);
    if class != Class::Undecided || !at_cap {
        return Some(Judged {
            class,
            vs_good,
            vs_bad,
        });
    }
    // At the cap: is it in between, moved from both ends at perflab's own threshold?
    let (mut g2, mut b2) = rows(rounds, better, cfg)?;
    decide(&mut g2, &mut b2, weight, borrowed, cfg);
    if side(&g2, ends) == Side::TowardsBad && side(&b2, ends) == Side::TowardsGood {
        return Some(Judged {
            class: Class::Between,
            vs_good: g2,
            vs_bad: b2,
        });
    }
    Some(Judged {
        class,
        vs_good,
        vs_bad,
    })
}

/// The two rows, undecided: the commit against each end, paired by round.
fn rounds_to_samples(rounds: &[Round]) -> Option<(Sample, Sample, Sample)> {
    let (mut g, mut c, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for r in rounds {
        if let Some(x) = r.commit {
            g.push(r.good);
            c.push(x);
            b.push(r.bad);
        }
    }
    Some((
        Sample::new(g).ok()?,
        Sample::new(c).ok()?,
        Sample::new(b).ok()?,
    ))
}

fn rows(rounds: &[Round], better: Better, cfg: &StatsConfig) -> Option<(Comparison, Comparison)> {
    let (g, c, b) = rounds_to_samples(rounds)?;
    let pairs: Vec<(usize, usize)> = (0..c.len()).map(|i| (i, i)).collect();
    Some((
        compare_paired(&g, &c, &pairs, better, cfg),
        compare_paired(&b, &c, &pairs, better, cfg),
    ))
}

fn decide(
    a: &mut Comparison,
    b: &mut Comparison,
    weight: f64,
    borrowed: &[(f64, f64)],
    cfg: &StatsConfig,
) {
    a.decision.weight = weight;
    b.decision.weight = weight;
    decide_family_borrowing(&mut [a, b], cfg, borrowed);
}

/// (s², d) of a decided row, for later rows to borrow.
pub fn variance_of(c: &Comparison) -> Option<(f64, f64)> {
    c.decision
        .evidence
        .as_ref()
        .filter(|e| e.scale == perflab_stats::Scale::Log && e.df > 0.0)
        .map(|e| (e.var, e.df))
}
