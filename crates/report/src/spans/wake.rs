//! Seed 004's question answered from the `idlewake` spans: per CPU pair and per variant
//! (poll-only against all idle states), how much of a cross-CPU wake-up each part takes,
//! and for the idle exit, per idle state the target CPU left.
//!
//! ```text
//! part                                   poll-only        all
//! (0) whole wake-up                       3.10            12.40
//! (1) waking → IPI sent                   none            1.20 (10%)
//! (2) IPI sent → idle exit                none            8.10 (65%)
//!     left C6                             -               9.80 (1200 = 79%)
//! ```
//!
//! Every figure is a p50 in µs, the median over the telemetry repetitions; a part's share
//! is its p50 over the whole wake-up's p50 in the same column, a state's the share of
//! the part's wake-ups whose target left that state. Shares need not add up to
//! 100 %: medians of parts are not parts of a median, and (1) and (2) exist only for
//! wake-ups that sent an IPI (a polling target sees the flag itself).

use perflab_core::record::MeasurementRecord;
use perflab_core::span_outline::MIN_SPAN_EVENTS;
use serde::Serialize;

use crate::spans::foreign::{self, Foreign};
use crate::spans::rows::{self, SpanId};

/// The set whose spans these are.
pub const SET: &str = "idlewake";
/// The whole wake-up, then its parts in order (span names of the set).
pub const WHOLE: &str = "sched";
pub const PARTS: [&str; 3] = ["waking_ipi", "ipi_idle_exit", "idle_exit_run"];

/// One figure of a column.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum WakeCell {
    /// Median p50 in µs; for a part its share of the whole wake-up's p50, for a state
    /// the share of the part's matches that left it (percent, where known); and the
    /// median matches per measurement.
    Value {
        us: f64,
        share_pct: Option<f64>,
        matches: f64,
        /// For a part: the whole wake-up's matches in the same column (median per
        /// measurement). A part that only a few wake-ups have (an IPI where the pair
        /// shares a CPU, an idle exit where the target rarely idles) has a share of the
        /// whole that describes those few, and the table says so.
        #[serde(skip_serializing_if = "Option::is_none")]
        of_wakeups: Option<f64>,
        /// Repetitions in which it matched, of those that recorded it: the p50 is over the
        /// former, the matches over all (a rare state left in one repetition of three).
        matched_reps: usize,
        reps: usize,
    },
    /// Matched fewer events per measurement (median) than a span figure is read from
    /// ([`perflab_core::span_outline::MIN_SPAN_EVENTS`]): the count, no figure.
    TooFew { matches: f64, reps: usize },
    /// A part keyed by CPU (or a state of one) whose part matched more foreign events per
    /// round trip than a figure is read with ([`crate::spans::foreign`]): the count, no
    /// figure.
    Contaminated {
        foreign_per_trip: f64,
        expected_per_trip: f64,
        matches: f64,
    },
    /// Recorded, no event matched.
    None,
    /// Not recorded in this column (another kernel, another set).
    Missing,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WakeRow {
    /// `idlewake.ipi_idle_exit@C6`.
    pub key: String,
    /// The span's label, or for a state `left C6`.
    pub label: String,
    /// The idle state, for the rows of one state.
    pub state: Option<WakeState>,
    /// One per variant.
    pub cells: Vec<WakeCell>,
}

/// The idle state a row is for, as the monitor recorded it beside the span's rows
/// (`{span}@{state}:split`: its index, and its name where the machine names it); for a
/// run stored before it did, `index` is unknown and `name` is the row key's tag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WakeState {
    pub index: Option<u32>,
    pub name: String,
}

impl WakeState {
    fn of(recs: &[&MeasurementRecord], id: &SpanId) -> Self {
        match rows::split_value(recs, &id.key) {
            Some(v) => WakeState {
                index: Some(v.index),
                name: v.display(),
            },
            None => WakeState {
                index: None,
                name: id
                    .key
                    .rsplit_once('@')
                    .map_or(id.key.clone(), |(_, s)| s.to_string()),
            },
        }
    }
}

/// One CPU pair (point).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WakePair {
    pub point: u32,
    /// `0-1`, as the other idle-ipi tables name a pair.
    pub label: String,
    /// Telemetry repetitions that traced, per variant.
    pub reps: Vec<usize>,
    pub rows: Vec<WakeRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WakeTable {
    pub variants: Vec<String>,
    pub pairs: Vec<WakePair>,
}

/// The table where some measurement carries the `idlewake` whole wake-up; `None`
/// otherwise.
pub fn wake_table(roles: &perflab_core::ParamRoles, ms: &[MeasurementRecord]) -> Option<WakeTable> {
    let all: Vec<&MeasurementRecord> = ms.iter().collect();
    let traced = rows::span_records(&all);
    let whole = format!("{SET}.{WHOLE}");
    if !traced
        .iter()
        .any(|m| rows::value(m, &whole, "count").is_some())
    {
        return None;
    }
    let (variants, labeler, points) = crate::select::point_grid(roles, ms);
    let mut pairs = Vec::new();
    for point in points {
        let per_variant: Vec<Vec<&MeasurementRecord>> = variants
            .iter()
            .map(|v| {
                traced
                    .iter()
                    .copied()
                    .filter(|m| m.point == point && m.variant == *v)
                    .collect()
            })
            .collect();
        let Some(first) = per_variant.iter().flatten().next() else {
            continue;
        };
        pairs.push(WakePair {
            point,
            label: labeler.label(&first.params),
            reps: per_variant.iter().map(Vec::len).collect(),
            rows: Columns::new(per_variant).rows(),
        });
    }
    Some(WakeTable { variants, pairs })
}

/// One CPU pair's traced repetitions per variant (the table's columns), the spans they
/// recorded, and each column's whole wake-up p50 that the parts' shares are of.
struct Columns<'a> {
    per_variant: Vec<Vec<&'a MeasurementRecord>>,
    ids: Vec<SpanId>,
    wholes: Vec<Option<f64>>,
}

impl<'a> Columns<'a> {
    fn new(per_variant: Vec<Vec<&'a MeasurementRecord>>) -> Self {
        let mine: Vec<&MeasurementRecord> = per_variant.iter().flatten().copied().collect();
        let whole = format!("{SET}.{WHOLE}");
        Self {
            ids: rows::span_ids(&mine),
            wholes: per_variant.iter().map(|r| p50(r, &whole)).collect(),
            per_variant,
        }
    }

    /// The whole wake-up, then each part the pair recorded followed by its idle states.
    fn rows(&self) -> Vec<WakeRow> {
        let whole = format!("{SET}.{WHOLE}");
        let mut w = self.row(&whole, &whole, self.label_of(&whole), None);
        for c in &mut w.cells {
            if let WakeCell::Value { share_pct, .. } = c {
                *share_pct = None; // 100 %, saying nothing
            }
        }
        let of_whole: Vec<Option<f64>> = w.cells.iter().map(WakeCell::matches).collect();
        let mut rows = vec![w];
        for part in PARTS {
            let key = format!("{SET}.{part}");
            if self.ids.iter().any(|i| i.key == key) {
                self.push_part(&key, &of_whole, &mut rows);
            }
        }
        rows
    }

    /// A part's row, with the whole wake-up's matches beside its own, then a row per
    /// idle state its targets left, with that state's share of the part's matches.
    fn push_part(&self, key: &str, of_whole: &[Option<f64>], rows: &mut Vec<WakeRow>) {
        let mut p = self.row(key, key, self.label_of(key), None);
        for (c, total) in p.cells.iter_mut().zip(of_whole) {
            if let WakeCell::Value { of_wakeups, .. } = c {
                *of_wakeups = *total;
            }
        }
        let of_part: Vec<Option<f64>> = p.cells.iter().map(WakeCell::matches).collect();
        rows.push(p);
        for (id, state) in self.states_of(key) {
            let label = format!("    left {}", state.name);
            let mut r = self.row(&id.key, key, label, Some(state));
            for (c, total) in r.cells.iter_mut().zip(&of_part) {
                if let WakeCell::Value {
                    share_pct, matches, ..
                } = c
                {
                    *share_pct = total.filter(|t| *t > 0.0).map(|t| 100.0 * *matches / t);
                }
            }
            rows.push(r);
        }
    }

    /// The row of span `key`, judged for foreign matches as span `part` (a state's rows
    /// as its part's, whose they are): one cell per column.
    fn row(&self, key: &str, part: &str, label: String, state: Option<WakeState>) -> WakeRow {
        WakeRow {
            key: key.to_string(),
            label,
            state,
            cells: self
                .per_variant
                .iter()
                .zip(&self.wholes)
                .map(|(recs, w)| cell(recs, key, part, *w))
                .collect(),
        }
    }

    /// The per-state spans of `key` (`key@STATE`) with their states, by state index where
    /// the monitor recorded it, else in the order it left them.
    fn states_of(&self, key: &str) -> Vec<(&SpanId, WakeState)> {
        let prefix = format!("{key}@");
        let mine: Vec<&MeasurementRecord> = self.per_variant.iter().flatten().copied().collect();
        let mut out: Vec<(&SpanId, WakeState)> = self
            .ids
            .iter()
            .filter(|i| i.key.starts_with(&prefix))
            .map(|i| (i, WakeState::of(&mine, i)))
            .collect();
        out.sort_by_key(|(_, s)| s.index.unwrap_or(u32::MAX));
        out
    }

    /// The monitor's label of span `key`, else the key.
    fn label_of(&self, key: &str) -> String {
        self.ids
            .iter()
            .find(|i| i.key == key)
            .map_or(key.to_string(), |i| i.label.clone())
    }
}

fn p50(recs: &[&MeasurementRecord], key: &str) -> Option<f64> {
    perflab_stats::median(rows::stat_us(recs, key, "p50"))
}

fn cell(recs: &[&MeasurementRecord], key: &str, part: &str, whole: Option<f64>) -> WakeCell {
    if rows::counts(recs, key).is_empty() {
        return WakeCell::Missing;
    }
    // A state's rows exist only in repetitions where it was left: elsewhere it was left
    // 0 times, which the medians must count.
    let counts: Vec<f64> = recs
        .iter()
        .map(|m| rows::value(m, key, "count").unwrap_or(0.0))
        .collect();
    let matches = perflab_stats::median(counts.iter().copied()).unwrap_or(0.0);
    match (p50(recs, key), foreign::foreign(recs, part)) {
        // A p50 of one event in a thousand wake-ups describes that event, not the part.
        (Some(_), _) if matches < MIN_SPAN_EVENTS as f64 => WakeCell::TooFew {
            matches,
            reps: counts.len(),
        },
        // Mostly other work's wake-ups and idle stays on the pair's CPUs.
        (
            Some(_),
            Some(Foreign::Counted {
                foreign_per_trip,
                expected_per_trip,
                contaminated: true,
                ..
            }),
        ) => WakeCell::Contaminated {
            foreign_per_trip,
            expected_per_trip,
            matches,
        },
        (Some(us), _) => WakeCell::Value {
            us,
            share_pct: whole.filter(|w| *w > 0.0).map(|w| 100.0 * us / w),
            matches,
            of_wakeups: None,
            matched_reps: counts.iter().filter(|c| **c > 0.0).count(),
            reps: counts.len(),
        },
        (None, _) => WakeCell::None,
    }
}

impl WakeCell {
    fn matches(&self) -> Option<f64> {
        match self {
            WakeCell::Value { matches, .. } => Some(*matches),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::record::{MeasurementStatus, Role};
    use perflab_core::{TelemetryRow, Unit};

    fn rec(telemetry: Vec<TelemetryRow>) -> MeasurementRecord {
        MeasurementRecord {
            seq: 0,
            point: 0,
            params: Default::default(),
            variant: "all".into(),
            rep: 0,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry,
            role: Role::Telemetry,
            monitors: vec!["trace".into()],
        }
    }

    /// The state is the monitor's `:split` row (index and name), whatever the label says;
    /// a run stored before that row existed names it by the key alone, index unknown.
    #[test]
    fn the_idle_state_is_read_from_its_row_never_from_the_label() {
        let key = "idlewake.ipi_idle_exit@haltpoll_idle";
        let id = SpanId {
            key: key.into(),
            label: "(2) IPI sent → target CPU leaves its idle state [state 7: C9]".into(),
        };
        let count = TelemetryRow::new("trace", format!("{key}:count"), "", None, 40.0, Unit::Count);
        let split = TelemetryRow::new(
            "trace",
            format!("{key}:split"),
            "haltpoll idle",
            None,
            1.0,
            Unit::Count,
        );
        let now = rec(vec![count.clone(), split]);
        assert_eq!(
            WakeState::of(&[&now], &id),
            WakeState {
                index: Some(1),
                name: "haltpoll idle".into()
            }
        );
        let before = rec(vec![count]);
        assert_eq!(
            WakeState::of(&[&before], &id),
            WakeState {
                index: None,
                name: "haltpoll_idle".into()
            }
        );
    }
}
