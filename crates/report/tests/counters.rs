//! The counters table: seed 003's bandwidth with its cache counters beside it, on a
//! machine with a PMU (hardware columns) and on one without (software columns, the
//! hardware events named once as not counted, never shown as zeros).

use crate::common;

use common::xfer;
use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::{Better, Metric, TelemetryRow, Unit, WorkloadOutput};
use perflab_report::counter_table;
use perflab_report::{Format, Section};

const NO_PMU: &str = "No such file or directory (os error 2): no PMU, or the PMU lacks this \
                      event (a VM without a virtual PMU?)";

fn row(key: &str, value: f64, unit: Unit) -> TelemetryRow {
    TelemetryRow::new("counters", key, key, None, value, unit)
}

/// Four repetitions of two variants of a 512 MiB fill; `pmu` adds the hardware rows.
fn records(pmu: bool) -> Vec<MeasurementRecord> {
    let mut out = Vec::new();
    for rep in 0..4u32 {
        for (variant, mib_s, llc_per_byte) in
            [("base", 16000.0, 1.0 / 64.0), ("pir", 17000.0, 1.0 / 80.0)]
        {
            let jitter = 1.0 + f64::from(rep) * 0.001;
            let mut telemetry = vec![
                row("task-clock", 2000.0 * jitter, Unit::Milliseconds),
                row("context-switches", 12.0 + f64::from(rep), Unit::Count),
                row("cpu-migrations", 0.0, Unit::Count),
                row("page-faults", 131_072.0, Unit::Count),
                row("page-faults:per_byte", 1.0 / 4096.0, Unit::Ratio),
                // A per-CPU row is not a total and stays out of the table.
                TelemetryRow::new("counters", "page-faults", "", Some(0), 5.0, Unit::Count),
            ];
            if pmu {
                telemetry.extend([
                    row("cycles", 6.0e9 * jitter, Unit::Count),
                    row("instructions", 3.0e9, Unit::Count),
                    row("ipc", 0.5 / jitter, Unit::Ratio),
                    row("LLC-miss_rate", 40.0, Unit::Percent),
                    row("LLC-load-misses:per_byte", llc_per_byte, Unit::Ratio),
                ]);
            }
            let notes = if pmu {
                vec![]
            } else {
                ["cycles", "instructions", "LLC-load-misses"]
                    .iter()
                    .map(|e| format!("counters: {e} unsupported: {NO_PMU}"))
                    .collect()
            };
            out.push(MeasurementRecord {
                seq: out.len() as u32,
                point: 0,
                params: xfer::params("fill", 512 * 1024),
                variant: variant.into(),
                rep,
                status: MeasurementStatus::Ok,
                started_at: 0.0,
                elapsed_s: 2.0,
                output: WorkloadOutput {
                    metrics: vec![Metric::new(
                        "bandwidth_mib_s",
                        mib_s * jitter,
                        Unit::MibPerSecond,
                        Better::Higher,
                    )],
                    notes,
                    ..Default::default()
                },
                telemetry,
                role: Default::default(),
                monitors: Vec::new(),
            });
        }
    }
    out
}

#[test]
fn with_a_pmu_the_cache_columns_sit_beside_the_bandwidth() {
    let t = counter_table(&xfer::run(1, "irq-fill"), &records(true)).expect("counters recorded");
    let text = t.render(Format::Text);
    insta::assert_snapshot!("counters_pmu", text);
    let keys: Vec<&str> = t.columns.iter().map(|(k, _)| k.as_str()).collect();
    assert!(
        keys.contains(&"ipc") && keys.contains(&"LLC-load-misses:per_byte"),
        "{keys:?}"
    );
    // One LLC miss per 64 bytes is 16 per KiB.
    let llc = keys
        .iter()
        .position(|k| *k == "LLC-load-misses:per_byte")
        .unwrap();
    assert_eq!(t.rows[0].values[llc], Some(16.0));
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}

#[test]
fn without_a_pmu_the_hardware_events_are_named_once_not_zeroed() {
    let t = counter_table(&xfer::run(1, "irq-fill"), &records(false)).expect("counters recorded");
    let text = t.render(Format::Text);
    insta::assert_snapshot!("counters_no_pmu", text);
    assert!(!t.columns.iter().any(|(k, _)| k == "cycles" || k == "ipc"));
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(
        t.notes[0].starts_with("not counted here: cycles, instructions, LLC-load-misses (No such"),
        "{}",
        t.notes[0]
    );
    // 4 KiB pages: 256 faults per MiB moved.
    let faults = t
        .columns
        .iter()
        .position(|(k, _)| k == "page-faults:per_byte")
        .unwrap();
    assert_eq!(t.rows[1].values[faults], Some(256.0));
    // Medians over the 4 repetitions: 12, 13, 14, 15 context switches → 13.5.
    let cs = t
        .columns
        .iter()
        .position(|(k, _)| k == "context-switches")
        .unwrap();
    assert_eq!(t.rows[0].values[cs], Some(13.5));
}

#[test]
fn no_counters_no_table() {
    let mut ms = records(false);
    for m in &mut ms {
        m.telemetry.clear();
    }
    assert!(counter_table(&xfer::run(1, "x"), &ms).is_none());
}
