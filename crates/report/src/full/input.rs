//! What the report is built from: the runs with their measurements, the options that say
//! how to read them, and how a run is named in headings. The report's parts all take
//! these, so they live apart from the assembly in `full/mod.rs`, which calls the parts.

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_stats::{Buckets, StatsConfig};

/// One stored run with its measurements.
#[derive(Clone, Debug)]
pub struct RunData {
    pub info: RunInfo,
    pub ms: Vec<MeasurementRecord>,
}

/// How the report reads the numbers.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub stats: StatsConfig,
    /// The metric compared; `None` takes each run's primary metric.
    pub metric: Option<String>,
    pub buckets: Buckets,
    /// Telemetry rows named per significant difference.
    pub changes: usize,
    /// Build the SVG figures (only the HTML page shows them).
    pub figures: bool,
    /// ` --db PATH` when the runs are not in the default database (else empty), for the
    /// commands the report names (`perflab show 7 --threads SEQ`).
    pub db_flag: String,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            stats: StatsConfig::default(),
            metric: None,
            buckets: Buckets::default(),
            changes: 3,
            figures: true,
            db_flag: String::new(),
        }
    }
}

/// `run 3 "kernel 6.1"` or `run 3`.
pub(crate) fn run_name(info: &RunInfo) -> String {
    match info.label.as_deref().map(str::trim) {
        Some(l) if !l.is_empty() => format!("run {} \"{l}\"", info.id),
        _ => format!("run {}", info.id),
    }
}
