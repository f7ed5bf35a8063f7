//! An idle-ipi run with the `trace:idlewake` spans as the monitor writes them: CPU pairs
//! 0-0 (one CPU: no IPI but a stray one), 0-1 (SMT siblings: the target's core stays
//! busy) and 0-2, `poll-only` against `all`
//! on a machine with POLL, C1 and C6; 3 headline repetitions (no tracing) and 3
//! telemetry repetitions per pair and variant. Polling targets get no IPI, so (1) and (2)
//! never match under `poll-only`; under `all` the target left C1 or C6, C6 far slower.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};

pub const REPS: u32 = 3;

const WHOLE: &str = "(0) the whole wake-up: sched_waking → sched_switch to the task";
const WAKING: &str = "(1) waker's sched_waking → IPI sent to the target CPU";
const EXIT: &str = "(2) IPI sent → target CPU leaves its idle state";
const RUN: &str = "(3) target leaves idle → switches to the woken task";

pub fn run_info(id: i64) -> RunInfo {
    RunInfo {
        id,
        created_at: 1_700_000_000.0,
        study: "idle-ipi".into(),
        workload: "ctxsw".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "round_trips_per_sec",
            "monitors": ["cpuidle", "trace:idlewake"],
            "variants": [{"name": "poll-only"}, {"name": "all"}],
            "compare": {"baseline": "poll-only"},
            "param_roles": crate::common::catalog::roles_json("ctxsw"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(
            serde_json::json!({ "idle_driver": "intel_idle" }),
        ),
        unavailable: vec![],
        planned: 24,
        done: 24,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

fn params(cpu_b: i64) -> Params {
    let mut p = Params::default();
    p.0.insert("cpu_a".into(), ParamValue::Int(0));
    p.0.insert("cpu_b".into(), ParamValue::Int(cpu_b));
    p.0.insert("duration".into(), ParamValue::Float(10.0));
    p.0.insert("mechanism".into(), ParamValue::Str("pipe".into()));
    p
}

/// (span key, label, p50 ns, matches) of one measurement; a 0 count is a span recorded
/// without a match.
fn spans(cpu_b: i64, variant: &str, rep: u32) -> Vec<(String, String, f64, f64)> {
    let j = f64::from(rep) * 10.0;
    let far = if cpu_b == 2 { 1.0 } else { 0.0 };
    let s = |key: &str, label: &str, ns: f64, n: f64| {
        (format!("idlewake.{key}"), label.to_string(), ns + j, n)
    };
    let state = |key: &str, label: &str, i: u32, name: &str, ns: f64, n: f64| {
        s(
            &format!("{key}@{name}"),
            &format!("{label} [state {i}: {name}]"),
            ns,
            n,
        )
    };
    if cpu_b == 0 {
        // Both threads on CPU 0: wake-ups need no IPI; the few (1) are other tasks'.
        return vec![
            s("sched", WHOLE, 3_300.0, 29_000.0),
            s("waking_ipi", WAKING, 4_900.0, 22.0),
            s("ipi_idle_exit", EXIT, 0.0, 0.0),
            s("idle_exit_run", RUN, 0.0, 0.0),
        ];
    }
    if variant == "poll-only" {
        return vec![
            s("sched", WHOLE, 3_100.0 + 400.0 * far, 50_000.0),
            s("waking_ipi", WAKING, 0.0, 0.0),
            s("ipi_idle_exit", EXIT, 0.0, 0.0),
            s("idle_exit_run", RUN, 1_400.0, 49_000.0),
            state("idle_exit_run", RUN, 0, "POLL", 1_400.0, 49_000.0),
        ];
    }
    if far == 0.0 {
        // The sibling thread keeps the core busy: the target only ever reaches C1.
        return vec![
            s("sched", WHOLE, 6_000.0, 40_000.0),
            s("waking_ipi", WAKING, 1_200.0, 39_000.0),
            s("ipi_idle_exit", EXIT, 2_000.0, 39_000.0),
            state("ipi_idle_exit", EXIT, 1, "C1", 2_000.0, 39_000.0),
            s("idle_exit_run", RUN, 2_000.0, 39_500.0),
            state("idle_exit_run", RUN, 0, "POLL", 1_400.0, 500.0),
            state("idle_exit_run", RUN, 1, "C1", 2_000.0, 39_000.0),
        ];
    }
    let mut v = vec![
        s("sched", WHOLE, 24_000.0, 30_000.0),
        s("waking_ipi", WAKING, 1_200.0, 29_000.0),
        s("ipi_idle_exit", EXIT, 19_000.0, 29_000.0),
        state("ipi_idle_exit", EXIT, 1, "C1", 2_000.0, 9_000.0),
        state("ipi_idle_exit", EXIT, 3, "C6", 20_000.0, 20_000.0),
        s("idle_exit_run", RUN, 2_800.0, 29_500.0),
        state("idle_exit_run", RUN, 0, "POLL", 1_400.0, 500.0),
        state("idle_exit_run", RUN, 1, "C1", 2_000.0, 9_000.0),
        state("idle_exit_run", RUN, 3, "C6", 3_000.0, 20_000.0),
    ];
    // C1E is left once, in one repetition of three: no rows elsewhere. The monitor leaves
    // a span's values in state order.
    if rep == 0 {
        v.insert(4, state("ipi_idle_exit", EXIT, 2, "C1E", 5_000.0, 1.0));
    }
    v
}

/// The fixture machine's idle states, by index.
const STATES: [&str; 4] = ["POLL", "C1", "C1E", "C6"];

fn rows(cpu_b: i64, variant: &str, rep: u32) -> Vec<TelemetryRow> {
    let mut out = Vec::new();
    for (key, label, p50, n) in spans(cpu_b, variant, rep) {
        let row = |stat: &str, v: f64, unit: Unit| {
            TelemetryRow::new("trace", format!("{key}:{stat}"), &label, None, v, unit)
        };
        out.push(row("count", n, Unit::Count));
        // A state's value as the monitor leaves it: index as the value, name as the label.
        if let Some((_, name)) = key.split_once('@') {
            let index = STATES.iter().position(|s| *s == name).expect("a state") as f64;
            out.push(TelemetryRow::new(
                "trace",
                format!("{key}:split"),
                name,
                None,
                index,
                Unit::Count,
            ));
        }
        if n > 0.0 {
            for (stat, f) in [
                ("p50", 1.0),
                ("p90", 1.6),
                ("p99", 3.0),
                ("mean", 1.2),
                ("max", 20.0),
            ] {
                out.push(row(stat, p50 * f, Unit::Nanoseconds));
            }
        }
        out.push(row("unmatched", 0.0, Unit::Count));
    }
    out
}

pub fn records() -> Vec<MeasurementRecord> {
    super::catalog::install_monitors();
    let mut ms = Vec::new();
    for (point, cpu_b) in [0i64, 1, 2].into_iter().enumerate() {
        for rep in 0..REPS {
            for variant in ["poll-only", "all"] {
                for role in [Role::Headline, Role::Telemetry] {
                    let traced = role == Role::Telemetry;
                    let rate = if variant == "all" {
                        60_000.0
                    } else {
                        150_000.0
                    };
                    ms.push(MeasurementRecord {
                        seq: ms.len() as u32,
                        point: point as u32,
                        params: params(cpu_b),
                        variant: variant.into(),
                        rep,
                        status: MeasurementStatus::Ok,
                        started_at: 0.0,
                        elapsed_s: 10.0,
                        output: WorkloadOutput {
                            metrics: vec![Metric::new(
                                "round_trips_per_sec",
                                rate + f64::from(rep) * 100.0,
                                Unit::PerSecond,
                                Better::Higher,
                            )],
                            ..Default::default()
                        },
                        telemetry: if traced {
                            rows(cpu_b, variant, rep)
                        } else {
                            Vec::new()
                        },
                        role,
                        monitors: if traced {
                            vec!["trace".into()]
                        } else {
                            Vec::new()
                        },
                    });
                }
            }
        }
    }
    ms
}
