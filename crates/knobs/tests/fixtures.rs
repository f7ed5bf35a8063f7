//! The knobs on writable copies of the fixture trees of whole machines
//! (`tests/fixtures/<host>`, see its README), so that they meet real layouts: 16 x86 CPUs
//! with intel_idle, 32 POWER CPUs with snooze and stop states, a VM without cpuidle.

use crate::common;

use std::fs;

use common::{applied, copy_parts, orphan_entries, refused, snapshot};
use perflab_knobs::{parse_setting, restore_pending, Journal, Settings};
use perflab_sys::{cpuidle, SysRoot, Topology};

/// Only the cpu tree and the PM-QoS device: the rest of the fixture is read-only input
/// for other crates and slow to compare.
fn writable_copy(name: &str) -> (tempfile::TempDir, SysRoot, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    copy_parts(name, &["sys/devices/system/cpu", "dev"], &root);
    let journal = Journal::open(dir.path().join("journal.json")).unwrap();
    (dir, SysRoot::at(root), journal)
}

/// The enabled state names of every online CPU.
fn enabled(sys: &SysRoot) -> Vec<Vec<String>> {
    Topology::read(sys)
        .unwrap()
        .online
        .iter()
        .map(|&cpu| {
            cpuidle::states(sys, cpu)
                .unwrap()
                .into_iter()
                .filter(|s| !s.disabled)
                .map(|s| s.name)
                .collect()
        })
        .collect()
}

fn each_cpu(cpus: usize, names: &[&str]) -> Vec<Vec<String>> {
    vec![names.iter().map(|s| s.to_string()).collect(); cpus]
}

#[test]
fn x86_intel_idle_modes_apply_and_restore_byte_for_byte() {
    let (_dir, sys, journal) = writable_copy("x86-intel-idle");
    let before = snapshot(&sys);
    let cases = [
        ("cpuidle=poll-only", each_cpu(16, &["POLL"])),
        ("cpuidle=states:C1,C1E", each_cpu(16, &["C1", "C1E"])),
        ("cpuidle=all", each_cpu(16, &["POLL", "C1", "C1E", "C6"])),
    ];
    for (setting, want) in cases {
        let knob = parse_setting(setting).unwrap();
        knob.check(&sys).unwrap();
        let guard = knob.apply(&sys, &journal).unwrap();
        assert_eq!(enabled(&sys), want, "{setting}");
        // The mode is a fact of every measurement (the trace monitor reads it).
        let mode = setting.trim_start_matches("cpuidle=").to_string();
        assert!(
            guard.facts().contains(&("cpuidle.mode".to_string(), mode)),
            "{setting}: {:?}",
            guard.facts()
        );
        drop(guard);
        assert_eq!(snapshot(&sys), before, "{setting} restored");
    }
}

#[test]
fn power_snooze_is_the_polling_state() {
    let (_dir, sys, journal) = writable_copy("power-smt4");
    // Without the PM-QoS device, pmqos is unavailable, and the cpuidle knob applied
    // before it must be undone.
    fs::remove_file(sys.path("dev/cpu_dma_latency")).unwrap();
    let before = snapshot(&sys);
    let settings = Settings::parse(&["cpuidle=poll-only", "pmqos=0"]).unwrap();
    let why = settings.check(&sys).unwrap_err().reason;
    assert!(
        why.starts_with("pmqos=0: ") && why.contains("cpu_dma_latency is missing"),
        "{why}"
    );
    assert!(settings.apply(&sys, &journal).is_err());
    assert_eq!(snapshot(&sys), before);

    let guard = applied(&sys, "cpuidle=poll-only", &journal);
    assert_eq!(enabled(&sys), each_cpu(32, &["snooze"]));
    // Killed here: the journal brings every file back.
    std::mem::forget(guard);
    orphan_entries(journal.path());
    let report = restore_pending(journal.path()).unwrap();
    assert_eq!(report.restored.len(), 32 * 6);
    assert_eq!(snapshot(&sys), before);
}

#[test]
fn a_vm_without_cpuidle_says_so() {
    let (_dir, sys, journal) = writable_copy("kvm-2vcpu");
    let why = refused(&sys, "cpuidle=poll-only");
    assert_eq!(why, "no cpuidle driver");
    // "all" holds already on a machine that idles without a driver, and writes nothing.
    let before = snapshot(&sys);
    let all = parse_setting("cpuidle=all").unwrap();
    all.check(&sys).unwrap();
    all.apply(&sys, &journal).unwrap().restore().unwrap();
    assert_eq!(snapshot(&sys), before);
    // The fixture's PM-QoS device is a regular file holding the limit the machine had:
    // the knob writes its own and puts the original back, as the device would forget it.
    let before = snapshot(&sys);
    let guard = applied(&sys, "pmqos=0", &journal);
    assert_eq!(fs::read(sys.path("dev/cpu_dma_latency")).unwrap(), [0; 4]);
    guard.restore().unwrap();
    assert_eq!(snapshot(&sys), before);
    assert!(journal.entries().unwrap().is_empty());
}
