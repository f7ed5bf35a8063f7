//! Hand-made records shaped like the seed's POWER machine (CPU 4 fixed, partners on
//! other cores, `poll-only` vs `all` idle states), with deterministic small noise.

#![allow(dead_code)]

pub mod catalog;
pub mod idlewake;
pub mod kvm;
pub mod more;
pub mod source;
pub mod spans;
pub mod xfer;

use perflab_core::record::{
    MeasurementRecord, MeasurementStatus, RunInfo, RunStatus, UnavailableVariant,
};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};

pub const REPS: u32 = 5;
/// Relative noise per repetition, about 0.1%: quiet, pinned, like the seed's numbers.
const NOISE_A: [f64; 5] = [-0.0010, 0.0004, 0.0, 0.0007, -0.0003];
const NOISE_B: [f64; 5] = [0.0006, -0.0008, 0.0002, -0.0001, 0.0005];

/// A partner CPU and how much slower `all` is than `poll-only` there, in percent.
pub struct Pair {
    pub cpu_b: u32,
    pub regression_pct: f64,
    /// Repetitions of `all` that fail.
    pub failed_all: u32,
}

pub fn pairs() -> Vec<Pair> {
    let p = |cpu_b, regression_pct, failed_all| Pair {
        cpu_b,
        regression_pct,
        failed_all,
    };
    vec![
        p(0, 0.3, 0),
        p(8, 1.5, 0),
        p(12, -0.6, 0),
        p(16, 0.8, 1),
        p(24, 4.37, 0),
        p(28, 2.0, REPS),
    ]
}

pub fn run_info(id: i64) -> RunInfo {
    catalog::install();
    RunInfo {
        id,
        created_at: 1_700_000_000.0,
        study: "idle-ipi".into(),
        workload: "ctxsw".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "round_trips_per_sec",
            "monitors": ["interrupts", "cpuidle", "cpu_time"],
            "param_roles": crate::common::catalog::roles_json("ctxsw"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
        unavailable: vec![UnavailableVariant {
            variant: "pmqos-0".into(),
            reason: "/dev/cpu_dma_latency cannot be opened: permission denied".into(),
        }],
        planned: 60,
        done: 60,
        failed: REPS + 1,
        ineffective: 0,
        uid: String::new(),
    }
}

fn params(cpu_b: u32) -> Params {
    let mut p = Params::default();
    p.0.insert("cpu_a".into(), ParamValue::Int(4));
    p.0.insert("cpu_b".into(), ParamValue::Int(i64::from(cpu_b)));
    p.0.insert("duration".into(), ParamValue::Float(10.0));
    p.0.insert("mechanism".into(), ParamValue::Str("pipe".into()));
    p
}

fn irq(cpu: u32, key: &str, label: &str, v: f64) -> TelemetryRow {
    TelemetryRow::new("interrupts", key, label, Some(cpu), v, Unit::Count)
}

/// The seed's interrupt counts for CPUs 4 and 24, nudged by repetition.
fn interrupts(cpus: [u32; 2], variant: &str, rep: u32) -> Vec<TelemetryRow> {
    let r = f64::from(rep);
    let (dbl4, dbl_b) = if variant == "poll-only" {
        (1381.0, 860.0)
    } else {
        (1017.0, 888.0)
    };
    let mut rows = Vec::new();
    for (i, &cpu) in cpus.iter().enumerate() {
        let (dbl, wdg) = if i == 0 {
            (dbl4, 3573.0)
        } else {
            (dbl_b, 3482.0)
        };
        rows.push(irq(
            cpu,
            "WDG",
            "Watchdog soft-NMI interrupts",
            wdg - 40.0 * r,
        ));
        rows.push(irq(cpu, "DBL", "Doorbell interrupts", dbl + 3.0 * r));
        rows.push(irq(
            cpu,
            "LOC",
            "Local timer interrupts for timer event device",
            3792.0,
        ));
        rows.push(irq(
            cpu,
            "LOC",
            "Local timer interrupts for others",
            1806.0 - r,
        ));
        rows.push(irq(cpu, "CAL", "Function call interrupts", 0.0));
    }
    rows.push(TelemetryRow::new(
        "interrupts",
        "LOC",
        "Local timer interrupts for timer event device",
        None,
        303_360.0,
        Unit::Count,
    ));
    rows
}

const STATES: [&str; 7] = [
    "snooze",
    "stop0_lite",
    "stop0",
    "stop1",
    "stop2",
    "stop4",
    "stop5",
];

fn cpuidle(cpus: [u32; 2], variant: &str, rep: u32) -> Vec<TelemetryRow> {
    let r = f64::from(rep);
    let mut rows = Vec::new();
    for (c, &cpu) in cpus.iter().enumerate() {
        // The partner CPU sleeps a little more often than the fixed one.
        let more = 1.0 + 0.001 * c as f64;
        for (i, state) in STATES.iter().enumerate() {
            let poll_only = variant == "poll-only";
            let (usage, time, disabled) = match (i, poll_only) {
                (0, true) => (
                    ((2_145_630.0 + 100.0 * r) * more).round(),
                    2_106_002.0 + 10.0 * r,
                    0.0,
                ),
                (_, true) => (0.0, 0.0, 1.0),
                (0, false) => (((2_053_854.0 - 50.0 * r) * more).round(), 2_041_727.0, 0.0),
                (1, false) => (3.0 + r, 3514.0, 0.0),
                (2, false) => (3.0, 17.0, 0.0),
                (3, false) => (1.0, 0.0, 0.0),
                (4, false) => (23.0 + c as f64, 40_305.0 + r, 0.0),
                (_, false) => (0.0, 0.0, 0.0),
            };
            for (field, v, unit) in [
                ("usage", usage, Unit::Count),
                ("time", time, Unit::Microseconds),
                ("disabled", disabled, Unit::Count),
            ] {
                rows.push(TelemetryRow::new(
                    "cpuidle",
                    format!("{state}:{field}"),
                    "",
                    Some(cpu),
                    v,
                    unit,
                ));
            }
        }
    }
    rows
}

/// Every measurement of a run; `scale` multiplies every rate (for run-vs-run tests) and
/// `only` picks the partner CPUs present.
pub fn records(scale: f64, only: Option<&[u32]>) -> Vec<MeasurementRecord> {
    let pairs: Vec<Pair> = pairs()
        .into_iter()
        .filter(|p| match only {
            Some(o) => o.contains(&p.cpu_b),
            None => true,
        })
        .collect();
    let mut out = Vec::new();
    let n = pairs.len() as u32;
    for rep in 0..REPS {
        for (point, pair) in pairs.iter().enumerate() {
            for (vi, variant) in ["poll-only", "all"].iter().enumerate() {
                let point = point as u32;
                let base = 286_441.6 * scale;
                let (value, noise) = if *variant == "poll-only" {
                    (base, NOISE_A[rep as usize])
                } else {
                    (
                        base * (1.0 - pair.regression_pct / 100.0),
                        NOISE_B[rep as usize],
                    )
                };
                let failed = *variant == "all" && rep < pair.failed_all;
                let cpus = [4, pair.cpu_b];
                let (status, output, telemetry) = if failed {
                    (
                        MeasurementStatus::Failed(format!(
                            "ctxsw: partner thread on CPU {} did not start",
                            pair.cpu_b
                        )),
                        WorkloadOutput::default(),
                        Vec::new(),
                    )
                } else {
                    let rate = (value * (1.0 + noise) * 10.0).round() / 10.0;
                    let output = WorkloadOutput {
                        metrics: vec![
                            Metric::new(
                                "round_trips_per_sec",
                                rate,
                                Unit::PerSecond,
                                Better::Higher,
                            ),
                            Metric::new("round_trips", rate * 10.0, Unit::Count, Better::Neither),
                        ],
                        ..Default::default()
                    };
                    let mut t = interrupts(cpus, variant, rep);
                    t.extend(cpuidle(cpus, variant, rep));
                    (MeasurementStatus::Ok, output, t)
                };
                out.push(MeasurementRecord {
                    seq: (rep * n + point) * 2 + vi as u32,
                    point,
                    params: params(pair.cpu_b),
                    variant: variant.to_string(),
                    rep,
                    status,
                    started_at: 1_700_000_000.0 + f64::from(out.len() as u32) * 10.0,
                    elapsed_s: 10.0,
                    output,
                    telemetry,
                    role: Default::default(),
                    monitors: Vec::new(),
                });
            }
        }
    }
    out
}
