//! The interrupts on the fill's CPU per variant (seed 003: did the interrupt-handling
//! change help, and what did the interrupts do): LOC first, device rows by their action
//! name, rows that never moved on that CPU left out, and a Total.

use crate::common;

use common::xfer;
use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::{Better, Metric, TelemetryRow, Unit, WorkloadOutput};
use perflab_report::irq_cpu_table;
use perflab_report::{Format, Section};

fn irq(key: &str, desc: &str, cpu: u32, value: f64) -> TelemetryRow {
    TelemetryRow::new("interrupts", key, desc, Some(cpu), value, Unit::Count)
}

/// Four repetitions of a timer-paced fill on CPU 2 under two interrupt settings: `base`
/// takes a NIC's receive interrupts on CPU 2, `irqs-away` has them steered to CPU 3.
fn records() -> Vec<MeasurementRecord> {
    let mut out = Vec::new();
    for rep in 0..4u32 {
        for (variant, rx_here) in [("base", 900.0), ("irqs-away", 0.0)] {
            let r = f64::from(rep);
            let telemetry = vec![
                irq(
                    "41",
                    "PCI-MSIX-0000:00:04.0 1-edge virtio3-rx",
                    2,
                    rx_here + r,
                ),
                irq(
                    "41",
                    "PCI-MSIX-0000:00:04.0 1-edge virtio3-rx",
                    3,
                    900.0 - rx_here,
                ),
                irq("LOC", "Local timer interrupts", 2, 40_000.0 + r),
                irq("RES", "Rescheduling interrupts", 2, 12.0),
                // Never moved on CPU 2: left out.
                irq("CAL", "Function call interrupts", 2, 0.0),
                irq("LOC", "Local timer interrupts", 3, 500.0),
            ];
            out.push(MeasurementRecord {
                seq: out.len() as u32,
                point: 0,
                params: xfer::params("fill", 1024),
                variant: variant.into(),
                rep,
                status: MeasurementStatus::Ok,
                started_at: 0.0,
                elapsed_s: 2.0,
                output: WorkloadOutput {
                    metrics: vec![Metric::new(
                        "bandwidth_mib_s",
                        16000.0,
                        Unit::MibPerSecond,
                        Better::Higher,
                    )],
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
fn the_fill_cpus_interrupts_per_variant() {
    let t = irq_cpu_table(&xfer::run(1, "irq-fill"), &records()).expect("interrupts recorded");
    assert_eq!(t.cpu, 2);
    insta::assert_snapshot!(t.render(Format::Text));
}

#[test]
fn no_table_where_the_workload_was_not_pinned() {
    let mut ms = records();
    for m in &mut ms {
        m.params
            .0
            .insert("cpu".into(), perflab_core::ParamValue::Int(-1));
    }
    assert!(irq_cpu_table(&xfer::run(1, "irq-fill"), &ms).is_none());
}
