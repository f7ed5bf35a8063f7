//! Seed 000's question per grid point: the aggregate bandwidth (all bytes over the union
//! window of the threads) against the sum of the per-thread bandwidths, with the verdict
//! on whether summing is valid and the first reason where it is not; and a measurement's
//! per-thread records (`perflab show RUN --threads SEQ`).
//!
//! It reads what the workload stored with each measurement as data: the verdict metrics
//! ([`ParallelMetrics`], the type the workloads write) and the thread records, from which `perflab_stats::parallel` judges
//! the measurement again for the reasons; so a run of xfer's channel model and a run of
//! dmatest read alike. Runs stored before `busy_measured` existed have their reasons only
//! in a note's text, read by [`crate::tables::parallel::legacy`].

pub(crate) mod gpu_words;
pub(crate) mod legacy;

use perflab_core::note::Workers;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::{ParallelMetrics, ParamRoles, ThreadRecord};
use perflab_stats::parallel::{judge_stored, spans_from_records, Criteria};
use serde::Serialize;

use crate::doc::align;
use crate::fmt;
use crate::select::{is_ok, measured_variants, Labeler};

/// One grid point under one variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParallelRow {
    pub point: String,
    pub variant: String,
    /// Successful repetitions with a verdict.
    pub reps: usize,
    pub threads: Option<f64>,
    pub aggregate_mib_s: Option<f64>,
    pub summed_mib_s: Option<f64>,
    pub overlap: Option<f64>,
    pub parallelism: Option<f64>,
    /// Repetitions whose verdict says summing is valid.
    pub valid: usize,
    /// The first reason of the first repetition where summing is not valid.
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParallelTable {
    pub rows: Vec<ParallelRow>,
    /// The "threads" are copy engines (gpuxfer's; `gpu_words` has the table's words).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub copy_engines: bool,
}

/// The verdict a measurement carries, if any.
fn verdict(m: &MeasurementRecord) -> Option<ParallelMetrics> {
    ParallelMetrics::from_metrics(&m.output.metrics)
}

/// True when some measurement of the run carries the verdict.
pub fn has_verdict(ms: &[MeasurementRecord]) -> bool {
    ms.iter().any(|m| verdict(m).is_some())
}

/// The median of the figures a verdict has (an older run may lack one: NaN).
fn median(v: impl Iterator<Item = f64>) -> Option<f64> {
    perflab_stats::median(v.filter(|x| !x.is_nan()))
}

/// The reasons summing is not valid for `m` (whose verdict is `v`), in the words of
/// `workers`: empty when it is valid.
fn reasons(m: &MeasurementRecord, v: &ParallelMetrics, workers: Workers) -> Vec<String> {
    let out = &m.output;
    // Runs stored before `busy_measured` have their reasons only in a note's text: an
    // untyped note, shown as it was written.
    let Some(busy) = v.busy_measured else {
        return legacy::first_reason(&out.notes).into_iter().collect();
    };
    if v.sum_valid {
        return Vec::new();
    }
    // The thread records do not keep each thread's CPU time; the parallelism the workload
    // computed from it stands in for it, so the verdict is the one the workload gave.
    let measured = (busy && !v.parallelism.is_nan()).then_some(v.parallelism);
    let spans = spans_from_records(&out.threads);
    judge_stored(&spans, &Criteria::default(), measured)
        .reasons
        .iter()
        .map(|r| r.text(workers))
        .collect()
}

/// What the run's thread records are (gpuxfer's are copy engines), from its workload's
/// report hints.
pub(crate) fn workers_of(run: &RunInfo) -> Workers {
    crate::hints::results(&run.workload).map_or(Workers::Threads, |h| h.workers)
}

/// The summary table, or `None` when no measurement carries the verdict.
pub fn parallel_table(run: &RunInfo, ms: &[MeasurementRecord]) -> Option<ParallelTable> {
    let workers = workers_of(run);
    if !has_verdict(ms) {
        return None;
    }
    let variants = measured_variants(ms);
    let first = variants.first().cloned().unwrap_or_default();
    // Points are named by what varies within one variant (placement set by a variant
    // would name the variant twice).
    let roles = crate::hints::param_roles(run);
    let labeler = Labeler::new(
        &roles,
        ms.iter().filter(|m| m.variant == first).map(|m| &m.params),
    );
    let mut points: Vec<u32> = ms.iter().map(|m| m.point).collect();
    points.sort_unstable();
    points.dedup();
    let mut rows = Vec::new();
    for point in points {
        for variant in &variants {
            let group: Vec<(&MeasurementRecord, ParallelMetrics)> = ms
                .iter()
                .filter(|m| m.point == point && &m.variant == variant && is_ok(m))
                .filter_map(|m| Some((m, verdict(m)?)))
                .collect();
            let Some((head, _)) = group.first() else {
                continue;
            };
            let med = |f: fn(&ParallelMetrics) -> f64| median(group.iter().map(|(_, v)| f(v)));
            let valid = group.iter().filter(|(_, v)| v.sum_valid).count();
            let reason = group
                .iter()
                .find_map(|(m, v)| reasons(m, v, workers).into_iter().next());
            rows.push(ParallelRow {
                point: labeler.label(&head.params),
                variant: variant.clone(),
                reps: group.len(),
                threads: med(|v| v.threads),
                aggregate_mib_s: med(|v| v.aggregate_mib_s),
                summed_mib_s: med(|v| v.summed_mib_s),
                overlap: med(|v| v.overlap),
                parallelism: med(|v| v.parallelism),
                valid,
                reason,
            });
        }
    }
    Some(ParallelTable {
        rows,
        copy_engines: workers == Workers::CopyEngines,
    })
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".into())
}

impl ParallelRow {
    /// `valid`, `NOT valid`, or `valid 2/3` when the repetitions disagree.
    pub fn verdict(&self) -> String {
        if self.valid == self.reps {
            "valid".into()
        } else if self.valid == 0 {
            "NOT valid".into()
        } else {
            format!("valid {}/{}", self.valid, self.reps)
        }
    }
}

/// The table's title line.
pub(crate) const TITLE: &str =
    "May the per-thread bandwidths be summed? (medians over repetitions; \
     aggregate = all bytes over the threads' union window)";
/// The line under the table.
pub(crate) const UNITS: &str =
    "(aggregate and summed in MiB/s; parallel = threads' busy time over the window)";
/// The title of the reasons list.
pub(crate) const WHY: &str = "Why not (first reason of the first repetition that failed)";

impl ParallelTable {
    /// The header row and one row per point and variant.
    pub(crate) fn cells(&self) -> Vec<Vec<String>> {
        let mut lines = vec![[
            "point",
            "variant",
            "reps",
            "threads",
            "aggregate",
            "summed",
            "sum/agg",
            "overlap",
            "parallel",
            "summing",
        ]
        .map(String::from)
        .to_vec()];
        for r in &self.rows {
            let ratio = match (r.summed_mib_s, r.aggregate_mib_s) {
                (Some(s), Some(a)) if a > 0.0 => format!("{:.2}×", s / a),
                _ => "-".into(),
            };
            lines.push(vec![
                r.point.clone(),
                r.variant.clone(),
                r.reps.to_string(),
                opt(r.threads, fmt::count),
                opt(r.aggregate_mib_s, |x| format!("{x:.0}")),
                opt(r.summed_mib_s, |x| format!("{x:.0}")),
                ratio,
                opt(r.overlap, |x| format!("{:.0}%", x * 100.0)),
                opt(r.parallelism, |x| format!("{x:.2}")),
                r.verdict(),
            ]);
        }
        lines
    }

    /// `point [variant]: reason` for every row where summing is not valid.
    pub(crate) fn reasons(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter_map(|r| {
                r.reason
                    .as_ref()
                    .map(|why| format!("{} [{}]: {why}", r.point, r.variant))
            })
            .collect()
    }
}

/// The per-thread records of one measurement: where each thread ran, when, and what
/// it moved. Start is relative to the first thread's start. The point's values are in
/// the units `roles` (the run's) give them.
pub fn render_threads(m: &MeasurementRecord, workers: Workers, roles: &ParamRoles) -> String {
    let threads: &[ThreadRecord] = &m.output.threads;
    let mut out = format!(
        "measurement {} ({} {}), {} thread record{}\n",
        m.seq,
        m.variant,
        roles.describe(&m.params),
        threads.len(),
        if threads.len() == 1 { "" } else { "s" }
    );
    let Some(t0) = threads.iter().map(|t| t.start_ns).min() else {
        return out;
    };
    let mut lines = vec![[
        "thread",
        "tid",
        "pinned",
        "cpus (samples)",
        "migr",
        "start ms",
        "length ms",
        "MiB",
        "MiB/s",
    ]
    .map(String::from)
    .to_vec()];
    // The thread's own counts, where a counters monitor asked for them: its CPU time shows
    // how much of its interval it really ran.
    let counted = threads.iter().any(|t| !t.counters.is_empty());
    if counted {
        lines[0].extend(["cpu ms", "ctx sw"].map(String::from));
    }
    for t in threads {
        let len = t.end_ns.saturating_sub(t.start_ns);
        let mib = t.bytes.map(|b| b as f64 / (1u64 << 20) as f64);
        let cpus = t
            .cpu_samples
            .iter()
            .map(|(c, n)| format!("{c}:{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        lines.push(vec![
            t.role.clone(),
            t.tid.to_string(),
            t.pinned_cpu.map_or("-".into(), |c| c.to_string()),
            if cpus.is_empty() { "-".into() } else { cpus },
            t.migrations.map_or("-".into(), |m| m.to_string()),
            format!("{:.3}", t.start_ns.saturating_sub(t0) as f64 / 1e6),
            format!("{:.3}", len as f64 / 1e6),
            opt(mib, |x| format!("{x:.1}")),
            match mib {
                Some(x) if len > 0 => format!("{:.0}", x / (len as f64 / 1e9)),
                _ => "-".into(),
            },
        ]);
        if counted {
            let count = |event: &str| {
                t.counters
                    .iter()
                    .find(|c| c.event == event)
                    .and_then(|c| c.value)
            };
            let row = lines.last_mut().expect("just pushed");
            row.push(opt(count("task-clock"), |ns| format!("{:.1}", ns / 1e6)));
            row.push(opt(count("context-switches"), |n| format!("{n:.0}")));
        }
    }
    out.push_str(&align(&lines, &[0, 3]));
    if let Some(line) = verdict_line(m, workers) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Whether the measurement's per-worker bandwidths may be summed, and why not, from its
/// stored verdict and its records judged again (never from the workload's note).
fn verdict_line(m: &MeasurementRecord, workers: Workers) -> Option<String> {
    let v = verdict(m)?;
    let one = match workers {
        Workers::Threads => "per-thread",
        Workers::CopyEngines => "per-direction",
    };
    if v.sum_valid {
        return Some(format!("summing {one} bandwidths is valid"));
    }
    let why = reasons(m, &v, workers);
    Some(format!(
        "summing {one} bandwidths is NOT valid: {}",
        why.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::{Format, Section};
    use perflab_core::record::MeasurementStatus;
    use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};

    fn m(
        seq: u32,
        point: u32,
        variant: &str,
        valid: bool,
        agg: f64,
        sum: f64,
    ) -> MeasurementRecord {
        let metric = |n: &str, v: f64| Metric::new(n, v, Unit::Count, Better::Neither);
        let note = if valid {
            "summing per-thread bandwidths is valid: 2 threads: …".to_string()
        } else {
            "summing per-thread bandwidths is NOT valid: 4 threads: aggregate 1 MiB/s; 4 \
             threads pinned to CPU 0 shared it for 99% of the window; another"
                .to_string()
        };
        MeasurementRecord {
            seq,
            point,
            params: Params(
                [(
                    "threads_per_channel".to_string(),
                    ParamValue::Int(i64::from(point) + 1),
                )]
                .into_iter()
                .collect(),
            ),
            variant: variant.into(),
            rep: 0,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: WorkloadOutput {
                metrics: vec![
                    metric("aggregate_mib_s", agg),
                    metric("summed_mib_s", sum),
                    metric("overlap", 0.99),
                    metric("parallelism", 1.0),
                    metric("sum_valid", f64::from(u8::from(valid))),
                    metric("threads", 4.0),
                ],
                threads: vec![
                    ThreadRecord {
                        role: "c0t0".into(),
                        tid: 7,
                        pinned_cpu: Some(0),
                        cpu_samples: vec![(0, 3)],
                        start_ns: 1_000_000,
                        end_ns: 101_000_000,
                        bytes: Some(100 << 20),
                        ..Default::default()
                    },
                    ThreadRecord {
                        role: "c0t1".into(),
                        tid: 8,
                        start_ns: 2_000_000,
                        end_ns: 52_000_000,
                        bytes: Some(10 << 20),
                        ..Default::default()
                    },
                ],
                notes: vec![note],
                ..Default::default()
            },
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    fn info() -> RunInfo {
        serde_json::from_value(serde_json::json!({
            "id": 1, "created_at": 0.0, "study": "parallel", "workload": "xfer",
            "label": null, "status": "complete", "spec": {}, "fingerprint": {},
            "unavailable": [], "planned": 4, "done": 4, "failed": 0
        }))
        .unwrap()
    }

    #[test]
    fn table_shows_aggregate_against_summed_with_the_verdict_and_reason() {
        let ms = vec![
            m(0, 0, "spread", true, 100.0, 101.0),
            m(1, 1, "spread", false, 100.0, 400.0),
            m(2, 1, "spread", true, 100.0, 102.0),
        ];
        let t = parallel_table(&info(), &ms).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].verdict(), "valid");
        assert_eq!(t.rows[1].verdict(), "valid 1/2");
        assert_eq!(t.rows[1].summed_mib_s, Some(251.0));
        let text = t.render(Format::Text);
        assert!(text.contains("threads_per_channel=2  spread"), "{text}");
        assert!(text.contains("2.51×"), "{text}");
        assert!(
            text.contains(
                "threads_per_channel=2 [spread]: 4 threads pinned to CPU 0 shared it for 99% of the window"
            ),
            "{text}"
        );
        assert!(!text.contains("another"), "{text}");
        assert!(parallel_table(&info(), &[]).is_none());
    }

    /// A run stored since issue 15: no verdict text to parse, the reasons are judged
    /// again from the thread records and the stored metrics.
    #[test]
    fn reasons_of_a_new_run_come_from_its_data_not_its_notes() {
        let new_form = |seq: u32, valid: bool, busy: bool| {
            let mut r = m(seq, 0, "free", valid, 100.0, 400.0);
            r.output.notes.clear();
            r.output.metrics.push(Metric::new(
                "busy_measured",
                f64::from(u8::from(busy)),
                Unit::Count,
                Better::Neither,
            ));
            r
        };
        // c0t0 runs 1–101 ms, c0t1 2–52 ms: together for half of the window.
        let t = parallel_table(&info(), &[new_form(0, false, false)]).unwrap();
        assert_eq!(
            t.rows[0].reason.as_deref(),
            Some("all threads ran together for only 50% of the window")
        );
        // With CPU time measured the stored parallelism (1.0 of 2 threads) counts too.
        let mut busy = new_form(1, false, true);
        busy.output.threads[1].start_ns = 1_000_000;
        busy.output.threads[1].end_ns = 101_000_000;
        busy.output.threads[1].pinned_cpu = Some(1);
        let t = parallel_table(&info(), &[busy]).unwrap();
        let why = t.rows[0].reason.clone().unwrap_or_default();
        assert!(
            why.starts_with("effective parallelism 1.00 of 2 threads"),
            "{why}"
        );
        let t = parallel_table(&info(), &[new_form(2, true, false)]).unwrap();
        assert_eq!(t.rows[0].reason, None);
    }

    #[test]
    fn thread_records_render_relative_to_the_first_start() {
        let text = render_threads(
            &m(0, 0, "free", true, 1.0, 1.0),
            Workers::Threads,
            &ParamRoles::default(),
        );
        assert!(text.contains("2 thread records"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].starts_with("c0t0"), "{text}");
        assert!(lines[2].contains("0:3"), "{text}");
        assert!(
            lines[2].contains("0.000") && lines[2].contains("100.000"),
            "{text}"
        );
        assert!(lines[2].ends_with("1000"), "{text}");
        assert!(
            lines[3].contains("1.000") && lines[3].contains("200"),
            "{text}"
        );
    }
}
