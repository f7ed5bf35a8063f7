//! Seed 001's span table: per path, the latency and then each span (a), (b), (c), (d) in
//! the order of a packet's way, one column per load case, in µs:
//!
//! ```text
//! (usec)    w/o netperf   w/ 3 netperf's
//! latency        ...            ...
//! (a)            ...            ...
//! ```
//!
//! Every figure is a p50, the median over the telemetry repetitions (the only ones that
//! trace); the latency is those same repetitions' `rtt_p50_us`, so the spans and the round
//! trip they divide were measured together, with tracing on.

use perflab_core::record::{MeasurementRecord, RunInfo};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::fmt;
use crate::spans::foreign::{self, Foreign};
use crate::spans::rows::{self, SpanId};
use crate::spans::seen;
use crate::spans::text::provenance;
use crate::tables::latency::{load_name, title, variant_order, varying};

/// The round-trip metric the latency row reads.
pub const LATENCY_METRIC: &str = "rtt_p50_us";

/// A span's p50 in one load case.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "us")]
pub enum SeedCell {
    /// Median over the repetitions in which the span matched, in µs.
    Value(f64),
    /// Matched too few events per round trip to be the benchmark's packets
    /// ([`crate::spans::seen::MIN_EVENTS_PER_ROUND_TRIP`]): medians over the repetitions.
    TooFew {
        events: f64,
        round_trips: f64,
        /// What the path lacks that the span needs, where known.
        why: Option<&'static str>,
    },
    /// Matched fewer events per measurement (median, the value) than a span figure is read
    /// from ([`perflab_core::span_outline::MIN_SPAN_EVENTS`]).
    BelowFloor(f64),
    /// A span keyed by CPU that matched more foreign events per round trip than a figure
    /// is read with ([`crate::spans::foreign`]): medians over the repetitions.
    Contaminated {
        foreign_per_trip: f64,
        expected_per_trip: f64,
    },
    /// Recorded, but the span matched no event.
    NoMatch,
    /// Matched no event, and the path lacks what the span needs (no vhost-net, TCG).
    Absent(&'static str),
    /// Not recorded in this load case.
    Missing,
    /// Not traced at all: the monitor skipped the span, for the reason given (this kernel
    /// lacks its events: no `kvm` module, as on a TCG host).
    NotTraced(String),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedSpan {
    pub key: String,
    pub label: String,
    pub cells: Vec<SeedCell>,
}

/// One path (variant) of one section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedPath {
    pub path: String,
    /// `proto=udp size=64` when other parameters vary; empty otherwise.
    pub section: String,
    /// The load cases, `no load`, `3 streams`.
    pub loads: Vec<String>,
    /// Repetitions that traced, per load case.
    pub reps: Vec<usize>,
    /// Median `rtt_p50_us` over those repetitions, per load case.
    pub latency: Vec<Option<f64>>,
    pub spans: Vec<SeedSpan>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeedSpanTable {
    pub run: i64,
    pub from_telemetry: bool,
    pub paths: Vec<SeedPath>,
}

/// The seed's table of a run whose traced measurements report `rtt_p50_us`; `None`
/// otherwise.
pub fn seed_span_table(run: &RunInfo, ms: &[MeasurementRecord]) -> Option<SeedSpanTable> {
    if !rows::has_spans(ms) {
        return None;
    }
    let all: Vec<&MeasurementRecord> = ms.iter().collect();
    let traced = rows::span_records(&all);
    if !traced
        .iter()
        .any(|m| m.output.metric(LATENCY_METRIC).is_some())
    {
        return None;
    }
    let from_telemetry = traced.iter().any(|m| !m.is_headline());
    let roles = crate::hints::param_roles(run);
    let (vary, _) = varying(&roles, ms);
    let mut sorted: Vec<&MeasurementRecord> = traced;
    sorted.sort_by_key(|m| (m.point, m.seq));
    let mut sections: Vec<String> = Vec::new();
    for m in &sorted {
        let t = title(&roles, &m.params, &vary);
        if !sections.contains(&t) {
            sections.push(t);
        }
    }
    let mut paths = Vec::new();
    for section in sections {
        for v in variant_order(run, ms) {
            let mine: Vec<&MeasurementRecord> = sorted
                .iter()
                .copied()
                .filter(|m| m.variant == v && title(&roles, &m.params, &vary) == section)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let netpath = run
                .spec
                .variants
                .iter()
                .find(|x| x.name == v)
                .and_then(|x| x.knobs.get("netpath"))
                .unwrap_or(&v)
                .to_string();
            paths.push(path(&v, &netpath, &section, &mine));
        }
    }
    Some(SeedSpanTable {
        run: run.id,
        from_telemetry,
        paths,
    })
}

fn path(variant: &str, netpath: &str, section: &str, mine: &[&MeasurementRecord]) -> SeedPath {
    let mut loads: Vec<(i64, String)> = mine.iter().map(|m| load_name(&m.params)).collect();
    loads.sort();
    loads.dedup();
    let per_load: Vec<Vec<&MeasurementRecord>> = loads
        .iter()
        .map(|(_, name)| {
            mine.iter()
                .copied()
                .filter(|m| load_name(&m.params).1 == *name)
                .collect()
        })
        .collect();
    let ids: Vec<SpanId> = rows::span_ids(mine);
    let mut spans: Vec<SeedSpan> = ids
        .into_iter()
        .map(|id| SeedSpan {
            cells: per_load
                .iter()
                .map(|recs| cell(recs, &id.key, netpath))
                .collect(),
            key: id.key,
            label: id.label,
        })
        .collect();
    for (key, label, why) in seen::skipped_seed_spans(mine, netpath) {
        if !spans.iter().any(|s| s.key == key) {
            spans.push(SeedSpan {
                cells: vec![SeedCell::NotTraced(why); per_load.len()],
                key,
                label,
            });
        }
    }
    seen::in_set_order(&mut spans, |s| &s.key);
    SeedPath {
        path: variant.to_string(),
        section: section.to_string(),
        reps: per_load.iter().map(Vec::len).collect(),
        latency: per_load
            .iter()
            .map(|recs| {
                perflab_stats::median(
                    recs.iter()
                        .filter_map(|m| m.output.metric(LATENCY_METRIC).map(|x| x.value)),
                )
            })
            .collect(),
        loads: loads.into_iter().map(|(_, name)| name).collect(),
        spans,
    }
}

fn cell(recs: &[&MeasurementRecord], span: &str, netpath: &str) -> SeedCell {
    if rows::counts(recs, span).is_empty() {
        return SeedCell::Missing;
    }
    let why = seen::why_absent(span, netpath, seen::under_tcg(recs));
    match perflab_stats::median(rows::stat_us(recs, span, "p50")) {
        Some(v) => match seen::too_few(recs, span) {
            Some((events, round_trips)) => SeedCell::TooFew {
                events,
                round_trips,
                why,
            },
            None => match perflab_stats::median(rows::counts(recs, span)) {
                Some(n) if n < perflab_core::span_outline::MIN_SPAN_EVENTS as f64 => {
                    SeedCell::BelowFloor(n)
                }
                _ => match foreign::foreign(recs, span) {
                    Some(Foreign::Counted {
                        foreign_per_trip,
                        expected_per_trip,
                        contaminated: true,
                        ..
                    }) => SeedCell::Contaminated {
                        foreign_per_trip,
                        expected_per_trip,
                    },
                    _ => SeedCell::Value(v),
                },
            },
        },
        None => why.map_or(SeedCell::NoMatch, SeedCell::Absent),
    }
}

impl SeedSpanTable {
    /// Whether some cell was refused as contaminated (the legend then says what that is).
    pub fn has_contaminated(&self) -> bool {
        self.paths
            .iter()
            .flat_map(|p| &p.spans)
            .flat_map(|s| &s.cells)
            .any(|c| matches!(c, SeedCell::Contaminated { .. }))
    }

    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![Block::para(format!(
            "Where the time goes, in seed 001's layout (run {}): each span's p50 in usec, \
             the median over the repetitions that traced; latency = those same \
             repetitions' {LATENCY_METRIC}, tracing on. All {}. (a)-(d) are seed 001's \
             spans. not measured = fewer than {} matched events per round trip, too few \
             to be the benchmark's packets; too few = fewer than {} matched events per \
             measurement, too few for a figure;{} none = the span matched no event (with \
             what the path lacks, where known); not traced = the kernel lacks the span's \
             events; - = not recorded; reps = the repetitions that traced.",
            self.run,
            provenance(self.from_telemetry),
            seen::MIN_EVENTS_PER_ROUND_TRIP,
            perflab_core::span_outline::MIN_SPAN_EVENTS,
            if self.has_contaminated() {
                " contaminated = a span keyed by CPU that matched more events per round trip \
                 than the study's own work makes, by more than half of that count;"
            } else {
                ""
            }
        ))];
        for p in &self.paths {
            let title = if p.section.is_empty() {
                p.path.clone()
            } else {
                format!("{}, {}", p.path, p.section)
            };
            out.push(Block::heading(3, title));
            let mut head = vec!["(usec)".to_string()];
            head.extend(p.loads.iter().cloned());
            let mut rows = vec![{
                let mut r = vec!["latency".to_string()];
                r.extend(p.latency.iter().map(|l| l.map_or("-".into(), fmt::value)));
                r
            }];
            for s in &p.spans {
                let mut r = vec![s.label.clone()];
                r.extend(s.cells.iter().map(|c| match c {
                    SeedCell::Value(v) => fmt::value(*v),
                    SeedCell::TooFew {
                        events,
                        round_trips,
                        why,
                    } => format!(
                        "not measured ({} events for {} round trips{})",
                        fmt::count(*events),
                        fmt::count(*round_trips),
                        why.map(|w| format!("; {w}")).unwrap_or_default()
                    ),
                    SeedCell::BelowFloor(n) => format!(
                        "too few ({} < {} events)",
                        fmt::count(*n),
                        perflab_core::span_outline::MIN_SPAN_EVENTS
                    ),
                    SeedCell::Contaminated {
                        foreign_per_trip,
                        expected_per_trip,
                    } => foreign::refusal(*foreign_per_trip, *expected_per_trip),
                    SeedCell::NoMatch => "none".to_string(),
                    SeedCell::Absent(why) => format!("none: {why}"),
                    SeedCell::Missing => "-".to_string(),
                    SeedCell::NotTraced(why) => format!("not traced: {why}"),
                }));
                rows.push(r);
            }
            let mut reps = vec!["reps".to_string()];
            reps.extend(p.reps.iter().map(usize::to_string));
            rows.push(reps);
            out.push(Block::Table(Table::new(head, rows, vec![0])));
        }
        out
    }
}
