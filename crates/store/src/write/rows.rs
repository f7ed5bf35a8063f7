//! Which column holds what: a run's plan and unavailable variants, and a measurement's
//! metrics, histograms, threads and telemetry, as batches of rows for the backend to
//! insert its own way (see the conventions in `crate::schema`).

use perflab_core::{HistogramData, Metric, TelemetryRow, ThreadRecord};
use serde::Serialize;

use crate::codec::{json, name, u64_to_sql};
use crate::sql::{Batch, WriteTx};
use crate::{MeasurementRecord, PlannedMeasurement, RunId, StoreError, UnavailableVariant};

/// Inserts `rows`, if there are any.
pub(super) fn insert(tx: &mut impl WriteTx, rows: Batch<'_>) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    tx.insert(&rows)
}

/// Planned measurements of `run`.
pub(super) fn plan(run: RunId, plan: &[PlannedMeasurement]) -> Result<Batch<'_>, StoreError> {
    let params = plan
        .iter()
        .map(|p| json("parameters", &p.params))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Batch::new("plan", plan.len())
        .shared("run_id", run)
        .column("seq", plan.iter().map(|p| i64::from(p.seq)))
        .column("point", plan.iter().map(|p| i64::from(p.point)))
        .column("params", params)
        .column("variant", plan.iter().map(|p| p.variant.as_str()))
        .column("rep", plan.iter().map(|p| i64::from(p.rep)))
        .column("role", plan.iter().map(|p| p.role.as_str())))
}

pub(super) fn unavailable(run: RunId, u: &[UnavailableVariant]) -> Batch<'_> {
    Batch::new("unavailable", u.len())
        .shared("run_id", run)
        .index()
        .column("variant", u.iter().map(|u| u.variant.as_str()))
        .column("reason", u.iter().map(|u| u.reason.as_str()))
}

/// Everything the measurement produced and its telemetry, table by table.
pub(super) fn insert_outputs(
    tx: &mut impl WriteTx,
    run: RunId,
    rec: &MeasurementRecord,
) -> Result<(), StoreError> {
    let out = &rec.output;
    for rows in [
        metrics(&out.metrics)?,
        histograms(&out.histograms)?,
        threads(&out.threads)?,
        telemetry(&rec.telemetry)?,
    ] {
        insert(tx, rows.shared("run_id", run).shared("seq", rec.seq))?;
    }
    Ok(())
}

/// The serde names of enum values (units, directions), as every such column holds them.
fn names<'v, T: Serialize + 'v>(
    values: impl Iterator<Item = &'v T>,
) -> Result<Vec<String>, StoreError> {
    values.map(name).collect()
}

fn metrics(m: &[Metric]) -> Result<Batch<'_>, StoreError> {
    Ok(Batch::new("metrics", m.len())
        .index()
        .column("name", m.iter().map(|m| m.name.as_str()))
        .column("value", m.iter().map(|m| m.value))
        .column("unit", names(m.iter().map(|m| &m.unit))?)
        .column("better", names(m.iter().map(|m| &m.better))?))
}

/// A histogram's summary statistic.
type Stat = fn(&HistogramData) -> f64;

/// A histogram's summary statistics, by column.
const STATS: [(&str, Stat); 9] = [
    ("min", |h| h.min),
    ("mean", |h| h.mean),
    ("max", |h| h.max),
    ("stddev", |h| h.stddev),
    ("p50", |h| h.p50),
    ("p90", |h| h.p90),
    ("p99", |h| h.p99),
    ("p999", |h| h.p999),
    ("p9999", |h| h.p9999),
];

fn histograms(h: &[HistogramData]) -> Result<Batch<'_>, StoreError> {
    let mut rows = Batch::new("histograms", h.len())
        .index()
        .column("name", h.iter().map(|h| h.name.as_str()))
        .column("unit", names(h.iter().map(|h| &h.unit))?)
        .column("count", h.iter().map(|h| u64_to_sql(h.count)));
    for (column, stat) in STATS {
        rows = rows.column(column, h.iter().map(stat));
    }
    Ok(rows
        .column("encoded", h.iter().map(|h| h.encoded.as_slice()))
        .column("above", h.iter().map(|h| h.above.map(|a| a.limit)))
        .column(
            "above_count",
            h.iter().map(|h| h.above.map(|a| u64_to_sql(a.count))),
        ))
}

/// A thread's JSON column that is NULL where it would hold nothing.
fn json_unless_empty<T: Serialize>(
    what: &'static str,
    empty: bool,
    v: &T,
) -> Result<Option<String>, StoreError> {
    (!empty).then(|| json(what, v)).transpose()
}

fn threads(t: &[ThreadRecord]) -> Result<Batch<'_>, StoreError> {
    let counts =
        |get: fn(&ThreadRecord) -> Option<u64>| t.iter().map(move |t| get(t).map(u64_to_sql));
    let samples = t
        .iter()
        .map(|t| json("thread CPU samples", &t.cpu_samples))
        .collect::<Result<Vec<_>, _>>()?;
    let counters = t
        .iter()
        .map(|t| json_unless_empty("thread counters", t.counters.is_empty(), &t.counters))
        .collect::<Result<Vec<_>, _>>()?;
    let paths = t
        .iter()
        .map(|t| json_unless_empty("thread CPU path", t.cpu_path.is_empty(), &t.cpu_path))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Batch::new("threads", t.len())
        .index()
        .column("role", t.iter().map(|t| t.role.as_str()))
        .column("tid", t.iter().map(|t| i64::from(t.tid)))
        .column("pinned_cpu", t.iter().map(|t| t.pinned_cpu.map(i64::from)))
        .column("cpu_samples", samples)
        .column("migrations", counts(|t| t.migrations))
        .column("voluntary_switches", counts(|t| t.voluntary_switches))
        .column("involuntary_switches", counts(|t| t.involuntary_switches))
        .column("start_ns", t.iter().map(|t| u64_to_sql(t.start_ns)))
        .column("end_ns", t.iter().map(|t| u64_to_sql(t.end_ns)))
        .column("bytes", counts(|t| t.bytes))
        .column("counters", counters)
        .column("cpu_path", paths))
}

fn telemetry(t: &[TelemetryRow]) -> Result<Batch<'_>, StoreError> {
    Ok(Batch::new("telemetry", t.len())
        .index()
        .column("source", t.iter().map(|t| t.source.as_str()))
        .column("key", t.iter().map(|t| t.key.as_str()))
        .column("label", t.iter().map(|t| t.label.as_str()))
        .column("cpu", t.iter().map(|t| t.cpu.map(i64::from)))
        .column("value", t.iter().map(|t| t.value))
        .column("unit", names(t.iter().map(|t| &t.unit))?))
}
