//! Errors of report building, each naming the run and what is missing.

use perflab_core::record::RunId;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "run {run} has no measurements of variant {variant:?}{why} (variants measured: {known})"
    )]
    NoSuchVariant {
        run: RunId,
        variant: String,
        /// ": unavailable: <reason>" when the run marked it unavailable, else empty.
        why: String,
        known: String,
    },
    #[error(
        "run {run} has no successful measurement with metric {metric:?} (metrics found: {known})"
    )]
    NoSuchMetric {
        run: RunId,
        metric: String,
        known: String,
    },
    #[error("run {run} has no successful measurement to report on")]
    NoData { run: RunId },
    #[error("no row of this comparison is the CPU pair {a},{b} (pairs: {known})")]
    NoSuchPair { a: u32, b: u32, known: String },
    #[error("a drill-down needs a comparison of two variants of one run, not of two runs")]
    NotVariantComparison,
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("a report needs at least one run")]
    NoRuns,
    /// `--section` named a section the command does not print (the message lists those
    /// it does).
    #[error("{0}")]
    Section(String),
    #[error("run {run} measured {count} variant(s) ({measured}); nothing to compare{why}")]
    NothingToCompare {
        run: RunId,
        count: usize,
        measured: String,
        /// ` (<variant> was unavailable: <reason>; …)` when the run names any, else empty.
        why: String,
    },
    /// The stored spec's regression buckets do not make a distribution.
    #[error(transparent)]
    Stats(#[from] perflab_stats::StatsError),
    #[error("run {run} has no measurements yet")]
    NoMeasurements { run: RunId },
    #[error("run {run} has no measurement {seq}")]
    NoSuchMeasurement { run: RunId, seq: u32 },
    #[error("cannot encode the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
}
