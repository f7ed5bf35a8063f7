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
/// imported run). The descriptors are the ones the binary installed
/// ([`perflab_core::catalog`]): the report does not link the workloads.
pub fn results(workload: &str) -> Option<&'static WorkloadHints> {
    #[cfg(test)]
    if let Some(d) = extra::find(workload) {
        return d.results();
    }
    perflab_core::catalog::workload(workload).and_then(Descriptor::results)
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

/// Monitors (and workloads) tests declare for one thread: the report must render them
/// from their hints alone, as it would a plug-in added to a registry.
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
