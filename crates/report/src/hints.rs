//! What the report knows about a plug-in: its descriptor's report hints, looked up by the
//! name its rows (`source`) or runs (`workload`) carry. The report never matches on a
//! plug-in's name; a monitor added to the registry with hints is worded and grouped
//! without an edit here.

use perflab_core::{Descriptor, RowHints, WorkloadHints};

/// The descriptor of the monitor whose rows carry `source`.
pub fn monitor(source: &str) -> Option<&'static Descriptor> {
    #[cfg(test)]
    if let Some(d) = extra::find(source) {
        return Some(d);
    }
    perflab_monitors::descriptor(source)
}

/// How `source`'s rows are worded and grouped; `None` for a source no monitor declares.
pub fn rows(source: &str) -> Option<&'static RowHints> {
    monitor(source).and_then(Descriptor::rows)
}

/// How a workload's results are shown; `None` for a workload perflab does not know (an
/// imported run).
pub fn results(workload: &str) -> Option<&'static WorkloadHints> {
    perflab_workloads::by_name(workload).and_then(|w| w.info().results())
}

/// Whether runs of `workload` have the per-path latency table.
pub fn has_latency_table(workload: &str) -> bool {
    results(workload).is_some_and(|r| r.latency_table.is_some())
}

/// The title a workload gives a drill-down's result section, where it gives one.
pub fn result_title(workload: &str) -> Option<&'static str> {
    results(workload).and_then(|r| r.result_title)
}

/// Every monitor, in registry order (the order sections and figures appear in).
pub fn monitors() -> Vec<&'static Descriptor> {
    let out: Vec<&'static Descriptor> = perflab_monitors::registry()
        .iter()
        .map(|e| e.descriptor)
        .collect();
    #[cfg(test)]
    let out = [out, extra::all()].concat();
    out
}

/// Monitors tests declare for one thread: the report must render them from their hints
/// alone, as it would a monitor added to the registry.
#[cfg(test)]
pub(crate) mod extra {
    use std::cell::RefCell;

    use perflab_core::Descriptor;

    thread_local! {
        static EXTRA: RefCell<Vec<&'static Descriptor>> = const { RefCell::new(Vec::new()) };
    }

    /// Declares `d` for the rest of this test thread.
    pub(crate) fn declare(d: &'static Descriptor) {
        EXTRA.with(|e| e.borrow_mut().push(d));
    }

    pub(super) fn find(source: &str) -> Option<&'static Descriptor> {
        EXTRA.with(|e| e.borrow().iter().copied().find(|d| d.name == source))
    }

    pub(super) fn all() -> Vec<&'static Descriptor> {
        EXTRA.with(|e| e.borrow().clone())
    }
}

#[cfg(test)]
mod tests {
    use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo};
    use perflab_core::{
        Descriptor, KeyMatch, Kind, PerCpuLayout, PerCpuTable, ReportHints, RowHints, TelemetryRow,
        Unit, Wording, WorkloadOutput,
    };

    use super::extra;

    /// A monitor no registry holds, declared only by its descriptor.
    static VMSTAT: Descriptor = Descriptor {
        kind: Kind::Monitor,
        name: "fixture-vmstat",
        help: "fixture: /proc/vmstat deltas per CPU",
        params: &[],
        needs: &[],
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
        let plain = crate::changed::what_changed(&ra, &rb, &[1], 10);
        assert!(
            plain
                .iter()
                .any(|c| c.text.starts_with("fixture-vmstat pgfault on CPU 1:")),
            "{plain:?}"
        );
        assert!(
            crate::sections::per_cpu_sections(&run(), &[("b", rb.clone())], &[1])
                .lines()
                .all(|l| !l.contains("VM Information"))
        );

        extra::declare(&VMSTAT);
        let changes = crate::changed::what_changed(&ra, &rb, &[1], 10);
        let texts: Vec<&str> = changes.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts.len(), 1, "the bookkeeping row is left out: {texts:?}");
        assert!(
            texts[0].starts_with("page fault events on CPU 1: +"),
            "{texts:?}"
        );
        let total = crate::changed::what_changed(&ra, &rb, &[], 10);
        assert!(
            total[0].text.starts_with("page fault events (all CPUs): +"),
            "{total:?}"
        );

        let text = crate::sections::per_cpu_sections(&run(), &[("b", rb)], &[1]);
        assert!(text.contains("VM Information : b"), "{text}");
        assert!(text.contains("CPU 1: pgfault = 1002.5 times"), "{text}");
        assert!(
            text.contains("CPU 1: nr_free_pages = 9002.5 times"),
            "{text}"
        );
        assert!(text.contains("CPU 1: Total VM events = 10005\n"), "{text}");
    }
}
