//! Realistic runs and measurements for the store's tests.
#![allow(dead_code)]

#[macro_use]
pub mod backends;

use std::collections::BTreeMap;

use perflab_core::{
    Better, CpuPath, HistogramData, Metric, ParamValue, Params, TelemetryRow, ThreadCount,
    ThreadRecord, Unit, WorkloadOutput,
};
use perflab_store::{
    MeasurementRecord, MeasurementStatus, NewRun, PlannedMeasurement, UnavailableVariant,
};

pub const VARIANTS: [&str; 2] = ["all-states", "snooze-only"];

pub fn params(point: u32) -> Params {
    let mut p = BTreeMap::new();
    p.insert("cpu_a".to_string(), ParamValue::Int(0));
    p.insert("cpu_b".to_string(), ParamValue::Int(i64::from(point)));
    p.insert("duration".to_string(), ParamValue::Float(0.25));
    p.insert("mechanism".to_string(), ParamValue::Str("pipe".into()));
    p.insert("spin".to_string(), ParamValue::Bool(point & 1 == 0));
    Params(p)
}

/// A plan of `n` measurements: points × variants × reps, interleaved.
pub fn plan(n: u32) -> Vec<PlannedMeasurement> {
    (0..n)
        .map(|seq| PlannedMeasurement {
            seq,
            point: seq / 6,
            params: params(seq / 6),
            variant: VARIANTS[(seq % 2) as usize].to_string(),
            rep: (seq % 6) / 2,
            role: Default::default(),
        })
        .collect()
}

pub fn new_run(n: u32) -> NewRun {
    NewRun {
        study: "ipi-wakeup".into(),
        workload: "ctxsw".into(),
        label: Some("snooze only — Grüße ✓ 東京".into()),
        spec: serde_json::from_value(serde_json::json!({
            "name": "ipi-wakeup",
            "workload": "ctxsw",
            "primary_metric": "round_trips_per_s",
            "points": [{"cpu_b": "1"}, {"cpu_b": "2"}, {"cpu_b": "3"}],
            "variants": [
                {"name": "all-states", "knobs": [["cpuidle", "all"]]},
                {"name": "snooze-only", "knobs": [["cpuidle", "states:POLL"], ["pmqos", "0"]]}
            ],
            "repetitions": 3,
            "monitors": ["interrupts", "cpuidle"],
            "description": "Grüße ✓ 東京"
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({
            "kernel": "6.8.0-49-generic",
            "cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p2 isolcpus=2-3",
            "cpu_model": "AMD EPYC 9454 48-Core Processor",
            "idle_driver": "acpi_idle",
            "perflab": "0.1.0"
        })),
        plan: plan(n),
        unavailable: vec![UnavailableVariant {
            variant: "no-c6".into(),
            reason: "cpuidle state C6 is not present on this machine".into(),
        }],
        uid: None,
    }
}

/// What a ctxsw measurement with the usual monitors produces; `telemetry` rows of
/// interrupts, cpuidle and CPU times, some per CPU and some totals.
pub fn record(p: &PlannedMeasurement, telemetry: usize) -> MeasurementRecord {
    let seq = f64::from(p.seq);
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .expect("histogram bounds are valid");
    for i in 0..2000u64 {
        h.record(900 + (i * 7919 + u64::from(p.seq)) % 40_000)
            .expect("value in bounds");
    }
    let sources = [
        ("interrupts", "LOC", "Local timer interrupts", Unit::Count),
        ("interrupts", "RES", "Rescheduling interrupts", Unit::Count),
        ("interrupts", "CAL", "Function call interrupts", Unit::Count),
        ("cpuidle", "C1:usage", "", Unit::Count),
        ("cpuidle", "C2:time", "", Unit::Microseconds),
        ("cputime", "idle", "Idle time", Unit::Percent),
    ];
    let telemetry = (0..telemetry)
        .map(|i| {
            let (src, key, label, unit) = sources[i % sources.len()];
            let cpu = if i % 7 == 6 {
                None
            } else {
                Some((i % 16) as u32)
            };
            TelemetryRow::new(src, key, label, cpu, (i as f64) * 0.1 + seq / 3.0, unit)
        })
        .collect();
    MeasurementRecord {
        seq: p.seq,
        point: p.point,
        params: p.params.clone(),
        variant: p.variant.clone(),
        rep: p.rep,
        status: MeasurementStatus::Ok,
        started_at: 1_718_000_000.123_456 + seq * 0.731,
        elapsed_s: 0.250_123_456_789 + seq * 1e-9,
        output: WorkloadOutput {
            metrics: vec![
                Metric::new(
                    "wakeup_latency",
                    4_321.123_456_789 + seq,
                    Unit::Nanoseconds,
                    Better::Lower,
                ),
                Metric::new(
                    "round_trips",
                    57_000.0 + seq,
                    Unit::PerSecond,
                    Better::Higher,
                ),
                Metric::new("ratio", 1.0 / 3.0, Unit::Ratio, Better::Neither),
                Metric::new("tiny", 5e-324, Unit::Seconds, Better::Lower),
            ],
            histograms: vec![HistogramData::from_hdr("rtt", Unit::Nanoseconds, &h)],
            threads: vec![
                ThreadRecord {
                    role: "waker".into(),
                    tid: 4242,
                    pinned_cpu: Some(0),
                    cpu_samples: vec![(0, 1000)],
                    cpu_path: CpuPath::default(),
                    migrations: Some(0),
                    voluntary_switches: Some(57_000),
                    involuntary_switches: Some(3),
                    start_ns: 12_345_678_901_234,
                    end_ns: 12_345_928_901_234,
                    bytes: Some(456_000),
                    counters: vec![
                        ThreadCount {
                            event: "context-switches".into(),
                            value: Some(57_003.0),
                            running_pct: None,
                        },
                        ThreadCount {
                            event: "cycles".into(),
                            value: None,
                            running_pct: Some(0.0),
                        },
                    ],
                },
                ThreadRecord {
                    role: "wakee".into(),
                    tid: 4243,
                    pinned_cpu: None,
                    cpu_samples: vec![(1, 600), (5, 400)],
                    cpu_path: CpuPath {
                        changes: vec![(0, 1), (7_000_000, 5), (9_000_000, 1)],
                        unknown_after: Some(u64::MAX),
                    },
                    migrations: None,
                    voluntary_switches: None,
                    involuntary_switches: None,
                    start_ns: 12_345_678_901_300,
                    end_ns: u64::MAX,
                    bytes: None,
                    counters: vec![],
                },
            ],
            notes: vec!["CPU 5 ran the wakee for 40% of samples — not pinned".into()],
        },
        telemetry,
        role: p.role,
        monitors: vec!["interrupts".into(), "cpu_time".into()],
    }
}

pub fn failed(p: &PlannedMeasurement, why: &str) -> MeasurementRecord {
    MeasurementRecord {
        seq: p.seq,
        point: p.point,
        params: p.params.clone(),
        variant: p.variant.clone(),
        rep: p.rep,
        status: MeasurementStatus::Failed(why.into()),
        started_at: 1_718_000_000.0,
        elapsed_s: 0.01,
        output: WorkloadOutput::default(),
        telemetry: Vec::new(),
        role: Default::default(),
        monitors: Vec::new(),
    }
}

pub fn bytes(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).expect("test file is readable")
}
