//! Threaded transfers: may the per-thread bandwidths be summed, and the timeline of
//! each point's threads (when each ran, and on which CPU).

use perflab_core::record::MeasurementRecord;
use serde_json::Value;

use crate::doc::Block;
use crate::full::{run_name, ReportOptions, RunData};
use crate::parallel_table;
use crate::plot::{timeline, Timeline, TimelineRow, TimelineSegment};
use crate::select::{is_ok, Labeler};

/// Timelines per run: one per point and variant, up to this many.
const MAX_TIMELINES: usize = 6;
/// Lanes per timeline; the 48-thread points of the parallel study fit.
const MAX_LANES: usize = 64;

pub(crate) fn section(runs: &[RunData], opts: &ReportOptions, blocks: &mut Vec<Block>) -> Value {
    let mut tables = Vec::new();
    for r in runs {
        let table = parallel_table(&r.info, &r.ms);
        let with_threads: Vec<&MeasurementRecord> =
            r.ms.iter()
                .filter(|m| is_ok(m) && m.output.threads.len() > 1)
                .collect();
        // Timelines belong to threaded transfers, whose table says whether the threads
        // overlapped; a ping-pong pair of threads needs no timeline.
        let Some(t) = &table else {
            continue;
        };
        blocks.push(Block::heading(
            2,
            format!("Threads of {}", run_name(&r.info)),
        ));
        blocks.extend(t.to_blocks());
        tables.push(serde_json::to_value(t).unwrap_or(Value::Null));
        if !opts.figures {
            continue;
        }
        let labeler = Labeler::new(with_threads.iter().map(|m| &m.params));
        let mut shown: Vec<(u32, &str)> = Vec::new();
        for m in &with_threads {
            if shown.len() == MAX_TIMELINES {
                break;
            }
            if shown.contains(&(m.point, m.variant.as_str())) {
                continue;
            }
            shown.push((m.point, m.variant.as_str()));
            blocks.push(Block::Figure(timeline(&thread_timeline(
                m,
                &labeler.label(&m.params),
            ))));
        }
        let points = {
            let mut all: Vec<(u32, &str)> = with_threads
                .iter()
                .map(|m| (m.point, m.variant.as_str()))
                .collect();
            all.sort_unstable();
            all.dedup();
            all.len()
        };
        if points > shown.len() {
            blocks.push(Block::para(format!(
                "Timelines of the first repetition of {} of {} points shown; \
                 `perflab show {} --threads SEQ` prints any measurement's threads.",
                shown.len(),
                points,
                r.info.id
            )));
        }
    }
    Value::Array(tables)
}

/// One lane per thread from its start to its end, coloured by the CPU it was seen on
/// most (the records hold CPU samples, not a CPU per instant, so the lane says where the
/// thread mostly ran and the hover text gives every CPU's share).
fn thread_timeline(m: &MeasurementRecord, point: &str) -> Timeline {
    let threads = &m.output.threads;
    let t0 = threads.iter().map(|t| t.start_ns).min().unwrap_or(0);
    let rows = threads
        .iter()
        .take(MAX_LANES)
        .map(|t| {
            let total: u64 = t.cpu_samples.iter().map(|(_, n)| n).sum();
            let main = t
                .cpu_samples
                .iter()
                .max_by_key(|(cpu, n)| (*n, std::cmp::Reverse(*cpu)))
                .map(|(cpu, _)| *cpu)
                .or(t.pinned_cpu);
            let shares: Vec<String> = t
                .cpu_samples
                .iter()
                .map(|(cpu, n)| {
                    format!(
                        "CPU {cpu} ({:.0}%)",
                        *n as f64 * 100.0 / total.max(1) as f64
                    )
                })
                .collect();
            let ms = |ns: u64| ns.saturating_sub(t0) as f64 / 1e6;
            TimelineRow {
                name: if t.role.is_empty() {
                    format!("tid {}", t.tid)
                } else {
                    t.role.clone()
                },
                segments: vec![TimelineSegment {
                    start: ms(t.start_ns),
                    end: ms(t.end_ns.max(t.start_ns)),
                    cpu: main,
                    note: if shares.is_empty() {
                        "no CPU samples".to_string()
                    } else {
                        shares.join(", ")
                    },
                }],
            }
        })
        .collect();
    Timeline {
        title: format!(
            "Threads of measurement {} ({}{}), colour = CPU seen most{}",
            m.seq,
            m.variant,
            if point.is_empty() || point == "all" {
                String::new()
            } else {
                format!(", {point}")
            },
            if threads.len() > MAX_LANES {
                format!("; {} of {} threads shown", MAX_LANES, threads.len())
            } else {
                String::new()
            }
        ),
        x_label: "time since the first thread started (ms)".into(),
        rows,
    }
}
