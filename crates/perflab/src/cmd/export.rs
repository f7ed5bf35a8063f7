//! `perflab export`: a run's measurements for other tools, as JSON (everything), CSV
//! (one row per measurement and metric) or Go's benchmark format (for `benchstat`).

use std::io::Write;

use perflab_store::{MeasurementRecord, RunInfo};
use serde::Serialize;

use crate::cli::{ExportArgs, ExportFormat, Global};
use crate::cmd::common;

/// What the JSON document says it is, first, so a reader (`perflab import --parser
/// perflab-json`, a script) knows what it holds before reading on.
pub const FORMAT: &str = "perflab-export";
/// The version every JSON document of perflab carries (docs/export.md lists the fields of
/// each version).
pub use crate::cmd::envelope::FORMAT_VERSION;

/// The JSON export, its fields in this order.
#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    format_version: u32,
    command: &'static str,
    run: &'a RunInfo,
    /// The whole plan, so `import --parser perflab-json` rebuilds an unfinished run whole
    /// (what is still to measure stays planned).
    plan: &'a [perflab_store::PlannedMeasurement],
    measurements: &'a [MeasurementRecord],
}

pub fn run(g: &Global, a: ExportArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    let info = store.run(a.run)?;
    let ms = store.measurements(a.run)?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(
            std::fs::File::create(p)
                .map_err(|e| crate::exit::input(format!("{}: cannot create: {e}", p.display())))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    match a.format {
        ExportFormat::Json => {
            let plan = store.plan(a.run)?;
            let doc = Document {
                format: FORMAT,
                format_version: FORMAT_VERSION,
                command: crate::cmd::envelope::command(),
                run: &info,
                plan: &plan,
                measurements: &ms,
            };
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        ExportFormat::Benchstat => {
            let text = perflab_report::benchstat::benchstat_text(&info, &ms);
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
        ExportFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "run",
                "seq",
                "point",
                "variant",
                "rep",
                "params",
                "status",
                "metric",
                "value",
                "unit",
                "started_at",
                "elapsed_s",
                "error",
                // headline (a result) or telemetry (carried the disturbing monitors only)
                "role",
            ])?;
            for m in &ms {
                let status = m.status.word();
                let err = m.status.message().unwrap_or_default().to_string();
                let base = [
                    a.run.to_string(),
                    m.seq.to_string(),
                    m.point.to_string(),
                    m.variant.clone(),
                    m.rep.to_string(),
                    m.params.describe(),
                ];
                if m.output.metrics.is_empty() {
                    let mut row = base.to_vec();
                    row.extend([status.into(), String::new(), String::new(), String::new()]);
                    row.extend([
                        m.started_at.to_string(),
                        m.elapsed_s.to_string(),
                        err.clone(),
                        m.role.as_str().to_string(),
                    ]);
                    w.write_record(&row)?;
                }
                for metric in &m.output.metrics {
                    let mut row = base.to_vec();
                    row.extend([
                        status.to_string(),
                        metric.name.clone(),
                        metric.value.to_string(),
                        metric.unit.symbol().to_string(),
                        m.started_at.to_string(),
                        m.elapsed_s.to_string(),
                        err.clone(),
                        m.role.as_str().to_string(),
                    ]);
                    w.write_record(&row)?;
                }
            }
            w.flush()?;
        }
    }
    Ok(0)
}
