//! `perflab export --format csv`: one row per measurement and metric, in a wide layout: one
//! column per parameter (`param_<name>`), so a value holding spaces, commas or `=` stays
//! one cell that a spreadsheet or `pandas.read_csv` reads back as it was (a space-joined
//! `name=value` column could not be split again). docs/export.md lists the columns.

use std::collections::BTreeSet;
use std::io::Write;

use perflab_store::{MeasurementRecord, RunInfo, Store};

use crate::cmd::export_visit::visit;

/// The columns before the parameters'.
const HEAD: [&str; 5] = ["run", "seq", "point", "variant", "rep"];
/// The columns after the parameters'.
const TAIL: [&str; 8] = [
    "status",
    "metric",
    "value",
    "unit",
    "started_at",
    "elapsed_s",
    "error",
    // headline (a result) or telemetry (carried the disturbing monitors only)
    "role",
];

/// A parameter's column: prefixed, so no parameter (`rep`, `value`) takes a fixed
/// column's name.
pub const PARAM_PREFIX: &str = "param_";

/// Writes the run's measurements as CSV. The header needs every parameter's name before
/// the first row, so it comes from the stored plan (every planned measurement's
/// parameters, the variants' own included); the measurements are then written as the
/// store hands them out, never all held at once.
pub fn write(store: &Store, info: &RunInfo, out: impl Write) -> anyhow::Result<()> {
    let names = param_names(store, info)?;
    let mut w = csv::Writer::from_writer(out);
    let header: Vec<String> = HEAD
        .iter()
        .map(|h| h.to_string())
        .chain(names.iter().map(|n| format!("{PARAM_PREFIX}{n}")))
        .chain(TAIL.iter().map(|h| h.to_string()))
        .collect();
    w.write_record(&header)?;
    visit(store, info.id, false, |m| {
        for row in rows(info, &names, &m) {
            w.write_record(&row)?;
        }
        Ok::<(), csv::Error>(())
    })?;
    w.flush()?;
    Ok(())
}

/// Every parameter name of the plan (a measurement's parameters are its planned ones),
/// the spec's points and its variants' own, in name order.
fn param_names(store: &Store, info: &RunInfo) -> anyhow::Result<Vec<String>> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for p in store.plan(info.id)? {
        names.extend(p.params.0.into_keys());
    }
    for point in &info.spec.points {
        names.extend(point.keys().cloned());
    }
    for v in &info.spec.variants {
        names.extend(v.params.keys().cloned());
    }
    Ok(names.into_iter().collect())
}

/// The rows of one measurement: one per metric, or one with the metric columns empty.
fn rows(info: &RunInfo, names: &[String], m: &MeasurementRecord) -> Vec<Vec<String>> {
    let mut base = vec![
        info.id.to_string(),
        m.seq.to_string(),
        m.point.to_string(),
        m.variant.clone(),
        m.rep.to_string(),
    ];
    base.extend(
        names
            .iter()
            .map(|n| m.params.0.get(n).map(|v| v.to_string()).unwrap_or_default()),
    );
    base.push(m.status.word().to_string());
    let tail = [
        m.started_at.to_string(),
        m.elapsed_s.to_string(),
        m.status.message().unwrap_or_default().to_string(),
        m.role.as_str().to_string(),
    ];
    let row = |metric: [String; 3]| [&base[..], &metric, &tail].concat();
    if m.output.metrics.is_empty() {
        return vec![row(Default::default())];
    }
    m.output
        .metrics
        .iter()
        .map(|metric| {
            row([
                metric.name.clone(),
                metric.value.to_string(),
                metric.unit.symbol().to_string(),
            ])
        })
        .collect()
}
