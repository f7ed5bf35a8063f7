//! Seed 001's span table on a VM path that cannot show the seed's spans: `vm-tap-novhost`
//! under TCG, where the vhost spans matched 10, 1 and 1 events for about 2,600 round
//! trips and the KVM span none. Those cells say "not measured (k events for n round
//! trips)" and why a span is absent, never a p50 as if it were the benchmark's.

use crate::common::catalog;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};
use perflab_report::spans::seed::SeedCell;
use perflab_report::{seed_span_table, span_table};
use perflab_report::{Format, Section};

/// (key, label, matched events, p50 in ns) per telemetry repetition.
const SPANS: [(&str, &str, f64, f64); 5] = [
    (
        "netrx.raise",
        "(a) NET_RX raised → softirq runs",
        5_200.0,
        2_000.0,
    ),
    (
        "netrx.vhost_wake",
        "(b) softirq NET_RX → vhost worker woken",
        10.0,
        22_020.0,
    ),
    (
        "netrx.vhost_run",
        "vhost worker woken → running",
        1.0,
        5_000.0,
    ),
    (
        "netrx.vhost_irq",
        "(c) vhost running → guest interrupt injected",
        1.0,
        9_000.0,
    ),
    (
        "netrx.guest_entry",
        "(d) KVM wakes the vCPU → vCPU enters guest",
        0.0,
        0.0,
    ),
];

fn run_info() -> RunInfo {
    catalog::install();
    RunInfo {
        id: 7,
        created_at: 1_700_000_000.0,
        study: "netpaths".into(),
        workload: "netrr".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "rtt_p50_us",
            "monitors": ["trace"],
            "variants": [{"name": "vm-tap-novhost", "knobs": [["netpath", "vm-tap-novhost"]]}],
            "param_roles": crate::common::catalog::roles_json("netrr"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
        unavailable: vec![],
        planned: 4,
        done: 4,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

fn records() -> Vec<MeasurementRecord> {
    let mut p = Params::default();
    p.0.insert("load_streams".into(), ParamValue::Int(0));
    (0..4u32)
        .map(|rep| {
            let mut telemetry = Vec::new();
            for (key, label, count, p50) in SPANS {
                let row = |stat: &str, v: f64, unit: Unit| {
                    TelemetryRow::new("trace", format!("{key}:{stat}"), label, None, v, unit)
                };
                telemetry.push(row("count", count, Unit::Count));
                if count > 0.0 {
                    telemetry.push(row("p50", p50, Unit::Nanoseconds));
                }
            }
            MeasurementRecord {
                seq: rep,
                point: 0,
                params: p.clone(),
                variant: "vm-tap-novhost".into(),
                rep,
                status: MeasurementStatus::Ok,
                started_at: 0.0,
                elapsed_s: 1.0,
                output: WorkloadOutput {
                    metrics: vec![
                        Metric::new("rtt_p50_us", 380.0, Unit::Microseconds, Better::Lower),
                        Metric::new("exchanges", 2_600.0, Unit::Count, Better::Neither),
                    ],
                    notes: vec!["the guest runs under TCG (software emulation, because \
                                 /dev/kvm is missing)"
                        .into()],
                    ..Default::default()
                },
                telemetry,
                role: Role::Telemetry,
                monitors: vec!["trace".into()],
            }
        })
        .collect()
}

#[test]
fn spans_with_too_few_events_or_none_say_so_and_why() {
    let t = seed_span_table(&run_info(), &records()).expect("netrr with spans");
    let cells: Vec<&SeedCell> = t.paths[0].spans.iter().map(|s| &s.cells[0]).collect();
    assert_eq!(cells[0], &SeedCell::Value(2.0));
    assert_eq!(
        cells[1],
        &SeedCell::TooFew {
            events: 10.0,
            round_trips: 2_600.0,
            why: Some("no vhost-net on this path")
        }
    );
    assert_eq!(
        cells[4],
        &SeedCell::Absent("TCG has no KVM exits or entries")
    );
    let text = t.render(Format::Text);
    assert!(!text.contains("22.02"), "{text}");
    insta::assert_snapshot!(text);

    // The breakdown above it says the same of its p50 column.
    let cfg = perflab_stats::StatsConfig::default();
    let b = span_table(&run_info(), &records(), &cfg).expect("spans recorded");
    let text = b.render(Format::Text);
    assert!(
        text.contains("not measured (10 events for 2600 round trips)") && !text.contains("22.02"),
        "{text}"
    );
}

/// A TCG host without the kvm module has no kvm:* events: the monitor skips (c) and (d)
/// with a note, and seed 001's table still has their rows, saying why, in the packet's
/// order.
#[test]
fn seed_spans_the_kernel_could_not_trace_keep_their_rows_and_say_why() {
    let mut ms = records();
    for m in &mut ms {
        m.telemetry.retain(|t| {
            !t.key.starts_with("netrx.vhost_irq") && !t.key.starts_with("netrx.guest_entry")
        });
        m.output.notes.extend([
            "trace: this kernel has no kvm:kvm_set_irq, kvm:kvm_msi_set_irq: span \
             netrx.vhost_irq is skipped"
                .to_string(),
            "trace: this kernel has no kvm:kvm_entry: span netrx.guest_entry is skipped"
                .to_string(),
        ]);
    }
    let t = seed_span_table(&run_info(), &ms).expect("netrr with spans");
    let rows: Vec<(&str, &SeedCell)> = t.paths[0]
        .spans
        .iter()
        .map(|s| (s.key.as_str(), &s.cells[0]))
        .collect();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[3].0, "netrx.vhost_irq");
    assert_eq!(
        rows[4],
        (
            "netrx.guest_entry",
            &SeedCell::NotTraced(
                "this kernel has no kvm:kvm_entry (no kvm module: a TCG host, or KVM not \
                 loaded)"
                    .into()
            )
        )
    );
    let text = t.render(Format::Text);
    assert!(
        text.contains("(d) KVM wakes the vCPU → vCPU enters guest")
            && text.contains("not traced: this kernel has no kvm:kvm_set_irq"),
        "{text}"
    );
    // A host path has no (b)-(d) to miss: nothing is added there.
    let mut host = run_info();
    host.spec = serde_json::from_value(serde_json::json!({
        "primary_metric": "rtt_p50_us",
        "monitors": ["trace"],
        "variants": [{"name": "vm-tap-novhost", "knobs": [["netpath", "veth"]]}],
        "param_roles": crate::common::catalog::roles_json("netrr"),
    }))
    .unwrap();
    let t = seed_span_table(&host, &ms).expect("netrr with spans");
    assert_eq!(t.paths[0].spans.len(), 3);
}
