//! A monitor no registry holds is worded and grouped by the report from its descriptor's
//! hints alone: the proof that adding a monitor needs no edit in `report`.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo};
use perflab_core::{
    Descriptor, KeyMatch, Kind, Needs, PerCpuLayout, PerCpuTable, ReportHints, RowHints,
    TelemetryRow, Unit, Wording, WorkloadOutput,
};

use crate::hints::extra;

/// A monitor no registry holds, declared only by its descriptor.
static VMSTAT: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: "fixture-vmstat",
    help: "fixture: /proc/vmstat deltas per CPU",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Prefix("pg"), "page {tail} events"),
            Wording::new(KeyMatch::Any, "{key} (vm)"),
        ],
        bookkeeping: &[KeyMatch::Exact("nr_free_pages")],
        per_cpu_table: Some(PerCpuTable {
            title: "VM Information",
            layout: PerCpuLayout::Counts {
                total: "Total VM events",
            },
        }),
        ..RowHints::PLAIN
    }),
};

fn rec(variant: &str, rep: u32, fault: f64, free: f64) -> MeasurementRecord {
    let row = |key: &str, cpu, v| TelemetryRow::new(VMSTAT.name, key, "", cpu, v, Unit::Count);
    MeasurementRecord {
        seq: rep,
        point: 0,
        params: Default::default(),
        variant: variant.into(),
        rep,
        status: MeasurementStatus::Ok,
        started_at: 0.0,
        elapsed_s: 1.0,
        output: WorkloadOutput::default(),
        telemetry: vec![
            row("pgfault", Some(1), fault + f64::from(rep)),
            row("nr_free_pages", Some(1), free + f64::from(rep)),
            row("pgfault", None, 2.0 * fault),
        ],
        role: Default::default(),
        monitors: Vec::new(),
    }
}

fn run() -> RunInfo {
    serde_json::from_value(serde_json::json!({
        "id": 1, "created_at": 0.0, "study": "s", "workload": "null",
        "label": null, "status": "complete", "spec": {}, "fingerprint": {},
        "unavailable": [], "planned": 10, "done": 10, "failed": 0
    }))
    .unwrap()
}

#[test]
fn an_unknown_monitor_is_worded_and_grouped_from_its_hints_alone() {
    let a: Vec<MeasurementRecord> = (0..6).map(|r| rec("a", r, 100.0, 5000.0)).collect();
    let b: Vec<MeasurementRecord> = (0..6).map(|r| rec("b", r, 1000.0, 9000.0)).collect();
    let (ra, rb): (Vec<&MeasurementRecord>, Vec<&MeasurementRecord>) =
        (a.iter().collect(), b.iter().collect());

    // Before its descriptor is declared the rows are plain `{source} {key}`.
    let plain = crate::tables::compare::changed::what_changed(&ra, &rb, &[1], 10);
    assert!(
        plain
            .iter()
            .any(|c| c.text.starts_with("fixture-vmstat pgfault on CPU 1:")),
        "{plain:?}"
    );
    assert!(
        crate::drilldown::parts::per_cpu_sections(&run(), &[("b", rb.clone())], &[1])
            .lines()
            .all(|l| !l.contains("VM Information"))
    );

    extra::declare(&VMSTAT);
    let changes = crate::tables::compare::changed::what_changed(&ra, &rb, &[1], 10);
    let texts: Vec<&str> = changes.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts.len(), 1, "the bookkeeping row is left out: {texts:?}");
    assert!(
        texts[0].starts_with("page fault events on CPU 1: +"),
        "{texts:?}"
    );
    let total = crate::tables::compare::changed::what_changed(&ra, &rb, &[], 10);
    assert!(
        total[0].text.starts_with("page fault events (all CPUs): +"),
        "{total:?}"
    );

    let text = crate::drilldown::parts::per_cpu_sections(&run(), &[("b", rb)], &[1]);
    assert!(text.contains("VM Information : b"), "{text}");
    assert!(text.contains("CPU 1: pgfault = 1002.5 times"), "{text}");
    assert!(
        text.contains("CPU 1: nr_free_pages = 9002.5 times"),
        "{text}"
    );
    assert!(text.contains("CPU 1: Total VM events = 10005\n"), "{text}");
}
