//! Hand-made records shaped like an idle-ipi run on a 2-vCPU KVM guest: no cpuidle
//! driver, so `poll-only` was unavailable and only `all` ran, at pairs 0-0 and 0-1.
//! Interrupts are the x86 guest's LOC/RES/CAL/TLB; there are no cpuidle rows.

use perflab_core::record::{
    MeasurementRecord, MeasurementStatus, RunInfo, RunStatus, UnavailableVariant,
};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};

pub const POLL_ONLY_REASON: &str = "cpuidle: no cpuidle driver (the kernel idles without one \
     (a VM, or idle=/cpuidle.off= on its command line))";

/// Round trips per second by repetition. Same-CPU ping-pong is quiet; across vCPUs every
/// wakeup is an IPI through the hypervisor, noisy, and repetition 4 was disturbed.
const RATE_0_0: [f64; 5] = [301_250.4, 300_980.1, 301_402.7, 301_105.9, 300_877.3];
const RATE_0_1: [f64; 5] = [41_210.6, 43_905.2, 40_118.9, 42_786.4, 35_012.8];

pub fn unavailable() -> Vec<UnavailableVariant> {
    vec![UnavailableVariant {
        variant: "poll-only".into(),
        reason: POLL_ONLY_REASON.into(),
    }]
}

pub fn run_info(id: i64) -> RunInfo {
    super::catalog::install();
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
            "unavailable_monitors": {"cpuidle": "no cpuidle driver"},
            "compare": {"baseline": "poll-only"},
            "param_roles": crate::common::catalog::roles_json("ctxsw"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(
            serde_json::json!({"idle_driver": "none"}),
        ),
        unavailable: unavailable(),
        planned: 10,
        done: 10,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

fn params(cpu_b: u32) -> Params {
    let mut p = Params::default();
    p.0.insert("cpu_a".into(), ParamValue::Int(0));
    p.0.insert("cpu_b".into(), ParamValue::Int(i64::from(cpu_b)));
    p.0.insert("duration".into(), ParamValue::Float(5.0));
    p.0.insert("mechanism".into(), ParamValue::Str("pipe".into()));
    p
}

fn irq(cpu: u32, key: &str, label: &str, v: f64) -> TelemetryRow {
    TelemetryRow::new("interrupts", key, label, Some(cpu), v, Unit::Count)
}

/// Per-CPU interrupt deltas over a 5 s measurement (HZ=250). Across vCPUs each wakeup
/// of the idle partner is a rescheduling IPI; on one CPU there are almost none.
fn interrupts(cpu_b: u32, rate: f64, rep: u32) -> Vec<TelemetryRow> {
    let r = f64::from(rep);
    let mut rows = Vec::new();
    for cpu in [0, 1] {
        let busy = cpu == 0 || cpu == cpu_b;
        let loc = if busy { 1251.0 + r } else { 312.0 + 2.0 * r };
        let res = match (cpu_b, cpu) {
            (0, _) => 3.0 + r,
            (_, 1) => (rate * 5.0 * 0.48).round(),
            _ => (rate * 5.0 * 0.02).round(),
        };
        rows.push(irq(cpu, "LOC", "Local timer interrupts", loc));
        rows.push(irq(cpu, "RES", "Rescheduling interrupts", res));
        rows.push(irq(cpu, "CAL", "Function call interrupts", 2.0 + r));
        rows.push(irq(
            cpu,
            "TLB",
            "TLB shootdowns",
            if cpu == 0 { 1.0 } else { 0.0 },
        ));
    }
    rows
}

pub fn records() -> Vec<MeasurementRecord> {
    let mut out = Vec::new();
    for rep in 0..5u32 {
        for (point, cpu_b) in [0u32, 1].into_iter().enumerate() {
            let rate = if cpu_b == 0 {
                RATE_0_0[rep as usize]
            } else {
                RATE_0_1[rep as usize]
            };
            out.push(MeasurementRecord {
                seq: rep * 2 + point as u32,
                point: point as u32,
                params: params(cpu_b),
                variant: "all".into(),
                rep,
                status: MeasurementStatus::Ok,
                started_at: 1_700_000_000.0 + f64::from(rep * 2 + point as u32) * 5.0,
                elapsed_s: 5.0,
                output: WorkloadOutput {
                    metrics: vec![
                        Metric::new("round_trips_per_sec", rate, Unit::PerSecond, Better::Higher),
                        Metric::new("round_trips", rate * 5.0, Unit::Count, Better::Neither),
                    ],
                    ..Default::default()
                },
                telemetry: interrupts(cpu_b, rate, rep),
                role: Default::default(),
                monitors: Vec::new(),
            });
        }
    }
    out
}
