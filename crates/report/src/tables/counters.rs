//! Counters next to the result they explain (seed 003: fill bandwidth with the L1 and LLC
//! counters beside it): one row per point and variant with the median of the primary
//! metric and the medians of the counters monitor's totals, derived ratios and per-byte
//! figures. Events the machine could not count are listed under the table, never shown as
//! zeros.

use perflab_core::note::{Note, NoteKind};
use perflab_core::record::{MeasurementRecord, RunInfo};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::fmt;
use crate::section::{Section, SectionId};
use crate::select::{choose_metric, telemetry_records};
use crate::tables::TableId;
use crate::telemetry::medians;

/// Counter keys in the order a reader wants them: the work done, then what the caches and
/// the MMU said about it.
const COLUMNS: &[(&str, &str)] = &[
    ("task-clock", "task ms"),
    ("context-switches", "ctx sw"),
    ("cpu-migrations", "migr"),
    ("page-faults", "faults"),
    ("page-faults:per_byte", "faults/MiB"),
    ("cycles", "cycles"),
    ("instructions", "instr"),
    ("ipc", "IPC"),
    ("cache_miss_rate", "miss %"),
    ("L1-dcache-miss_rate", "L1d miss %"),
    ("LLC-miss_rate", "LLC miss %"),
    ("L1-dcache-load-misses:per_byte", "L1d miss/KiB"),
    ("LLC-load-misses:per_byte", "LLC miss/KiB"),
    ("cache-misses:per_byte", "miss/KiB"),
];

/// Per-byte figures are shown per KiB or MiB moved: per byte they are all 0.000…
fn display_scale(key: &str) -> f64 {
    match key {
        "page-faults:per_byte" => 1024.0 * 1024.0,
        k if k.ends_with(":per_byte") => 1024.0,
        _ => 1.0,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CounterRow {
    pub point: String,
    pub variant: String,
    /// Successful repetitions that recorded counters.
    pub reps: usize,
    /// Median of the run's primary metric over the same repetitions.
    pub metric: Option<f64>,
    /// One value per column, in display units; `None` where it was not counted.
    pub values: Vec<Option<f64>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CounterTable {
    pub metric: String,
    pub source: String,
    /// (key, header) of the columns that have a value in at least one row.
    pub columns: Vec<(String, String)>,
    pub rows: Vec<CounterRow>,
    /// Notes of the counters monitor: events this machine cannot count, and why.
    pub notes: Vec<String>,
    /// The counters ran in telemetry repetitions only (counting disturbs the workload):
    /// the counts, and the metric beside them, are of those repetitions, not the results.
    pub telemetry_only: bool,
}

/// The counters table of a run, or `None` when no measurement recorded counters.
pub fn counter_table(run: &RunInfo, ms: &[MeasurementRecord]) -> Option<CounterTable> {
    let source = counter_source(ms)?;
    let metric = choose_metric(run, ms, None)
        .map(|c| c.name)
        .unwrap_or_default();
    let mut rows = counter_rows(&crate::hints::param_roles(run), ms, source, &metric);
    if rows.is_empty() {
        return None;
    }
    let keep = drop_empty_columns(&mut rows);
    let all: Vec<&MeasurementRecord> = ms.iter().collect();
    Some(CounterTable {
        notes: compress_unsupported(monitor_notes(ms, source)),
        telemetry_only: telemetry_records(&all, source)
            .iter()
            .any(|m| !m.is_headline()),
        metric,
        source: source.to_string(),
        columns: keep
            .iter()
            .map(|&i| (COLUMNS[i].0.to_string(), COLUMNS[i].1.to_string()))
            .collect(),
        rows,
    })
}

/// The first counter monitor in registry order that recorded rows.
fn counter_source(ms: &[MeasurementRecord]) -> Option<&'static str> {
    crate::hints::monitors()
        .into_iter()
        .filter(|d| d.rows().is_some_and(|h| h.counter_table))
        .map(|d| d.name)
        .find(|s| {
            ms.iter()
                .any(|m| m.telemetry.iter().any(|t| t.source == *s))
        })
}

/// One row per point and variant (in grid order) whose repetitions recorded counters.
fn counter_rows(
    roles: &perflab_core::ParamRoles,
    ms: &[MeasurementRecord],
    source: &str,
    metric: &str,
) -> Vec<CounterRow> {
    let (variants, labeler, points) = crate::select::point_grid(roles, ms);
    let mut rows = Vec::new();
    for point in points {
        for variant in variants.iter().cloned() {
            let group: Vec<&MeasurementRecord> = ms
                .iter()
                .filter(|m| m.point == point && m.variant == variant)
                .collect();
            let Some(first) = group.first() else { continue };
            let (med, reps) = medians(&group, source);
            if reps == 0 {
                continue;
            }
            let values = COLUMNS
                .iter()
                .map(|(key, _)| {
                    med.iter()
                        .find(|r| r.cpu.is_none() && r.key == *key)
                        .map(|r| r.median * display_scale(key))
                })
                .collect();
            rows.push(CounterRow {
                point: labeler.label(&first.params),
                variant,
                reps,
                metric: median_metric(&group, metric, source),
                values,
            });
        }
    }
    rows
}

/// Leaves in every row only the columns some row has a value in; returns their indices
/// into [`COLUMNS`].
fn drop_empty_columns(rows: &mut [CounterRow]) -> Vec<usize> {
    let keep: Vec<usize> = (0..COLUMNS.len())
        .filter(|&i| rows.iter().any(|r| r.values[i].is_some()))
        .collect();
    for r in rows.iter_mut() {
        r.values = keep.iter().map(|&i| r.values[i]).collect();
    }
    keep
}

/// The counters monitor's notes, each once. A note is the monitor's when it is about it
/// ([`Note::about`]): read as a value, never by its words.
fn monitor_notes(ms: &[MeasurementRecord], source: &str) -> Vec<Note> {
    let mut notes: Vec<Note> = ms
        .iter()
        .flat_map(|m| m.output.notes.iter())
        .map(|n| Note::from_stored(n))
        .filter(|n| n.about() == Some(source))
        .collect();
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.text()));
    notes
}

/// The primary metric's median over the repetitions that recorded counters, so both sides
/// of a row describe the same repetitions.
fn median_metric(group: &[&MeasurementRecord], metric: &str, source: &str) -> Option<f64> {
    perflab_stats::median(
        telemetry_records(group, source)
            .into_iter()
            .filter_map(|m| m.output.metric(metric).map(|x| x.value)),
    )
}

/// The events not counted for one reason, eight of them on a VM without a PMU, as one
/// line naming them all; other notes as they read.
fn compress_unsupported(notes: Vec<Note>) -> Vec<String> {
    let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
    let mut other = Vec::new();
    for n in notes {
        match n.kind {
            NoteKind::Unsupported { events, why } => {
                match by_reason.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, all)) => all.extend(events),
                    None => by_reason.push((why, events)),
                }
            }
            _ => other.push(n.text()),
        }
    }
    by_reason
        .into_iter()
        .map(|(why, events)| format!("not counted here: {} ({why})", events.join(", ")))
        .chain(other)
        .collect()
}

impl CounterTable {
    /// What the table holds and over what window.
    /// Of telemetry repetitions only, it says so here, not in a note of three lines.
    pub(crate) fn title(&self) -> String {
        match self.telemetry_only {
            true => format!(
                "{}: medians of the telemetry repetitions only (never results: counting \
                 disturbs the workload), {} too; whole measurement, set-up included",
                self.source, self.metric
            ),
            false => format!(
                "Counters ({}, medians over the repetitions; whole measurement, set-up \
                 included)",
                self.source
            ),
        }
    }

    /// The header row and one row per point and variant.
    pub(crate) fn cells(&self) -> Vec<Vec<String>> {
        let mut header = vec![
            "point".to_string(),
            "variant".to_string(),
            "reps".to_string(),
            self.metric.clone(),
        ];
        header.extend(self.columns.iter().map(|(_, h)| h.clone()));
        let mut lines: Vec<Vec<String>> = vec![header];
        for r in &self.rows {
            let mut cells = vec![
                r.point.clone(),
                r.variant.clone(),
                r.reps.to_string(),
                r.metric.map_or("-".into(), fmt::value),
            ];
            cells.extend(
                r.values
                    .iter()
                    .zip(&self.columns)
                    .map(|(v, (key, _))| v.map_or("-".into(), |x| cell(key, x))),
            );
            lines.push(cells);
        }
        lines
    }
}

/// Event counts as whole numbers (large ones in millions), ratios and rates as values.
fn cell(key: &str, x: f64) -> String {
    let is_count = !(key == "task-clock"
        || key == "ipc"
        || key.ends_with("_rate")
        || key.ends_with(":per_byte"));
    match is_count {
        true if x.abs() >= 1e7 => format!("{:.1}M", x / 1e6),
        true => fmt::count(x),
        false => fmt::value(x),
    }
}

impl CounterTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        // `cells` starts with the header row.
        let mut rows = self.cells();
        let head = rows.remove(0);
        let mut out = vec![
            Block::caption(self.title()),
            Block::Table(Table::new(head, rows, vec![0, 1])),
        ];
        if !self.notes.is_empty() {
            let notes: Vec<String> = self.notes.iter().map(|n| format!("  {n}")).collect();
            out.push(Block::note(notes.join("\n")));
        }
        out
    }
}

impl Section for CounterTable {
    fn id(&self) -> SectionId {
        SectionId::Table(TableId::Counters.as_str())
    }
    fn title(&self) -> String {
        format!("Counters ({})", self.source)
    }
    fn blocks(&self) -> Vec<Block> {
        self.to_blocks()
    }
    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}
