//! The workloads' report hints these tests need, installed as the binary installs the
//! real ones (`perflab_workloads::install_catalog`): the report does not link the
//! workloads, so its tests declare the hints of the two workloads whose runs they render
//! with a workload-specific part (ctxsw's drill-down title, netrr's latency table,
//! gpuxfer's copy engines). The
//! values are the ones crates/workloads/src/{ctxsw,netrr,gpuxfer}/mod.rs declare. The monitors'
//! descriptors and span sets are the real ones (a dev-dependency), installed as the
//! binary installs them (`perflab_monitors::install_catalog`).

use perflab_core::{Descriptor, Kind, LatencyTableHints, Needs, ReportHints, WorkloadHints};

static CTXSW: Descriptor = Descriptor {
    kind: Kind::Workload,
    name: "ctxsw",
    help: "",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "round_trips_per_s",
        result_title: Some("Context Switch Information"),
        latency_table: None,
        workers: perflab_core::note::Workers::Threads,
    }),
};

static NETRR: Descriptor = Descriptor {
    kind: Kind::Workload,
    name: "netrr",
    help: "",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "rtt_p50_us",
        result_title: None,
        latency_table: Some(LatencyTableHints {
            histogram: "rtt",
            softirqs: "softirqs",
        }),
        workers: perflab_core::note::Workers::Threads,
    }),
};

/// gpuxfer's: its thread records are copy engines (the parallelism verdict's words).
static GPUXFER: Descriptor = Descriptor {
    kind: Kind::Workload,
    name: "gpuxfer",
    help: "",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "bandwidth_mib_s",
        result_title: None,
        latency_table: None,
        workers: perflab_core::note::Workers::CopyEngines,
    }),
};

/// Installs the hints (once per test process; later calls do nothing).
pub fn install() {
    perflab_core::catalog::install_workloads(vec![&CTXSW, &NETRR, &GPUXFER]);
    install_monitors();
}

/// Installs the monitors only, for fixtures whose runs are rendered without workload
/// hints.
pub fn install_monitors() {
    perflab_monitors::install_catalog();
}

/// The roles crates/workloads/src/{ctxsw,xfer,gpuxfer,netrr}/mod.rs declare on their
/// parameters, as a run's spec stores them (`param_roles`): the report finds a CPU pair, a
/// pinned CPU and a scan's size axis by these, never by name, so a fixture's run declares
/// them itself (the catalog is installed once per process, by whichever test is first).
pub fn roles_json(workload: &str) -> serde_json::Value {
    match workload {
        "ctxsw" => serde_json::json!({"cpu_a": "cpu_a", "cpu_b": "cpu_b"}),
        "xfer" => serde_json::json!({"size": "size_axis", "cpu": "cpu"}),
        "gpuxfer" => serde_json::json!({"size": "size_axis"}),
        "netrr" => serde_json::json!({
            "size": "size_axis",
            "client_cpu": "cpu",
            "server_cpu": "cpu",
        }),
        _ => serde_json::json!({}),
    }
}
