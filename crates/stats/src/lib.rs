//! Statistics for perflab: what repeated measurements say, and how sure we are.
//!
//! - [`Sample`]: repetitions of one quantity, never empty, all finite.
//! - [`Summary`]: median, mean, spread, a percentile-bootstrap interval of the median
//!   (Efron 1979) and outliers marked by Tukey's fences (Tukey 1977).
//! - [`compare`]: baseline A against candidate B with the Mann-Whitney U test
//!   (Mann & Whitney 1947), the Hodges-Lehmann shift and its Moses interval
//!   (Hodges & Lehmann 1963), and a three-way [`Verdict`] against a noise threshold.
//! - [`adjust_family`]: the rows of one comparison adjusted together for the false
//!   discovery rate (Benjamini & Hochberg 1995); verdicts rest on the adjusted p.
//! - [`drift`]: the timing probe stored with each run, and whether it moved between two
//!   runs compared with each other.
//! - [`Buckets`]: the seed study's regression distribution buckets.
//! - [`parallel`]: whether the threads of a measurement ran in parallel, and whether
//!   their per-thread bandwidths may be summed (seed 000).
//!
//! docs/METHODOLOGY.md explains every statistic, the defaults and the small-sample caveat.

pub mod buckets;
pub mod compare;
pub mod config;
pub mod drift;
pub mod error;
pub mod fdr;
pub mod hodges_lehmann;
pub mod mann_whitney;
pub mod parallel;
pub mod precision;
pub mod sample;
pub mod summary;
pub mod verdict;

pub use buckets::{Bucket, Buckets, DEFAULT_EDGES};
pub use compare::{compare, fmt_p, geomean, Comparison};
pub use config::StatsConfig;
pub use drift::{probe_drift, ProbeDrift, ProbeReading, TimingProbe};
pub use error::StatsError;
pub use fdr::{adjust_family, benjamini_hochberg, rows_needed_together, FamilyAdjustment};
pub use hodges_lehmann::{hodges_lehmann, Shift};
pub use mann_whitney::{mann_whitney, min_p_value, reps_needed, MannWhitney, MwMethod};
pub use precision::{reps_for_half_width, PRACTICAL_REPS};
pub use sample::{median, Sample};
pub use summary::{bootstrap_median_ci, tukey_outliers, Summary};
pub use verdict::{regression_pct, Verdict};
