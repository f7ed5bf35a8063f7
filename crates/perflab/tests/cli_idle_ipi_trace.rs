//! End-to-end, as root: idle-ipi with `--monitors trace` (idlewake, picked because its
//! variants set idle states) leaves per-idle-state
//! spans (`idlewake.…@STATE`) in the store and seed 004's per-pair table in the report.
//! Skipped, with the reason, without root, without cpuidle states, or where no CPU went
//! idle during the run (a machine kept busy by other jobs has nothing to split).

use crate::common;

use common::{run_id, text, Lab};

#[test]
fn idle_ipi_with_idlewake_stores_spans_per_idle_state_needs_root_and_idle_states() {
    let _host = crate::common::host_settings();
    if !perflab_testkit::have_root("disabling idle states and tracing") {
        return;
    }
    let host = perflab_sys::SysRoot::host();
    if !host.exists("sys/devices/system/cpu/cpu0/cpuidle/state0/name") {
        perflab_testkit::skip("idle states", "this machine has no cpuidle states");
        return;
    }
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        perflab_testkit::skip("2 CPUs", "a cross-CPU wake-up needs two CPUs");
        return;
    }
    let lab = Lab::new();
    let out_dir = lab.dir.path().join("summary");
    let o = lab.run(&[
        "run",
        "idle-ipi",
        "--quick",
        "--reps",
        "2",
        "--partners",
        "1",
        "--monitors",
        "trace,cpuidle",
        "--telemetry-reps",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (stdout, err) = text(&o);
    let id = run_id(&err);
    let doc = lab.export_named(&id);
    let keys: Vec<String> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["telemetry"].as_array().cloned().unwrap_or_default())
        .filter(|t| t["source"] == "trace")
        .filter_map(|t| t["key"].as_str().map(String::from))
        .collect();
    assert!(
        keys.iter().any(|k| k == "idlewake.sched:count"),
        "no idlewake rows\nstdout: {stdout}\nstderr: {err}"
    );
    let entered_idle = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["telemetry"].as_array().cloned().unwrap_or_default())
        .any(|t| {
            t["source"] == "trace"
                && t["key"] == "idlewake.residency:count"
                && t["value"].as_f64() > Some(0.0)
        });
    if !entered_idle {
        perflab_testkit::skip(
            "idle CPUs",
            "no CPU entered an idle state while traced (the machine is busy)",
        );
        return;
    }
    let per_state: Vec<&String> = keys
        .iter()
        .filter(|k| k.starts_with("idlewake.residency@") && k.ends_with(":count"))
        .collect();
    eprintln!("per-state rows: {per_state:?}");
    assert!(!per_state.is_empty(), "{keys:?}");
    // The table is there; its `left STATE` rows need wake-ups out of idle in measurements
    // that count (a poll-only one whose disabled state was entered does not).
    assert!(
        stdout.contains("The wake-up in parts, per CPU pair"),
        "{stdout}"
    );
}
