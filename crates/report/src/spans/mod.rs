//! Where the time goes: the span breakdown of the `trace` monitor per point and variant.
//! For each span, in the order of a packet's way, the p50, p90 and p99 of its per-
//! measurement distribution, each as the median over the repetitions with a bootstrap
//! interval, and how many times it matched. A span that matched nothing says so; a span
//! the kernel could not trace is absent (the monitor's notes name it).
//!
//! The figures come from telemetry repetitions: tracing adds overhead to every event it
//! sees, so they say how a round trip divides, never how long it takes.

pub mod ab;
pub mod foreign;
pub mod rows;
pub mod seed;
pub mod seen;
pub(crate) mod text;
pub mod wake;
pub(crate) mod wake_text;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::Params;
use perflab_stats::{Sample, StatsConfig, Summary};
use serde::Serialize;

use rows::{SpanId, PERCENTILES};

/// A median over repetitions with its bootstrap interval, in µs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanFigure {
    pub median: f64,
    pub ci: (f64, f64),
    /// One repetition: the interval says nothing.
    pub degenerate: bool,
}

impl SpanFigure {
    pub fn of(values: Vec<f64>, cfg: &StatsConfig) -> Option<Self> {
        let s = Sample::new(values).ok()?;
        let sum = Summary::new(&s, cfg);
        Some(Self {
            median: sum.median,
            ci: sum.median_ci,
            degenerate: sum.median_ci_degenerate,
        })
    }
}

/// One span at one point and variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanRow {
    /// `netrx.wakeup`.
    pub key: String,
    /// `(b) softirq NET_RX → receiver woken`.
    pub label: String,
    /// Repetitions that recorded the span.
    pub reps: usize,
    /// Of those, the repetitions in which it matched at least once (the percentiles'
    /// repetitions).
    pub matched_reps: usize,
    /// p50, p90, p99 in µs; `None` when the span never matched.
    pub percentiles: [Option<SpanFigure>; 3],
    /// Median over the repetitions of the matches per measurement.
    pub matches: f64,
    /// Median over the repetitions of the start events left without an end.
    pub unmatched: Option<f64>,
    /// (matches, round trips) where the span matched too few events per round trip to be
    /// the benchmark's packets ([`crate::spans::seen`]): its percentiles are not shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_few: Option<(f64, f64)>,
    /// The span matched fewer events per measurement (median, the value here) than a span
    /// figure is read from ([`perflab_core::span_outline::MIN_SPAN_EVENTS`]): no
    /// percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below_floor: Option<f64>,
    /// For a span keyed by CPU: how many of its matches per round trip were not the
    /// study's own ([`crate::spans::foreign`]); contaminated, no percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign: Option<crate::spans::foreign::Foreign>,
}

impl SpanRow {
    pub fn matched(&self) -> bool {
        self.matched_reps > 0
    }

    pub fn p50(&self) -> Option<&SpanFigure> {
        self.percentiles[0].as_ref()
    }
}

/// The spans of one point and variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanGroup {
    pub point: u32,
    /// The point named by what varies within a variant (`load_streams=3`).
    pub label: String,
    pub params: Params,
    pub variant: String,
    /// Repetitions that ran the trace monitor.
    pub reps: usize,
    pub rows: Vec<SpanRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanTable {
    pub run: i64,
    /// The span sets seen (`netrx`).
    pub sets: Vec<String>,
    /// Read from telemetry repetitions (the monitor's only place), not from results.
    pub from_telemetry: bool,
    pub confidence: String,
    pub groups: Vec<SpanGroup>,
    /// The monitor's notes: events this kernel lacks and the spans skipped for them.
    pub notes: Vec<String>,
    /// Seed 004's wake-up in parts per CPU pair, where the `idlewake` set traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wake: Option<crate::spans::wake::WakeTable>,
}

/// The span breakdown of a run, or `None` when no measurement carries span rows.
pub fn span_table(run: &RunInfo, ms: &[MeasurementRecord], cfg: &StatsConfig) -> Option<SpanTable> {
    if !rows::has_spans(ms) {
        return None;
    }
    let roles = crate::hints::param_roles(run);
    let (variants, labeler, points) = crate::select::point_grid(&roles, ms);
    let mut groups = Vec::new();
    let mut from_telemetry = false;
    // Path by path (variant-major): a path's load cases read one after the other.
    for variant in &variants {
        for &point in &points {
            let all: Vec<&MeasurementRecord> = ms
                .iter()
                .filter(|m| m.point == point && m.variant == *variant)
                .collect();
            let recs = rows::span_records(&all);
            let Some(first) = recs.first() else { continue };
            from_telemetry |= recs.iter().any(|m| !m.is_headline());
            let rows = rows::span_ids(&recs)
                .into_iter()
                .map(|id| span_row(&recs, id, cfg))
                .collect();
            groups.push(SpanGroup {
                point,
                label: labeler.label(&first.params),
                params: first.params.clone(),
                variant: variant.clone(),
                reps: recs.len(),
                rows,
            });
        }
    }
    let mut sets: Vec<String> = Vec::new();
    for g in &groups {
        for r in &g.rows {
            let set = r.key.split_once('.').map_or(r.key.as_str(), |(s, _)| s);
            if !sets.iter().any(|s| s == set) {
                sets.push(set.to_string());
            }
        }
    }
    Some(SpanTable {
        run: run.id,
        sets,
        from_telemetry,
        confidence: cfg.confidence_label(),
        groups,
        notes: rows::notes(ms),
        wake: crate::spans::wake::wake_table(&roles, ms),
    })
}

fn span_row(recs: &[&MeasurementRecord], id: SpanId, cfg: &StatsConfig) -> SpanRow {
    let counts = rows::counts(recs, &id.key);
    let matches = perflab_stats::median(counts.iter().copied()).unwrap_or(0.0);
    let below_floor = (matches > 0.0
        && matches < perflab_core::span_outline::MIN_SPAN_EVENTS as f64)
        .then_some(matches);
    let foreign = crate::spans::foreign::foreign(recs, &id.key);
    let refused = below_floor.is_some() || foreign.is_some_and(|f| f.contaminated());
    let percentiles = match refused {
        true => [None, None, None],
        false => PERCENTILES.map(|stat| SpanFigure::of(rows::stat_us(recs, &id.key, stat), cfg)),
    };
    let unmatched: Vec<f64> = recs
        .iter()
        .filter_map(|m| rows::value(m, &id.key, "unmatched"))
        .collect();
    SpanRow {
        too_few: crate::spans::seen::too_few(recs, &id.key),
        below_floor,
        foreign,
        reps: counts.len(),
        matched_reps: counts.iter().filter(|c| **c > 0.0).count(),
        percentiles,
        matches,
        unmatched: perflab_stats::median(unmatched),
        key: id.key,
        label: id.label,
    }
}

impl SpanTable {
    /// Whether some row is a span keyed by CPU, whose foreign matches were counted.
    pub fn judges_foreign(&self) -> bool {
        self.groups
            .iter()
            .flat_map(|g| &g.rows)
            .any(|r| r.foreign.is_some())
    }

    /// The group of `variant` at `point`.
    pub fn group(&self, point: u32, variant: &str) -> Option<&SpanGroup> {
        self.groups
            .iter()
            .find(|g| g.point == point && g.variant == variant)
    }
}
