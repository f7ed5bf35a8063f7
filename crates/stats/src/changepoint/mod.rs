//! Change points in a series of runs: where a figure moved, found after the fact.
//!
//! The detector is E-Divisive means (Matteson & James 2014, "A nonparametric approach for
//! multiple change point analysis of multivariate data", JASA 109:505), the method of
//! MongoDB's performance CI and of Apache Otava: a segment is split where the energy
//! distance between the part before a point and a window after it is largest
//! ([`energy`]), and the split is kept only when a permutation test says a homogeneous
//! segment rarely looks that divided ([`edivisive`]). Each kept split divides its segment
//! in two and both halves are tested again, until none divides.
//!
//! Why this one: on generated series (steps, outliers, spread changes, noise only;
//! [`generate`]) it was measured against PELT with a robust (absolute deviation) cost
//! ([`pelt`]); docs/METHODOLOGY.md "Change points in stored history" has the figures.
//! Energy distances see changes of spread as well as of level, the permutation test
//! needs no model of the noise, and its false-alarm rate on a series that never moved is
//! the test's level ([`ChangePointConfig::alpha`]) by construction.
//!
//! Everything is seeded: the same series and settings give the same change points on
//! every machine. [`score`] matches found change points to known ones (precision, recall,
//! F1), for the tests here and `perflab crosscheck history`.

pub mod edivisive;
pub mod energy;
pub mod generate;
pub mod pelt;
pub mod score;

#[cfg(test)]
mod tests;

use serde::Serialize;

pub use edivisive::e_divisive;
pub use pelt::{pelt, PeltConfig};
pub use score::{match_points, Score};

/// Settings of [`e_divisive`]; the defaults are documented in docs/METHODOLOGY.md.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChangePointConfig {
    /// Level of each permutation test: a split is kept when p ≤ alpha. On a series that
    /// never moved, the chance of any change point at all is about alpha.
    pub alpha: f64,
    /// How much higher the level is inside a series already found to have moved: the
    /// stretches between change points are tested at `alpha × within` (at most 1). A series
    /// that never moved is tested once, at `alpha`, so its false-alarm rate stays alpha;
    /// a series that did is searched harder for its other changes (docs/METHODOLOGY.md).
    pub within: f64,
    /// Permutations per test (at most; a test stops early once it cannot reach alpha).
    /// The smallest p it can give is 2 / (permutations + 1).
    pub permutations: usize,
    /// The fewest runs a segment may hold: a few outlying runs never make a segment of
    /// their own, and a test of a stretch scans fewer places, so it sees more.
    pub min_size: usize,
    /// The power distances are raised to, in (0, 2): 1 is Matteson & James' and Otava's
    /// choice; smaller values weigh changes of spread more against changes of level.
    pub exponent: f64,
    /// Seed of the permutations.
    pub seed: u64,
}

impl Default for ChangePointConfig {
    fn default() -> Self {
        Self {
            alpha: 0.01,
            within: 2.0,
            permutations: 399,
            min_size: 6,
            exponent: 1.0,
            seed: 0xC4A1_6E90_1A75_2026,
        }
    }
}

/// One change point: the series differs from `index` on (the first run after the change).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index of the first value of the new segment (never 0).
    pub index: usize,
    /// The permutation test's p-value for the split that found it.
    pub p_value: f64,
    /// The divergence that found it (Matteson & James' q̂), in the series' units.
    pub strength: f64,
}
