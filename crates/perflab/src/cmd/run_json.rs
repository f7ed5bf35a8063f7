//! `perflab run --format json`: the one JSON document a finished run prints on standard
//! output, so that scripts need not scrape the text. It holds what the text output shows
//! (the comparisons against the baseline with their verdicts, or the summary of a single
//! variant, and the tables beside them), the run's counts and exit code, and the database.

use std::path::{Path, PathBuf};

use perflab_report as report;
use perflab_stats::StatsConfig;
use perflab_store::{Store, UnavailableVariant};
use serde::Serialize;
use serde_json::Value;

use crate::cmd::run_end::RunEnd;
use crate::cmd::show;

/// The document, its fields in the order a person reading it wants them: what happened
/// first, then the numbers.
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
    /// Each variant against the baseline: `comparison` (rows with their verdicts), and
    /// `scan` for size scans and `distribution` for CPU-pair studies.
    pub comparisons: Vec<Value>,
    /// A run of one variant: its summary instead of comparisons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drilldown: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<Value>,
    /// Trace spans (telemetry repetitions): the breakdown, seed 001's layout and the A/B
    /// comparisons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spans: Option<Value>,
}

/// The document of run `id` as it stands; `out` is the drill-down directory `--out`
/// asked for (the drill-down is written as the text output writes it); `db_flag` is
/// ` --db PATH` when one was given, for the command the message names.
pub fn document(
    store: &Store,
    id: i64,
    out: Option<&Path>,
    end: &RunEnd,
    db_flag: &str,
) -> anyhow::Result<RunDoc> {
    let info = store.run(id)?;
    let ms = store.measurements(id)?;
    let mut doc = RunDoc {
        end: end.clone(),
        message: end.last_line(db_flag),
        database: database_location(store),
        study: info.study.clone(),
        workload: info.workload.clone(),
        label: info.label.clone(),
        unavailable: info.unavailable.clone(),
        comparisons: Vec::new(),
        summary: None,
        drilldown: None,
        latency: None,
        parallel: None,
        counters: None,
        adaptive: None,
        spans: None,
    };
    let cfg = StatsConfig::default();
    let show::AfterRun {
        measured,
        pairs,
        buckets,
        wants_drilldown,
        dir,
    } = show::AfterRun::of(&info, &ms, out, store.path())?;
    match show::baseline_and_other(&info, &measured) {
        Some((base, _)) => {
            for other in measured.iter().filter(|v| **v != base) {
                let table = report::compare_variants(&info, &ms, &base, other, None, &cfg)?;
                let mut c = serde_json::json!({ "comparison": table });
                if let Some(scan) = report::scan_tables(&table, "size") {
                    c["scan"] = serde_json::to_value(&scan)?;
                }
                if pairs {
                    c["distribution"] =
                        serde_json::to_value(report::distribution(&table, &buckets))?;
                }
                if wants_drilldown && pairs && *other == measured[1] {
                    report::write_drilldown(&dir, &info, &ms, &table, &buckets)?;
                    doc.drilldown = Some(dir.clone());
                }
                doc.comparisons.push(c);
            }
        }
        None => {
            let summary = report::summarize_run(&info, &ms, None, &cfg)?;
            doc.summary = Some(serde_json::to_value(&summary)?);
            if let (true, Some(v)) = (wants_drilldown && pairs, measured.first()) {
                report::write_single_drilldown(&dir, &info, &ms, v, &info.unavailable)?;
                doc.drilldown = Some(dir.clone());
            }
        }
    }
    if report::hints::has_latency_table(&info.workload) {
        doc.latency = Some(serde_json::to_value(report::latency_table(&info, &ms))?);
    }
    if let Some(t) = report::parallel_table(&info, &ms) {
        doc.parallel = Some(serde_json::to_value(&t)?);
    }
    if let Some(t) = report::counter_table(&info, &ms) {
        doc.counters = Some(serde_json::to_value(&t)?);
    }
    if let Some(t) = report::span_table(&info, &ms, &cfg) {
        doc.spans = Some(serde_json::json!({
            "table": t,
            "seed": report::seed_span_table(&info, &ms),
            "comparisons": report::span_comparisons(&info, &ms, &cfg, usize::MAX).0,
        }));
    }
    if let Some(a) = perflab_lab::adaptive::report(&info.spec, &ms) {
        doc.adaptive = Some(serde_json::to_value(&a)?);
    }
    Ok(doc)
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
