//! Durations and shares as a person reads them in a reason: the wording of the verdict,
//! which lives in `perflab-stats` beside the analysis, so notes and reports say it alike.

pub use perflab_stats::parallel::{duration_text, percent};
