//! The seeded simulation behind `perflab crosscheck bisect`: 1,024 commits, each measured
//! as its level × (1 + cv·z), z standard normal, independent (xoshiro256++ via
//! `perflab_stats::simulate::Gen`, fixed seeds, the same figures on every machine).
//!
//! - **One step**: a +3 % step (a time, lower is better) at a random commit, 1 % noise:
//!   the share of trials naming the right commit, and the measurements spent against the
//!   smallest fixed-repetition bisection (the same verdicts, every comparison at one fixed
//!   number of rounds, as the kernel test robot's fixed repetitions) that is as accurate.
//!   A second baseline without verdicts — each commit read as the nearer end's after k
//!   rounds, as a plain `git bisect run` script would — is shown for comparison.
//! - **No change**: the share stopped at once with "no difference".
//! - **Two steps**: +3 % then +3 % again, or a fix (−3 %) then a regression (+6.2 %):
//!   the share with the range flagged as holding two changes.

use std::collections::{HashMap, HashSet};

use perflab_core::Better;
use perflab_stats::decide::sequential::Schedule;
use perflab_stats::simulate::{sim_config, Bound, Gen, Target};

use crate::oracle::{Measured, Oracle, OracleError, Round};
use crate::retry::{gather, Short};
use crate::search::{bisect, Outcome, Settings};

/// Commits in the simulated range, the good end and the bad end included.
pub const COMMITS: usize = 1024;
/// Relative noise of one measurement.
pub const NOISE: f64 = 0.01;

/// A history whose commit `i` runs at `levels[i]`, measured with seeded noise; commits in
/// `skipped` fail to build. Every round drawn is kept, so asking again returns the same
/// rounds (as a store would after a kill) and counts nothing twice.
pub struct SimOracle {
    levels: Vec<f64>,
    cv: f64,
    gen: Gen,
    kept: HashMap<Option<usize>, Vec<Round>>,
    pub skipped: HashSet<usize>,
    /// Commits whose first runs lose every round to other work on the machine (their
    /// measurements are drawn, and disturbed): how many runs of each do.
    pub disturbed: HashMap<usize, usize>,
    /// Measurements drawn so far.
    pub drawn: usize,
}

impl SimOracle {
    pub fn new(levels: Vec<f64>, cv: f64, seed: u64) -> Self {
        Self {
            levels,
            cv,
            gen: Gen::new(seed),
            kept: HashMap::new(),
            skipped: HashSet::new(),
            disturbed: HashMap::new(),
            drawn: 0,
        }
    }

    fn draw(&mut self, i: usize) -> f64 {
        self.drawn += 1;
        self.gen.draw(self.levels[i], self.cv, false)
    }
}

impl Oracle for SimOracle {
    fn rounds(&mut self, commit: Option<usize>, n: usize) -> Result<Measured, OracleError> {
        if let Some(c) = commit.filter(|c| self.skipped.contains(c)) {
            return Ok(Measured::Skipped(format!("commit {c} does not build")));
        }
        let stored = self.kept.get(&commit).cloned().unwrap_or_default();
        let got = gather(n, (stored, None), |_, missing| {
            Ok::<_, OracleError>(self.run(commit, missing))
        })?;
        match got.short {
            None => Ok(Measured::Rounds(got.rounds)),
            Some(_) => Ok(Measured::Skipped(format!(
                "{} of {n} rounds missing{}",
                n - got.rounds.len(),
                got.why_skipped()
            ))),
        }
    }
}

impl SimOracle {
    /// One run of `missing` rounds: every round kept, or every one disturbed (drawn, not
    /// kept) while `disturbed` says so for the commit.
    fn run(&mut self, commit: Option<usize>, missing: usize) -> (Vec<Round>, Option<Short>) {
        let last = self.levels.len() - 1;
        let lost = commit
            .and_then(|c| self.disturbed.get_mut(&c))
            .filter(|left| **left > 0)
            .map(|left| *left -= 1)
            .is_some();
        let mut new = Vec::new();
        for _ in 0..missing {
            let good = self.draw(0);
            let commit_value = commit.map(|c| self.draw(c));
            let bad = self.draw(last);
            new.push(Round {
                good,
                bad,
                commit: commit_value,
            });
        }
        let kept = self.kept.entry(commit).or_default();
        if lost {
            return (kept.clone(), Some(Short::Disturbed));
        }
        kept.extend(new);
        (kept.clone(), None)
    }
}

/// Levels with a step of `factor` at each `(commit, factor)`: commit i runs at the product
/// of the factors of the steps at or before it.
pub fn levels(steps: &[(usize, f64)]) -> Vec<f64> {
    (0..COMMITS)
        .map(|i| {
            steps
                .iter()
                .filter(|(at, _)| *at <= i)
                .map(|(_, f)| f)
                .product::<f64>()
                * 100_000.0
        })
        .collect()
}

/// The settings the simulation bisects with: the defaults, one bootstrap resample (the
/// verdicts do not use it), a time (lower is better).
pub fn sim_settings() -> Settings {
    Settings {
        stats: sim_config(1.0),
        better: Better::Lower,
        ..Settings::default()
    }
}

/// A uniform index in `lo..hi` from the generator (its normal draws, through the normal
/// law's CDF, would do; a uniform from two of them is simpler: the fractional part of a
/// large multiple).
fn uniform(g: &mut Gen, lo: usize, hi: usize) -> usize {
    let u = (g.z() * 1e6).rem_euclid(1.0);
    lo + ((u * (hi - lo) as f64) as usize).min(hi - lo - 1)
}

/// One-step trials: (right, measurements) per trial.
fn one_step(g: &mut Gen, trials: u32, s: &Settings) -> Vec<(bool, usize)> {
    (0..trials)
        .map(|_| {
            let at = uniform(g, 1, COMMITS);
            let mut o = SimOracle::new(levels(&[(at, 1.03)]), NOISE, g.z().to_bits());
            let b = bisect(COMMITS, &mut o, s).expect("the simulation measures");
            let right = matches!(b.outcome, Outcome::FirstBad { commit, .. } if commit == at);
            (right, o.drawn)
        })
        .collect()
}

/// A fixed design: every comparison at `k` rounds, no second look.
fn fixed(k: usize, s: &Settings) -> Settings {
    Settings {
        ends: Schedule::new(k, k),
        commit: Schedule::new(k, k),
        ..*s
    }
}

fn share(results: &[(bool, usize)]) -> (f64, f64) {
    let n = results.len().max(1) as f64;
    let right = results.iter().filter(|r| r.0).count() as f64 / n;
    let spent = results.iter().map(|r| r.1).sum::<usize>() as f64 / n;
    (right, spent)
}

/// The smallest fixed design at least as accurate as `accuracy`: (k, accuracy, mean
/// measurements). Accuracy rises with k, so a bisection over k finds it.
fn smallest_fixed(g: &mut Gen, trials: u32, accuracy: f64, s: &Settings) -> (usize, f64, f64) {
    let (mut lo, mut hi) = (2usize, 40usize);
    let mut best = {
        let (a, m) = share(&one_step(g, trials, &fixed(hi, s)));
        (hi, a, m)
    };
    while lo < hi {
        let mid = (lo + hi) / 2;
        let (a, m) = share(&one_step(g, trials, &fixed(mid, s)));
        if a >= accuracy {
            best = (mid, a, m);
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    best
}

/// The baseline without verdicts: k rounds (G C B) per commit, each commit read as the end
/// whose mean log is nearer; no check of the ends. (right, measurements) per trial.
fn nearer_end(g: &mut Gen, trials: u32, k: usize) -> Vec<(bool, usize)> {
    (0..trials)
        .map(|_| {
            let at = uniform(g, 1, COMMITS);
            let mut o = SimOracle::new(levels(&[(at, 1.03)]), NOISE, g.z().to_bits());
            let (mut lo, mut hi) = (0usize, COMMITS - 1);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                let Ok(Measured::Rounds(r)) = o.rounds(Some(mid), k) else {
                    unreachable!("the simulation measures every commit")
                };
                let mean = |f: &dyn Fn(&Round) -> f64| {
                    r.iter().map(|x| f(x).ln()).sum::<f64>() / r.len() as f64
                };
                let c = mean(&|x| x.commit.unwrap_or(x.good));
                let (lg, lb) = (mean(&|x| x.good), mean(&|x| x.bad));
                if (c - lg).abs() < (c - lb).abs() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (hi == at, o.drawn)
        })
        .collect()
}

fn smallest_nearer_end(g: &mut Gen, trials: u32, accuracy: f64) -> (usize, f64, f64) {
    for k in 1..=40 {
        let (a, m) = share(&nearer_end(g, trials, k));
        if a >= accuracy {
            return (k, a, m);
        }
    }
    (40, 0.0, 0.0)
}

/// Trials whose outcome satisfies `ok`, over histories made by `steps`.
fn rate(
    g: &mut Gen,
    trials: u32,
    s: &Settings,
    steps: &dyn Fn(&mut Gen) -> Vec<(usize, f64)>,
    ok: &dyn Fn(&Outcome) -> bool,
) -> (f64, f64) {
    let results: Vec<(bool, usize)> = (0..trials)
        .map(|_| {
            let st = steps(g);
            let mut o = SimOracle::new(levels(&st), NOISE, g.z().to_bits());
            let b = bisect(COMMITS, &mut o, s).expect("the simulation measures");
            (ok(&b.outcome), o.drawn)
        })
        .collect();
    share(&results)
}

/// Two distinct step positions, in order.
fn two_positions(g: &mut Gen) -> (usize, usize) {
    loop {
        let (a, b) = (uniform(g, 1, COMMITS), uniform(g, 1, COMMITS));
        if a != b {
            return (a.min(b), a.max(b));
        }
    }
}

/// Every figure of `perflab crosscheck bisect`, over `trials` bisections per line.
pub fn bisect_targets(trials: u32, seed: u64) -> Vec<Target> {
    bisect_targets_with(trials, seed, &sim_settings())
}

/// [`bisect_targets`] with other settings (to weigh schedules against each other).
pub fn bisect_targets_with(trials: u32, seed: u64, settings: &Settings) -> Vec<Target> {
    let mut g = Gen::new(seed);
    let mut out = one_step_targets(&mut g, trials, settings);
    out.extend(range_targets(&mut g, trials, settings));
    out
}

fn target(what: &str, value: f64, bound: Bound, trials: u32, detail: String) -> Target {
    Target {
        what: what.into(),
        value,
        bound,
        trials,
        detail,
    }
}

/// One step: accuracy, and the cost against the two fixed baselines.
fn one_step_targets(g: &mut Gen, trials: u32, settings: &Settings) -> Vec<Target> {
    let (accuracy, spent) = share(&one_step(g, trials, settings));
    let (k, fixed_accuracy, fixed_spent) = smallest_fixed(g, trials, accuracy, settings);
    let (kn, near_accuracy, near_spent) = smallest_nearer_end(g, trials, accuracy);
    vec![
        target(
            "one +3% step in 1% noise, 1,024 commits: right commit",
            accuracy,
            Bound::AtLeast(0.95),
            trials,
            format!("{spent:.0} measurements per bisection on average"),
        ),
        target(
            "one step: measurements / fixed-repetition bisection of equal accuracy",
            spent / fixed_spent,
            Bound::AtMost(0.60),
            trials,
            format!(
                "{spent:.0} vs {fixed_spent:.0}: fixed {k} rounds per comparison, right in \
                 {:.1}%",
                fixed_accuracy * 100.0
            ),
        ),
        target(
            "one step: measurements / nearer-end bisection without verdicts (shown)",
            spent / near_spent,
            Bound::Shown,
            trials,
            format!(
                "{spent:.0} vs {near_spent:.0}: {kn} rounds per commit, right in {:.1}%",
                near_accuracy * 100.0
            ),
        ),
    ]
}

/// Ranges without a change, and with two.
fn range_targets(g: &mut Gen, trials: u32, settings: &Settings) -> Vec<Target> {
    let (none, none_spent) = rate(g, trials, settings, &|_| Vec::new(), &|o| {
        *o == Outcome::NoDifference
    });
    let flagged = |o: &Outcome| matches!(o, Outcome::TwoChanges { .. });
    let two_steps = |g: &mut Gen| {
        let (a, b) = two_positions(g);
        vec![(a, 1.03), (b, 1.03)]
    };
    let (two, two_spent) = rate(g, trials, settings, &two_steps, &flagged);
    let fix_then_regression = |g: &mut Gen| {
        let (a, b) = two_positions(g);
        vec![(a, 0.97), (b, 1.03 / 0.97)]
    };
    let (fix, fix_spent) = rate(g, trials, settings, &fix_then_regression, &flagged);
    vec![
        target(
            "no change in the range: \"no difference\"",
            none,
            Bound::AtLeast(0.95),
            trials,
            format!("{none_spent:.0} measurements on average"),
        ),
        target(
            "two steps (+3%, +3%): range flagged as holding two changes",
            two,
            Bound::AtLeast(0.90),
            trials,
            format!("{two_spent:.0} measurements on average"),
        ),
        target(
            "a fix (-3%) then a regression (+6.2%): range flagged",
            fix,
            Bound::AtLeast(0.90),
            trials,
            format!("{fix_spent:.0} measurements on average"),
        ),
    ]
}
