//! The bisection: the ends first, then the commit nearest the middle of what is left,
//! each measured until decided, as `git bisect` would walk it.
//!
//! - **The ends** are compared at perflab's own threshold (`noise_pct`) with repetitions
//!   until decided: `same` stops the bisection ("good and bad do not differ"), undecided at
//!   the cap stops it too (no change to look for has been shown), and a moved verdict sets
//!   the direction and the first estimate of the change.
//! - **Each commit** gets rounds (G C B) at the looks of its [`Schedule`], alpha shared
//!   over the looks, until [`classify`] places it; its rows borrow the variance of every
//!   row decided before (one machine, one study: the noise is the bisection's, not the
//!   commit's).
//! - **Skipped** (failed build) and **undecided** commits are stepped around like
//!   `git bisect skip`: the next nearest to the middle is tried instead. If the first bad
//!   commit cannot be told apart from them, the candidates are named, not one of them.
//! - **A second change** (a commit in between, or beyond an end) stops the bisection with
//!   the range flagged: naming one commit would hide the other.

use perflab_core::Better;
use perflab_stats::decide::sequential::Schedule;
use perflab_stats::{compare_paired, Sample, StatsConfig, Verdict};
use serde::Serialize;

use std::collections::BTreeMap;

use crate::classify::{classify, variance_of, Class, Ends, Look, Row, Rule};
use crate::oracle::{Measured, Oracle, OracleError, Round};

/// How the bisection decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub stats: StatsConfig,
    /// The direction of the figure bisected (throughput higher, time lower).
    pub better: Better,
    /// Pairs of the ends' check: planned and cap.
    pub ends: Schedule,
    /// Rounds of each commit: planned and cap.
    pub commit: Schedule,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            stats: StatsConfig::default(),
            better: Better::Lower,
            ends: Schedule::new(5, 40),
            commit: Schedule::new(2, 30),
        }
    }
}

/// One tested commit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Index into the commit list.
    pub commit: usize,
    pub class: Class,
    /// Rounds measured (G C B each).
    pub rounds: usize,
    /// The commit against the good end and against the bad end (absent when skipped).
    pub vs_good: Option<Row>,
    pub vs_bad: Option<Row>,
    /// Why it was skipped.
    pub skipped: Option<String>,
    /// The last good or first bad commit, measured on until its own end's row decided
    /// (`same as good` within half the change of the good end, not only beyond the
    /// midpoint from the bad one).
    pub confirmed: bool,
}

/// What the bisection concluded.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The ends are the same (within the threshold): nothing to look for.
    NoDifference,
    /// The ends' comparison stayed undecided at its cap.
    EndsUndecided,
    /// The first bad commit, the last good one before it.
    FirstBad { commit: usize, last_good: usize },
    /// The first bad commit is one of these (skipped or undecided commits between the
    /// last good and the first bad tested).
    Candidates {
        last_good: usize,
        first_bad: usize,
        untested: Vec<usize>,
    },
    /// The range holds more than one change: `commit` is neither end's.
    TwoChanges {
        commit: usize,
        class: Class,
        last_good: usize,
        first_bad: usize,
    },
}

/// A finished bisection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bisection {
    pub outcome: Outcome,
    /// The ends compared: the bad end against the good one.
    pub ends: Row,
    /// Pairs of the ends' check.
    pub ends_pairs: usize,
    /// The tested commits, in the order tested.
    pub steps: Vec<Step>,
    /// Every measurement taken (each round of the ends' check is 2, of a commit 3).
    pub measurements: usize,
}

impl Bisection {
    /// The step of a commit, if it was tested.
    pub fn step(&self, commit: usize) -> Option<&Step> {
        self.steps.iter().find(|s| s.commit == commit)
    }
}

/// Bisects `n` commits (index 0 the good end, `n − 1` the bad end).
pub fn bisect(
    n: usize,
    oracle: &mut dyn Oracle,
    settings: &Settings,
) -> Result<Bisection, OracleError> {
    if n < 2 {
        return Err(OracleError(
            "a bisection needs a good and a bad commit".into(),
        ));
    }
    let (ends_row, ends_rounds) = check_ends(oracle, settings)?;
    let mut b = Bisection {
        outcome: Outcome::NoDifference,
        ends: crate::classify::Row::of(&ends_row),
        ends_pairs: ends_rounds.len(),
        steps: Vec::new(),
        measurements: ends_rounds.iter().map(Round::measurements).sum(),
    };
    match ends_row.verdict {
        Verdict::Same => return Ok(b),
        Verdict::Undecided => {
            b.outcome = Outcome::EndsUndecided;
            return Ok(b);
        }
        _ => {}
    }
    let mut walk = Walk {
        oracle,
        settings,
        ends_rounds,
        rounds: BTreeMap::new(),
        borrowed: variance_of(&ends_row).into_iter().collect(),
    };
    let mut range = Range {
        lo: 0,
        hi: n - 1,
        stepped_around: Vec::new(),
    };
    let flagged = match range.walk(&mut walk, &mut b.steps)? {
        Some(flag) => Some(flag),
        None => range.confirm(&mut walk, &mut b.steps, n)?,
    };
    b.measurements = walk.measurements();
    b.outcome = match flagged {
        Some((commit, class)) => Outcome::TwoChanges {
            commit,
            class,
            last_good: range.lo,
            first_bad: range.hi,
        },
        None => range.conclusion(n),
    };
    Ok(b)
}

/// What is known of the range: the last commit placed good, the first placed bad, and
/// the commits stepped around (skipped or undecided).
struct Range {
    lo: usize,
    hi: usize,
    stepped_around: Vec<usize>,
}

impl Range {
    /// Bisects until `lo` and `hi` are neighbours but for stepped-around commits; returns
    /// a commit that flags a second change, with its class, if one is met.
    fn walk(
        &mut self,
        walk: &mut Walk<'_>,
        steps: &mut Vec<Step>,
    ) -> Result<Option<(usize, Class)>, OracleError> {
        while let Some(mid) = next_commit(self.lo, self.hi, &self.stepped_around) {
            let step = walk.measure(mid, Rule::Either)?;
            let class = step.class;
            steps.push(step);
            match class {
                Class::Good => self.lo = mid,
                Class::Bad => self.hi = mid,
                Class::Skipped | Class::Undecided => self.stepped_around.push(mid),
                _ => return Ok(Some((mid, class))),
            }
        }
        Ok(None)
    }

    /// The walk steps by the midpoint; the two commits it ends between are confirmed
    /// against their own ends, which a fix before a regression (a "good" commit beyond
    /// good) or a second step would fail. A commit not confirmed joins the candidates.
    fn confirm(
        &mut self,
        walk: &mut Walk<'_>,
        steps: &mut [Step],
        n: usize,
    ) -> Result<Option<(usize, Class)>, OracleError> {
        for (commit, end) in [(self.lo, 0), (self.hi, n - 1)] {
            if commit == end {
                continue;
            }
            let step = walk.measure(commit, Rule::Strict)?;
            let class = step.class;
            let i = steps
                .iter()
                .position(|s| s.commit == commit)
                .expect("the walk tested the commits it ends between");
            let walked = steps[i].class;
            steps[i] = Step {
                confirmed: class == walked,
                ..step
            };
            if class.second_change() {
                return Ok(Some((commit, class)));
            }
            if class != walked {
                self.stepped_around.push(commit);
            }
        }
        Ok(None)
    }

    /// The first bad commit, or the candidates when stepped-around commits hide it.
    fn conclusion(&self, n: usize) -> Outcome {
        let (lo, hi) = (self.lo, self.hi);
        let mut untested: Vec<usize> = self
            .stepped_around
            .iter()
            .copied()
            .filter(|&c| lo <= c && c <= hi && c != 0 && c != n - 1)
            .collect();
        untested.sort_unstable();
        untested.dedup();
        if untested.is_empty() {
            Outcome::FirstBad {
                commit: hi,
                last_good: lo,
            }
        } else {
            Outcome::Candidates {
                last_good: lo,
                first_bad: hi,
                untested,
            }
        }
    }
}

/// The commit strictly between `lo` and `hi`, not yet stepped around, nearest the middle
/// (the lower of two as near); `None` when there is none.
fn next_commit(lo: usize, hi: usize, stepped_around: &[usize]) -> Option<usize> {
    let middle = lo + (hi - lo) / 2;
    (lo + 1..hi)
        .filter(|c| !stepped_around.contains(c))
        .min_by_key(|&c| (c.abs_diff(middle), c))
}

/// The ends compared with repetitions until decided: the bad end against the good one.
fn check_ends(
    oracle: &mut dyn Oracle,
    s: &Settings,
) -> Result<(perflab_stats::Comparison, Vec<Round>), OracleError> {
    let mut n = s.ends.planned;
    loop {
        let rounds = match oracle.rounds(None, n)? {
            Measured::Rounds(r) => r,
            Measured::Skipped(why) => {
                return Err(OracleError(format!("the ends cannot be measured: {why}")))
            }
        };
        let (g, b): (Vec<f64>, Vec<f64>) = rounds.iter().map(|r| (r.good, r.bad)).unzip();
        let (Ok(sg), Ok(sb)) = (Sample::new(g), Sample::new(b)) else {
            return Err(OracleError("the ends gave no measurements".into()));
        };
        let pairs: Vec<(usize, usize)> = (0..sg.len()).map(|i| (i, i)).collect();
        let mut c = compare_paired(&sg, &sb, &pairs, s.better, &s.stats);
        c.decision.weight = s.ends.weight(rounds.len());
        perflab_stats::decide_family(&mut [&mut c], &s.stats);
        match s.ends.next(rounds.len()) {
            Some(next) if c.verdict == Verdict::Undecided => n = next,
            _ => return Ok((c, rounds)),
        }
    }
}

/// The bisection's measurements so far, and the oracle that adds to them.
struct Walk<'a> {
    oracle: &'a mut dyn Oracle,
    settings: &'a Settings,
    ends_rounds: Vec<Round>,
    /// Every tested commit's rounds (the oracle returns all it holds each time).
    rounds: BTreeMap<usize, Vec<Round>>,
    /// (s², d) of every row decided so far, for the next rows to borrow.
    borrowed: Vec<(f64, f64)>,
}

impl Walk<'_> {
    fn measurements(&self) -> usize {
        self.ends_rounds
            .iter()
            .chain(self.rounds.values().flatten())
            .map(Round::measurements)
            .sum()
    }

    /// One commit measured until `rule` decides it (or skipped, or undecided at the cap).
    fn measure(&mut self, commit: usize, rule: Rule) -> Result<Step, OracleError> {
        let s = self.settings;
        let mut n = s.commit.planned;
        loop {
            let rounds = match self.oracle.rounds(Some(commit), n)? {
                Measured::Rounds(r) => r,
                Measured::Skipped(why) => {
                    return Ok(Step {
                        commit,
                        class: Class::Skipped,
                        rounds: 0,
                        vs_good: None,
                        vs_bad: None,
                        skipped: Some(why),
                        confirmed: false,
                    });
                }
            };
            let earlier = self
                .rounds
                .iter()
                .filter(|(c, _)| **c != commit)
                .flat_map(|(_, r)| r);
            let ends = Ends::from_rounds(self.ends_rounds.iter().chain(earlier).chain(&rounds))
                .ok_or_else(|| OracleError("the ends gave no measurements".into()))?;
            let next = s.commit.next(rounds.len());
            let weight = s.commit.weight(rounds.len());
            let look = Look {
                weight,
                at_cap: next.is_none(),
                rule,
            };
            let judged = classify(&rounds, &ends, look, &self.borrowed, s.better, &s.stats)
                .ok_or_else(|| OracleError(format!("commit {commit} gave no measurements")))?;
            let len = rounds.len();
            self.rounds.insert(commit, rounds);
            match next {
                Some(next) if judged.class == Class::Undecided => n = next,
                _ => {
                    self.borrowed.extend(variance_of(&judged.vs_good));
                    self.borrowed.extend(variance_of(&judged.vs_bad));
                    return Ok(Step {
                        commit,
                        class: judged.class,
                        rounds: len,
                        vs_good: Some(Row::of(&judged.vs_good)),
                        vs_bad: Some(Row::of(&judged.vs_bad)),
                        skipped: None,
                        confirmed: false,
                    });
                }
            }
        }
    }
}
