//! What the report knows about a plug-in: its descriptor's report hints, looked up by the
//! name its rows (`source`) or runs (`workload`) carry. The report never matches on a
//! plug-in's name; a monitor added to the registry with hints is worded and grouped
//! without an edit here. The descriptors, and the monitors' span sets, are the ones the
//! binary installed ([`perflab_core::catalog`]): the report links no plug-in.

use perflab_core::record::RunInfo;
use perflab_core::span_outline::SpanSetOutline;
use perflab_core::{catalog, Descriptor, ParamRoles, RowHints, WorkloadHints};

/// The descriptor of the monitor whose rows carry `source`.
pub fn monitor(source: &str) -> Option<&'static Descriptor> {
    #[cfg(test)]
    if let Some(d) = extra::find(source) {
        return Some(d);
    }
    #[cfg(test)]
    extra::install_monitors();
    catalog::monitor(source)
}

/// How `source`'s rows are worded and grouped; `None` for a source no monitor declares.
pub fn rows(source: &str) -> Option<&'static RowHints> {
    monitor(source).and_then(Descriptor::rows)
}

/// How a workload's results are shown; `None` for a workload perflab does not know (an
/// imported run).
pub fn results(workload: &str) -> Option<&'static WorkloadHints> {
    #[cfg(test)]
    if let Some(d) = extra::find(workload) {
        return d.results();
    }
    catalog::workload(workload).and_then(Descriptor::results)
}

/// The roles of `run`'s parameters (which are a CPU pair, which is a scan's size axis,
/// what unit each prints in): those the run stored (an importer declares them), else
/// those its workload declares; none for an imported run whose importer declared none.
/// Views find parameters by these, never by name.
pub fn param_roles(run: &RunInfo) -> ParamRoles {
    #[cfg(test)]
    if let Some(d) = extra::find(&run.workload) {
        if run.spec.param_roles.is_empty() && run.spec.imported.is_none() {
            return ParamRoles::from_specs(d.params);
        }
    }
    // The one rule, shared with the progress lines and the adaptive status.
    catalog::param_roles(&run.workload, &run.spec)
}

/// The roles of the parameters of several runs shown together, the first run's where
/// two disagree.
pub fn merged_param_roles<'a>(runs: impl IntoIterator<Item = &'a RunInfo>) -> ParamRoles {
    runs.into_iter()
        .fold(ParamRoles::default(), |r, run| r.merged(&param_roles(run)))
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
    #[cfg(test)]
    extra::install_monitors();
    let out = catalog::monitors().to_vec();
    #[cfg(test)]
    let out = [out, extra::all()].concat();
    out
}

/// The monitors' built-in span set called `name` (`netrx`), as an outline.
pub fn span_set(name: &str) -> Option<SpanSetOutline> {
    #[cfg(test)]
    extra::install_monitors();
    catalog::span_set(name)
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

    /// The real monitors, as the binary installs them (a dev-dependency only).
    pub(super) fn install_monitors() {
        perflab_monitors::install_catalog();
    }
}

#[cfg(test)]
mod tests {
    use perflab_core::record::{RunInfo, RunStatus};
    use perflab_core::{ParamRole, ParamRoles};

    fn imported_by(parser: &str, roles: serde_json::Value) -> RunInfo {
        RunInfo {
            id: 1,
            created_at: 1_700_000_000.0,
            study: "seed-002".into(),
            workload: format!("import:{parser}"),
            label: None,
            status: RunStatus::Complete,
            spec: serde_json::from_value(serde_json::json!({
                "primary_metric": "bandwidth_mib_s",
                "imported": {"file": "scan.md", "parser": parser, "notes": []},
                "param_roles": roles,
            }))
            .expect("a valid run spec"),
            fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
            unavailable: Vec::new(),
            planned: 1,
            done: 1,
            failed: 0,
            ineffective: 0,
            uid: String::new(),
        }
    }

    fn seed_scan_roles(parser: &str) -> ParamRoles {
        let mut roles = ParamRoles::default();
        if parser == "seed-scan" {
            roles.insert("size", ParamRole::SizeAxis);
        }
        roles
    }

    /// A seed-scan import stored before runs kept their roles still has its size axis
    /// (from its parser), so the report still scans it; a stored role wins.
    #[test]
    fn an_import_without_stored_roles_takes_its_parser_s() {
        perflab_core::catalog::install_import_roles(seed_scan_roles);
        let old = imported_by("seed-scan", serde_json::json!({}));
        assert_eq!(
            super::param_roles(&old).name_of(ParamRole::SizeAxis),
            Some("size")
        );
        let stored = imported_by("seed-scan", serde_json::json!({"kb": "size_axis"}));
        assert_eq!(
            super::param_roles(&stored).name_of(ParamRole::SizeAxis),
            Some("kb")
        );
        let other = imported_by("fio", serde_json::json!({}));
        assert!(super::param_roles(&other).is_empty());
    }
}
