//! Statistics for perflab: what repeated measurements say, and how sure we are.
//!
//! - [`Sample`]: repetitions of one quantity, never empty, all finite.
//! - [`Summary`]: median, mean, spread, a percentile-bootstrap interval of the median
//!   (Efron 1979) and outliers marked by Tukey's fences (Tukey 1977).
//! - [`compare`]: baseline A against candidate B, with one of four [`Verdict`]s (better,
//!   worse, same, undecided) from [`decide`]: paired log-ratios, a t whose variance is
//!   moderated across the family (Smyth 2004) with a rank fallback, Benjamini-Hochberg
//!   over the family and false-coverage-rate intervals (Benjamini & Yekutieli 2005).
//!   Mann-Whitney (1947) and the Hodges-Lehmann shift (1963) describe the raw values.
//! - [`adjust_family`]: the rows of one comparison decided together.
//! - [`drift`]: the timing probe stored with each run, and whether it moved between two
//!   runs compared with each other.
//! - [`Buckets`]: the seed study's regression distribution buckets.
//! - [`parallel`]: whether the threads of a measurement ran in parallel, and whether
//!   their per-thread bandwidths may be summed (seed 000).
//!
//! docs/METHODOLOGY.md explains every statistic, the defaults and the small-sample caveat.

pub mod buckets;
pub mod changepoint;
pub mod compare;
pub mod comparison;
pub mod config;
pub mod decide;
pub mod drift;
pub mod error;
pub mod fdr;
pub mod hodges_lehmann;
pub mod mann_whitney;
pub mod parallel;
pub mod precision;
pub mod procedure;
pub mod sample;
pub mod simulate;
pub mod summary;
pub mod verdict;

pub use buckets::{Bucket, Buckets, DEFAULT_EDGES};
pub use compare::{compare, compare_paired, fmt_p, geomean};
pub use comparison::Comparison;
pub use config::StatsConfig;
pub use decide::{
    adjust_family, decide_family, Decision, Disagreement, DisagreementCause, Evidence, Method,
    NoSpread, Prior, Scale,
};
pub use drift::{probe_drift, ProbeDrift, ProbeReading, TimingProbe};
pub use error::StatsError;
pub use fdr::{benjamini_hochberg, rows_needed_together, FamilyAdjustment};
pub use hodges_lehmann::{hodges_lehmann, Shift};
pub use mann_whitney::{mann_whitney, min_p_value, reps_needed, MannWhitney, MwMethod};
pub use precision::{reps_for_half_width, PRACTICAL_REPS};
pub use procedure::Procedure;
pub use sample::{median, Sample};
pub use summary::{bootstrap_median_ci, tukey_outliers, Summary};
pub use verdict::{regression_pct, Verdict};
