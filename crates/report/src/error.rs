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
    #[error("cannot encode the report as JSON: {0}")]
    Json(#[from] serde_json::Error),
}
