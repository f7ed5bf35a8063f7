//! What the search asks of the world: rounds of measurements.

use serde::{Deserialize, Serialize};

/// One round: the good end, the bad end and (for a tested commit) the commit, measured
/// one after the other in an order the oracle chooses, so that drift between rounds
/// cancels in the paired comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub good: f64,
    pub bad: f64,
    /// `None` in the rounds that check the ends alone.
    pub commit: Option<f64>,
}

impl Round {
    /// Measurements this round took.
    pub fn measurements(&self) -> usize {
        2 + usize::from(self.commit.is_some())
    }
}

/// A commit's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Measured {
    /// The first `n` rounds asked for (or more: extra rounds an earlier, killed bisection
    /// measured are kept and used).
    Rounds(Vec<Round>),
    /// The commit cannot be measured (its build failed): skipped, as `git bisect skip`.
    Skipped(String),
}

/// The oracle could not measure at all (the study failed, the store refused): the
/// bisection stops with this error; what was measured before is kept by the oracle.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OracleError(pub String);

/// What the search asks: at least `n` rounds of `commit` (an index into the list; `None`
/// for the ends alone), each interleaved with the good and the bad end. An oracle that
/// stored earlier rounds returns them first, so asking again measures only what is new.
pub trait Oracle {
    fn rounds(&mut self, commit: Option<usize>, n: usize) -> Result<Measured, OracleError>;
}
