//! `perflab report`: everything known about one or more runs in one document — what was
//! compared with what and whether the difference is real, the curves, maps and
//! distributions behind the tables, the telemetry that moved with each significant
//! difference, and the setups the runs came from.
//!
//! The report is built once as blocks ([`crate::doc`]) and rendered as terminal text,
//! Markdown, 72-column mail or a self-contained HTML page; the same content goes out as
//! JSON for scripts.

mod comparisons;
mod env;
mod figures;
mod latency;
mod lock_wait;
mod quality;
mod runs;
mod spans;
mod threads;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_stats::{Buckets, StatsConfig};
use serde_json::{json, Value};

use crate::design::Design;
use crate::doc::{self, Block};
use crate::error::ReportError;

pub use env::{environment_differences, EnvDifference};

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
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            stats: StatsConfig::default(),
            metric: None,
            buckets: Buckets::default(),
            changes: 3,
            figures: true,
        }
    }
}

/// The assembled report.
#[derive(Clone, Debug)]
pub struct FullReport {
    pub title: String,
    pub blocks: Vec<Block>,
    pub json: Value,
}

impl FullReport {
    pub fn text(&self) -> String {
        doc::text::render(&self.blocks, None)
    }

    /// Plain text no wider than 72 columns, for a mailing-list reply.
    pub fn mail(&self) -> String {
        doc::text::render(&self.blocks, Some(doc::text::MAIL_WIDTH))
    }

    pub fn markdown(&self) -> String {
        doc::markdown::render(&self.blocks)
    }

    pub fn html(&self) -> String {
        doc::html::render(&self.title, &self.blocks)
    }
}

/// Builds the report of `runs`: with one run, its variants against the baseline; with
/// several, each later run against the first, matched point by point.
pub fn build_report(runs: &[RunData], opts: &ReportOptions) -> Result<FullReport, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let title = runs::title(runs);
    let mut blocks = vec![Block::heading(1, title.clone())];
    let mut json = json!({ "title": title });

    let diffs = env::section(runs, &mut blocks);
    json["environment"] = serde_json::to_value(&diffs)?;
    runs::section(runs, &mut blocks);
    json["runs"] = serde_json::to_value(runs.iter().map(|r| &r.info).collect::<Vec<_>>())?;

    let (compared, designs) = comparisons::section(runs, opts, &mut blocks)?;
    json["comparisons"] = compared;
    json["quality"] = quality::section(runs, opts, &mut blocks)?;
    json["latency"] = latency::section(runs, opts, &mut blocks);
    json["spans"] = spans::section(runs, opts, &mut blocks);
    json["parallel"] = threads::section(runs, opts, &mut blocks);
    json["lock_waits"] = lock_wait::section(runs, &mut blocks);
    let mut counters = Vec::new();
    for r in runs {
        if let Some(t) = crate::counter_table(&r.info, &r.ms) {
            blocks.push(Block::heading(
                2,
                format!("Counters of {}", run_name(&r.info)),
            ));
            blocks.extend(t.to_blocks());
            counters.push(serde_json::to_value(&t)?);
        }
    }
    json["counters"] = Value::Array(counters);
    blocks.push(Block::heading(2, "How to read this report"));
    blocks.push(Block::para(how_to_read(&opts.stats, &designs)));
    Ok(FullReport {
        title,
        blocks,
        json,
    })
}

/// `run 3 "kernel 6.1"` or `run 3`.
pub(crate) fn run_name(info: &RunInfo) -> String {
    match info.label.as_deref().map(str::trim) {
        Some(l) if !l.is_empty() => format!("run {} \"{l}\"", info.id),
        _ => format!("run {}", info.id),
    }
}

/// The footer: the statistics, and what each design present in the report means.
fn how_to_read(cfg: &StatsConfig, designs: &[Design]) -> String {
    let mut text = format!(
        "Medians over repetitions with {conf} percentile-bootstrap intervals; A/B \
         differences by the Mann-Whitney U test with the Hodges-Lehmann shift and its \
         {conf} interval. The p-values of the rows of one comparison are adjusted together \
         (Benjamini-Hochberg), so that 40 rows with no change do not yield two by chance; \
         tables show both. A difference is a verdict (better / WORSE / changed) only when \
         the adjusted p < {alpha} and the change exceeds the noise threshold of {noise}%; \
         otherwise it is ~. Outliers (Tukey's fences) are marked, never removed.",
        conf = cfg.confidence_label(),
        alpha = cfg.alpha,
        noise = cfg.noise_pct
    );
    for d in designs {
        text.push(' ');
        text.push_str(match d {
            Design::InterleavedWithinOneRun => {
                "Variants of one run were measured in interleaved order (A B A B at every \
                 point), so slow drift of the machine falls on both sides alike."
            }
            Design::SeparateRuns => {
                "Runs compared with each other were measured separately, not interleaved: \
                 any drift of the machine between them is confounded with the change. Each \
                 such comparison shows its drift guard, the runs' timing probes; a probe \
                 that moved beyond the noise threshold is a WARNING. A change that can be \
                 made a variant of one run is best measured so."
            }
        });
    }
    text.push_str(" Definitions: docs/METHODOLOGY.md.");
    text
}
