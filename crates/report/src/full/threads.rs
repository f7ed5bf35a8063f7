//! Threaded transfers: may the per-thread bandwidths be summed, and the timeline of
//! each point's threads (when each ran, and on which CPU).

use perflab_core::record::MeasurementRecord;
use perflab_core::ThreadRecord;
use serde_json::Value;

use crate::doc::Block;
use crate::full::input::{run_name, ReportOptions, RunData};
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
        let roles = crate::hints::param_roles(&r.info);
        let labeler = Labeler::new(&roles, with_threads.iter().map(|m| &m.params));
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
                 `perflab show {} --threads SEQ{}` prints any measurement's threads.",
                shown.len(),
                points,
                r.info.id,
                opts.db_flag
            )));
        }
    }
    Value::Array(tables)
}

/// One lane per thread from its start to its end, one segment per stay on a CPU where the
/// record holds its CPU path; a record without one (an old run, dmatest's kernel threads)
/// is one segment coloured by the CPU it was seen on most, and its hover text gives every
/// CPU's share.
fn thread_timeline(m: &MeasurementRecord, point: &str) -> Timeline {
    let threads = &m.output.threads;
    let t0 = threads.iter().map(|t| t.start_ns).min().unwrap_or(0);
    let rows: Vec<TimelineRow> = threads
        .iter()
        .take(MAX_LANES)
        .map(|t| TimelineRow {
            name: if t.role.is_empty() {
                format!("tid {}", t.tid)
            } else {
                t.role.clone()
            },
            segments: lane(t, t0),
        })
        .collect();
    let by_path = threads
        .iter()
        .take(MAX_LANES)
        .any(|t| !t.cpu_path.is_empty());
    let by_most = threads
        .iter()
        .take(MAX_LANES)
        .any(|t| t.cpu_path.is_empty());
    let colour = match (by_path, by_most) {
        (true, false) => "colour = CPU over time",
        (true, true) => "colour = CPU over time, or CPU seen most where not sampled over time",
        _ => "colour = CPU seen most",
    };
    Timeline {
        title: format!(
            "Threads of measurement {} ({}{}), {colour}{}",
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

/// The segments of one thread's lane, in milliseconds since `t0`.
fn lane(t: &ThreadRecord, t0: u64) -> Vec<TimelineSegment> {
    let ms = |ns: u64| ns.saturating_sub(t0) as f64 / 1e6;
    let len = t.end_ns.saturating_sub(t.start_ns);
    if !t.cpu_path.is_empty() {
        return t
            .cpu_path
            .stays(len)
            .into_iter()
            .map(|s| TimelineSegment {
                start: ms(t.start_ns.saturating_add(s.from)),
                end: ms(t.start_ns.saturating_add(s.to)),
                cpu: s.cpu,
                note: match s.cpu {
                    Some(c) => format!("CPU {c}, {:.3} ms", (s.to - s.from) as f64 / 1e6),
                    None => format!(
                        "CPU not recorded past {} changes",
                        perflab_core::CpuPath::MAX_CHANGES
                    ),
                },
            })
            .collect();
    }
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
    vec![TimelineSegment {
        start: ms(t.start_ns),
        end: ms(t.end_ns.max(t.start_ns)),
        cpu: main,
        note: if shares.is_empty() {
            "no CPU samples".to_string()
        } else {
            shares.join(", ")
        },
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::CpuPath;

    fn thread(path: Vec<(u64, u32)>) -> ThreadRecord {
        ThreadRecord {
            role: "c0t0".into(),
            start_ns: 3_000_000,
            end_ns: 13_000_000,
            cpu_samples: vec![(2, 6), (7, 4)],
            cpu_path: CpuPath {
                changes: path,
                unknown_after: None,
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_migrated_thread_is_drawn_as_its_stays() {
        let segs = lane(&thread(vec![(0, 2), (6_000_000, 7)]), 1_000_000);
        let got: Vec<(f64, f64, Option<u32>)> =
            segs.iter().map(|s| (s.start, s.end, s.cpu)).collect();
        assert_eq!(got, vec![(2.0, 8.0, Some(2)), (8.0, 12.0, Some(7))]);
        assert_eq!(segs[1].note, "CPU 7, 4.000 ms");
    }

    #[test]
    fn without_a_path_the_lane_is_the_cpu_seen_most() {
        let segs = lane(&thread(vec![]), 1_000_000);
        assert_eq!(segs.len(), 1);
        assert_eq!(
            (segs[0].start, segs[0].end, segs[0].cpu),
            (2.0, 12.0, Some(2))
        );
        assert_eq!(segs[0].note, "CPU 2 (60%), CPU 7 (40%)");
    }
}
