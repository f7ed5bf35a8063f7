//! `perflab run --format json`: the one JSON document a finished run prints on standard
//! output, so that scripts need not scrape the text. It holds what the text output shows
//! (the comparisons against the baseline with their verdicts, or the summary of a single
//! variant, and the tables beside them), the run's counts and exit code, and the database.

use std::path::PathBuf;

use perflab_lab::adaptive::AdaptiveReport;
use perflab_report as report;
use perflab_store::{MeasurementRecord, RunInfo, Store, UnavailableVariant};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::cmd::run_end::RunEnd;
use crate::cmd::run_view::EndView;

/// The document, its fields in the order a person reading it wants them: what happened
/// first, then the numbers (`$defs/run` in docs/schema/perflab.json).
#[derive(Serialize)]
pub struct RunDoc {
    #[serde(flatten)]
    pub end: RunEnd,
    /// The last line of the text output when measurements failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The database's file (absolute) or its URL without the password.
    pub database: String,
    pub study: String,
    pub workload: String,
    pub label: Option<String>,
    pub unavailable: Vec<UnavailableVariant>,
    /// Each variant against the baseline: its sections by id (`comparison`, with `scan`
    /// for size scans and `distribution` for CPU-pair studies).
    pub comparisons: Vec<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drilldown: Option<PathBuf>,
    /// The sections beside the comparisons, by id: `summary` (a run of one variant),
    /// `latency`, `threads`, `lock-wait`, `interrupts`, `counters`, `spans` (a list).
    #[serde(flatten)]
    pub sections: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveReport>,
}

/// The document of a run from its view (the text's sections, every span comparison
/// kept); `drilldown` is where the drill-down was written; `db_flag` is ` --db PATH` when
/// one was given, for the command the message names.
pub fn document(
    store: &Store,
    info: &RunInfo,
    ms: &[MeasurementRecord],
    view: &EndView,
    drilldown: Option<PathBuf>,
    end: &RunEnd,
    db_flag: &str,
) -> RunDoc {
    RunDoc {
        end: end.clone(),
        message: end.last_line(db_flag),
        database: database_location(store),
        study: info.study.clone(),
        workload: info.workload.clone(),
        label: info.label.clone(),
        unavailable: info.unavailable.clone(),
        comparisons: view
            .variants
            .iter()
            .map(|v| report::section::json(&v.sections(), &[]))
            .collect(),
        drilldown,
        sections: view.json_sections(),
        adaptive: perflab_lab::adaptive::report(&info.spec, ms),
    }
}

/// Where the run's results are: the database file, absolute so a script (or a person
/// reading the end of a run) can open it from anywhere, or the server's location.
pub fn database_location(store: &Store) -> String {
    match store.path() {
        Some(p) => std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.into())
            .display()
            .to_string(),
        None => store.location().to_string(),
    }
}
