//! Which commit did it: a bisection over an ordered list of commits whose oracle is
//! perflab's verdict, with repetitions added until each tested commit is decided.
//!
//! - [`oracle`]: what the search asks of the world — rounds of a commit measured
//!   interleaved with the good and the bad end (G C B, G C B, …), or "skipped" (its build
//!   failed). The CLI's oracle builds and runs a study; [`sim`]'s draws seeded noise.
//! - [`classify`]: one tested commit read as `same as good`, `same as bad`, in between,
//!   beyond an end, or undecided, from two rows (commit vs good, commit vs bad) decided
//!   by `perflab_stats` at the midpoint threshold, never from an undecided row.
//! - [`search`]: the bisection itself: the ends checked first ("good and bad do not
//!   differ" stops it), `git bisect skip` for skipped and undecided commits, and a
//!   commit that is neither end's flags two changes in the range instead of naming one.
//! - [`retry`]: how often a commit short of rounds is run again before it is skipped
//!   (more often when only other work on the machine disturbed its rounds).
//! - [`sim`]: the seeded simulation `perflab crosscheck bisect` prints.
//!
//! The search is pure: the same oracle answers give the same bisection, so a killed
//! bisection whose oracle replays what it stored resumes without measuring anything twice.

pub mod classify;
pub mod oracle;
pub mod retry;
pub mod search;
pub mod sim;

pub use classify::{Class, Row};
pub use oracle::{Measured, Oracle, OracleError, Round};
pub use search::{bisect, Bisection, Outcome, Settings, Step};

#[cfg(test)]
mod tests;
