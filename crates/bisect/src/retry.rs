//! How often a commit still short of rounds is measured again before it is skipped.
//!
//! A round needs a figure of the good end, the commit and the bad end from one
//! repetition. One lost to a failure (the program crashed, did not boot, gave no metric)
//! is asked again [`ATTEMPTS`] times in all, then the commit is skipped as one that does
//! not build. One lost only because other work disturbed it (docs/METHODOLOGY.md, "A
//! disturbed machine") says nothing about the commit: on a busy machine three runs were
//! not enough (a bisection here skipped a commit whose rounds were disturbed three times
//! and named two candidates), so such a shortfall is asked again up to
//! [`DISTURBED_ATTEMPTS`] times in all, each run measuring only what is missing.

use crate::oracle::Round;

/// Runs of a commit (each measuring only the rounds still missing) while a missing round
/// failed.
pub const ATTEMPTS: usize = 3;

/// Runs of a commit while every missing round was lost to other work on its CPUs only.
pub const DISTURBED_ATTEMPTS: usize = 8;

/// Why a commit still lacks rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Short {
    /// Every missing round lost a measurement to other work (disturbed), none failed.
    Disturbed,
    /// A missing round failed, or gave no figure of the metric.
    Failed,
}

/// Whether a commit still short of rounds for `short` after `done` runs is run again.
pub fn again(done: usize, short: Short) -> bool {
    match short {
        Short::Failed => done < ATTEMPTS,
        Short::Disturbed => done < DISTURBED_ATTEMPTS,
    }
}

/// One variant's measurement in one repetition (the good end, the commit or the bad end):
/// its figure, and whether other work disturbed it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slot {
    pub value: Option<f64>,
    pub disturbed: bool,
}

/// The rounds of repetitions measured as `[good, commit, bad]` (the commit's slot unused
/// when `with_commit` is false), and why those that gave none gave none: only disturbed
/// measurements missing, or one that failed or gave no figure.
pub fn rounds_of(
    reps: impl IntoIterator<Item = [Slot; 3]>,
    with_commit: bool,
) -> (Vec<Round>, Option<Short>) {
    let mut rounds = Vec::new();
    let mut short = None;
    for v in reps {
        match (v[0].value, v[1].value, v[2].value) {
            (Some(good), c, Some(bad)) if c.is_some() == with_commit => rounds.push(Round {
                good,
                bad,
                commit: c,
            }),
            _ => {
                let wanted = |i: &usize| *i != 1 || with_commit;
                let failed = (0..3)
                    .filter(wanted)
                    .any(|i| v[i].value.is_none() && !v[i].disturbed);
                let why = match failed {
                    true => Short::Failed,
                    false => Short::Disturbed,
                };
                short = worse(short, Some(why));
            }
        }
    }
    (rounds, short)
}

/// Of two reasons rounds are missing, the one that bounds the runs more: a failure.
pub fn worse(a: Option<Short>, b: Option<Short>) -> Option<Short> {
    match (a, b) {
        (Some(Short::Failed), _) | (_, Some(Short::Failed)) => Some(Short::Failed),
        (a, b) => a.or(b),
    }
}

/// What a commit's runs gave: its rounds, why it still lacks some (if it does), and how
/// many runs were started.
#[derive(Clone, Debug, PartialEq)]
pub struct Gathered {
    pub rounds: Vec<Round>,
    pub short: Option<Short>,
    pub runs: usize,
}

/// From the rounds stored already (`stored`, with why the missing ones are missing), runs
/// `measure(run, missing)` until there are `n` rounds or [`again`] says stop; `measure`
/// returns every round stored after its run, and why any are still missing.
pub fn gather<E>(
    n: usize,
    stored: (Vec<Round>, Option<Short>),
    mut measure: impl FnMut(usize, usize) -> Result<(Vec<Round>, Option<Short>), E>,
) -> Result<Gathered, E> {
    let (mut rounds, mut short) = stored;
    let mut runs = 0;
    // Before any run, what is stored says nothing about this commit's chances.
    while rounds.len() < n && (runs == 0 || again(runs, short.unwrap_or(Short::Failed))) {
        (rounds, short) = measure(runs, n - rounds.len())?;
        runs += 1;
    }
    if rounds.len() >= n {
        short = None;
    }
    Ok(Gathered {
        rounds,
        short,
        runs,
    })
}

impl Gathered {
    /// Why the commit is skipped, after the oracle's own words: how its runs went, and the
    /// bound that stopped them.
    pub fn why_skipped(&self) -> String {
        match self.short {
            None => String::new(),
            Some(Short::Disturbed) => format!(
                "; other work on the measured CPUs disturbed every round it lacks, in all {} \
                 runs (a commit short only of disturbed rounds is run up to {} times, one \
                 with failed rounds {}): run the same command again when the machine is \
                 quieter, and only the missing rounds are measured",
                self.runs, DISTURBED_ATTEMPTS, ATTEMPTS
            ),
            Some(Short::Failed) => format!(
                "; {} runs (a commit with failed rounds is run up to {} times)",
                self.runs, ATTEMPTS
            ),
        }
    }
}
