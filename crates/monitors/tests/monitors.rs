//! Monitors run on writable copies of the fixture trees: start, change a counter file the
//! way the kernel would, finish, and check the deltas; plus one run on the live host.

use std::fs;
use std::path::Path;

use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unit};
use perflab_monitors::*;
use perflab_sys::SysRoot;
use perflab_testkit::copy_tree;

/// A writable copy of the `parts` (subdirectories) of a fixture tree; copying only what a
/// monitor reads keeps these tests fast on slow disks.
fn fixture(name: &str, parts: &[&str]) -> (tempfile::TempDir, SysRoot) {
    let dir = tempfile::tempdir().unwrap();
    let src = perflab_testkit::fixture(name);
    for part in parts {
        copy_tree(&src.join(part), &dir.path().join(part));
    }
    let sys = SysRoot::at(dir.path());
    (dir, sys)
}

/// Adds `by` to the count of the `nth` row named `name` (per-CPU table files) on `cpu`,
/// rewriting the line in /proc/interrupts' layout.
fn bump_table(root: &Path, file: &str, name: &str, nth: usize, cpu: u32, by: u64) {
    let path = root.join(file);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let cpus: Vec<u32> = lines[0]
        .split_whitespace()
        .map(|w| w.trim_start_matches("CPU").parse().unwrap())
        .collect();
    let mut seen = 0;
    for line in lines.iter_mut().skip(1) {
        let (n, rest) = line.split_once(':').unwrap();
        if n.trim() != name {
            continue;
        }
        if seen < nth {
            seen += 1;
            continue;
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let ncounts = words
            .iter()
            .take(cpus.len())
            .take_while(|w| w.parse::<u64>().is_ok())
            .count();
        let mut counts: Vec<u64> = words[..ncounts]
            .iter()
            .map(|w| w.parse().unwrap())
            .collect();
        let col = if ncounts == 1 {
            0
        } else {
            cpus.iter().position(|&c| c == cpu).unwrap()
        };
        counts[col] += by;
        let desc = words[ncounts..].join(" ");
        *line = format!(
            "{:>4}: {}  {desc}",
            n.trim(),
            counts
                .iter()
                .map(|c| format!("{c:>10}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        fs::write(&path, lines.join("\n") + "\n").unwrap();
        return;
    }
    panic!("no row {name} #{nth} in {file}");
}

fn find<'a>(
    rows: &'a [TelemetryRow],
    key: &str,
    label: Option<&str>,
    cpu: Option<u32>,
) -> &'a TelemetryRow {
    rows.iter()
        .find(|r| r.key == key && r.cpu == cpu && label.is_none_or(|l| r.label == l))
        .unwrap_or_else(|| panic!("no row {key} {label:?} cpu {cpu:?}"))
}

fn unavailable(r: Result<(), MonitorError>) -> String {
    match r {
        Err(MonitorError::Unavailable(u)) => {
            assert!(u.hint.is_some(), "{} has no hint", u.reason);
            u.reason
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

const TIMER_DEV: &str = "Local timer interrupts for timer event device";
const TIMER_OTHERS: &str = "Local timer interrupts for others";

#[test]
fn interrupts_on_power_keep_both_loc_rows_apart() {
    let (dir, sys) = fixture("power-smt4", &["proc"]);
    let ctx = MeasureCtx::new(sys, vec![4, 24]);
    let mut m = InterruptsMonitor::default();
    m.start(&ctx).unwrap();
    bump_table(dir.path(), "proc/interrupts", "LOC", 1, 24, 500);
    bump_table(dir.path(), "proc/interrupts", "WDG", 0, 4, 7);
    bump_table(dir.path(), "proc/interrupts", "DBL", 0, 31, 9);
    // An interrupt registered during the measurement counts from zero.
    let path = dir.path().join("proc/interrupts");
    let mut text = fs::read_to_string(&path).unwrap();
    let counts: String = (0..32)
        .map(|c| format!(" {:>10}", if c == 24 { 3 } else { 0 }))
        .collect();
    text.push_str(&format!(" 99:{counts}   XIVE-IRQ 4000 Edge      new-dev\n"));
    fs::write(&path, text).unwrap();
    let rows = m.finish(&ctx).unwrap();

    assert!(rows
        .iter()
        .all(|r| r.source == "interrupts" && r.unit == Unit::Count));
    assert_eq!(
        find(&rows, "LOC", Some(TIMER_OTHERS), Some(24)).value,
        500.0
    );
    assert_eq!(find(&rows, "LOC", Some(TIMER_DEV), Some(24)).value, 0.0);
    assert_eq!(find(&rows, "LOC", Some(TIMER_OTHERS), None).value, 500.0);
    assert_eq!(find(&rows, "WDG", None, Some(4)).value, 7.0);
    assert_eq!(
        find(&rows, "WDG", None, Some(4)).label,
        "Watchdog soft-NMI interrupts"
    );
    assert_eq!(
        find(&rows, "DBL", None, Some(4)).value,
        0.0,
        "zero deltas are reported too"
    );
    assert_eq!(
        find(&rows, "DBL", None, None).value,
        9.0,
        "totals cover all CPUs"
    );
    assert!(
        !rows.iter().any(|r| r.cpu == Some(31)),
        "only the measurement's CPUs"
    );
    assert_eq!(find(&rows, "99", None, Some(24)).value, 3.0);
    // 19 rows at finish (8 devices, the new one, 10 arch rows), each for CPU 4, CPU 24 and
    // the total.
    assert_eq!(rows.len(), 19 * 3);
}

#[test]
fn interrupts_total_only_rows_have_no_per_cpu_share() {
    let (dir, sys) = fixture("x86-intel-idle", &["proc"]);
    let ctx = MeasureCtx::new(sys, vec![1]);
    let mut m = InterruptsMonitor::default();
    m.start(&ctx).unwrap();
    bump_table(dir.path(), "proc/interrupts", "ERR", 0, 0, 3);
    bump_table(dir.path(), "proc/interrupts", "RES", 0, 1, 11);
    let rows = m.finish(&ctx).unwrap();
    assert_eq!(find(&rows, "ERR", None, None).value, 3.0);
    assert!(!rows.iter().any(|r| r.key == "ERR" && r.cpu.is_some()));
    assert_eq!(
        find(&rows, "RES", Some("Rescheduling interrupts"), Some(1)).value,
        11.0
    );
}

#[test]
fn interrupts_restart_clears_the_old_snapshot() {
    let (dir, sys) = fixture("kvm-2vcpu", &["proc", "sys"]);
    let ctx = MeasureCtx::new(sys, vec![0, 1]);
    let mut m = InterruptsMonitor::default();
    m.start(&ctx).unwrap();
    bump_table(dir.path(), "proc/interrupts", "LOC", 0, 0, 1000);
    m.start(&ctx).unwrap();
    bump_table(dir.path(), "proc/interrupts", "LOC", 0, 0, 5);
    let rows = m.finish(&ctx).unwrap();
    assert_eq!(find(&rows, "LOC", None, Some(0)).value, 5.0);
    assert!(
        matches!(m.finish(&ctx), Err(MonitorError::Failed(_))),
        "finish needs a new start"
    );
}

#[test]
fn softirqs_deltas() {
    let (dir, sys) = fixture("kvm-2vcpu", &["proc", "sys"]);
    let ctx = MeasureCtx::new(sys, vec![1]);
    let mut m = SoftirqsMonitor::default();
    m.start(&ctx).unwrap();
    bump_table(dir.path(), "proc/softirqs", "TIMER", 0, 1, 250);
    bump_table(dir.path(), "proc/softirqs", "NET_RX", 0, 0, 4);
    let rows = m.finish(&ctx).unwrap();
    assert_eq!(find(&rows, "TIMER", None, Some(1)).value, 250.0);
    assert_eq!(find(&rows, "NET_RX", None, Some(1)).value, 0.0);
    assert_eq!(find(&rows, "NET_RX", None, None).value, 4.0);
    assert_eq!(rows.len(), 10 * 2);
}

#[test]
fn cpu_time_in_milliseconds() {
    let (dir, sys) = fixture("x86-intel-idle", &["proc"]);
    let ctx = MeasureCtx::new(sys, vec![3]);
    let mut m = CpuTimeMonitor::default();
    m.start(&ctx).unwrap();
    let path = dir.path().join("proc/stat");
    let text = fs::read_to_string(&path).unwrap();
    let bumped: Vec<String> = text
        .lines()
        .map(|l| {
            let mut w: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            if w[0] == "cpu" || w[0] == "cpu3" {
                w[1] = (w[1].parse::<u64>().unwrap() + 200).to_string(); // user
                w[3] = (w[3].parse::<u64>().unwrap() + 50).to_string(); // system
            }
            w.join(" ")
        })
        .collect();
    fs::write(&path, bumped.join("\n") + "\n").unwrap();
    let rows = m.finish(&ctx).unwrap();
    let hz = cpu_time::user_hz() as f64;
    assert_eq!(
        find(&rows, "user", None, Some(3)).value,
        200.0 * 1000.0 / hz
    );
    assert_eq!(find(&rows, "system", None, None).value, 50.0 * 1000.0 / hz);
    assert_eq!(find(&rows, "idle", None, Some(3)).value, 0.0);
    assert!(rows.iter().all(|r| r.unit == Unit::Milliseconds));
    assert_eq!(rows.len(), 8 * 2);
}

fn add(root: &Path, rel: &str, by: u64) {
    let p = root.join(rel);
    let v: u64 = fs::read_to_string(&p).unwrap().trim().parse().unwrap();
    fs::write(&p, format!("{}\n", v + by)).unwrap();
}

#[test]
fn cpuidle_deltas_on_power() {
    let (dir, sys) = fixture("power-smt4", &["sys/devices/system/cpu"]);
    let ctx = MeasureCtx::new(sys, vec![4, 24]);
    let mut m = CpuidleMonitor::default();
    m.start(&ctx).unwrap();
    let st =
        |cpu: u32, i: u32, f: &str| format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{i}/{f}");
    add(dir.path(), &st(24, 4, "usage"), 5);
    add(dir.path(), &st(24, 4, "time"), 1000);
    add(dir.path(), &st(31, 0, "usage"), 2);
    fs::write(dir.path().join(st(4, 2, "disable")), "1\n").unwrap();
    let rows = m.finish(&ctx).unwrap();
    assert!(rows.iter().all(|r| r.source == "cpuidle"));
    assert_eq!(
        find(&rows, "stop2:usage", Some("stop2"), Some(24)).value,
        5.0
    );
    let time = find(&rows, "stop2:time", None, Some(24));
    assert_eq!((time.value, time.unit), (1000.0, Unit::Microseconds));
    assert_eq!(find(&rows, "stop2:usage", None, Some(4)).value, 0.0);
    assert_eq!(find(&rows, "stop0:disabled", None, Some(4)).value, 1.0);
    assert_eq!(find(&rows, "stop0:disabled", None, Some(24)).value, 0.0);
    assert_eq!(
        find(&rows, "snooze:usage", None, None).value,
        2.0,
        "totals span all CPUs"
    );
    assert!(find(&rows, "stop2:disabled", None, Some(4)).unit == Unit::Count);
    assert!(!rows
        .iter()
        .any(|r| r.key.ends_with(":disabled") && r.cpu.is_none()));
    // 7 states × 3 keys × 2 CPUs, plus 7 × 2 totals.
    assert_eq!(rows.len(), 7 * 3 * 2 + 7 * 2);
}

#[test]
fn cpuidle_on_intel_labels_with_desc() {
    let (_dir, sys) = fixture("x86-intel-idle", &["sys/devices/system/cpu"]);
    let ctx = MeasureCtx::new(sys, vec![2]);
    let mut m = CpuidleMonitor::default();
    m.start(&ctx).unwrap();
    let rows = m.finish(&ctx).unwrap();
    assert_eq!(
        find(&rows, "POLL:usage", None, Some(2)).label,
        "CPUIDLE CORE POLL IDLE"
    );
    assert_eq!(find(&rows, "C6:time", None, None).label, "MWAIT 0x20");
}

#[test]
fn missing_sources_are_unavailable_with_a_hint() {
    let (_dir, sys) = fixture("kvm-2vcpu", &["proc", "sys"]);
    let ctx = MeasureCtx::new(sys, vec![0]);
    let reason = unavailable(CpuidleMonitor::default().start(&ctx));
    assert!(reason.contains("no cpuidle driver"), "{reason}");

    let empty = tempfile::tempdir().unwrap();
    let ctx = MeasureCtx::new(SysRoot::at(empty.path()), vec![0]);
    assert!(unavailable(InterruptsMonitor::default().start(&ctx)).contains("/proc/interrupts"));
    unavailable(SoftirqsMonitor::default().start(&ctx));
    unavailable(CpuTimeMonitor::default().start(&ctx));
    unavailable(CpuidleMonitor::default().start(&ctx));
}

#[test]
fn placement_reports_thread_records() {
    let ctx = MeasureCtx::new(SysRoot::host(), vec![]);
    let mut m = PlacementMonitor;
    m.start(&ctx).unwrap();
    let tracker = ctx.threads.clone();
    std::thread::spawn(move || {
        let mut p = tracker.begin("waker", None);
        p.sample_cpu();
        p.finish(&tracker, None);
    })
    .join()
    .unwrap();
    let rows = m.finish(&ctx).unwrap();
    let rec = &ctx.threads.snapshot()[0];
    let samples: f64 = rows
        .iter()
        .filter(|r| r.key == "waker")
        .map(|r| r.value)
        .sum();
    // begin, the explicit sample and finish each sampled the CPU once.
    assert_eq!(samples, 3.0);
    assert!(rows
        .iter()
        .filter(|r| r.key == "waker")
        .all(|r| r.cpu.is_some()));
    assert!(rows.iter().all(|r| r.label == format!("tid {}", rec.tid)));
    let migrations = rows.iter().find(|r| r.key == "waker:migrations");
    assert_eq!(
        migrations.map(|r| r.value),
        rec.migrations.map(|m| m as f64)
    );
}

#[test]
fn fake_is_deterministic() {
    let ctx = MeasureCtx::new(SysRoot::at("/nonexistent"), vec![2, 5]);
    let mut m = by_name("fake").unwrap();
    assert!(m.finish(&ctx).is_err());
    m.start(&ctx).unwrap();
    let a = m.finish(&ctx).unwrap();
    m.start(&ctx).unwrap();
    assert_eq!(m.finish(&ctx).unwrap(), a);
    let values: Vec<(Option<u32>, f64)> = a.iter().map(|r| (r.cpu, r.value)).collect();
    assert_eq!(values, vec![(Some(2), 3.0), (Some(5), 6.0), (None, 42.0)]);
}

#[test]
fn default_monitors_on_the_live_host() {
    let ctx = MeasureCtx::new(SysRoot::host(), vec![0]);
    for mut m in default_monitors() {
        match m.start(&ctx) {
            Ok(()) => {
                let rows = m
                    .finish(&ctx)
                    .unwrap_or_else(|e| panic!("{}: {e}", m.name()));
                assert!(rows.iter().all(|r| r.source == m.name() && r.value >= 0.0));
                match m.name() {
                    "interrupts" | "softirqs" | "cpu_time" | "cpuidle" => {
                        assert!(rows.iter().any(|r| r.cpu == Some(0)), "{}", m.name());
                        assert!(rows.iter().any(|r| r.cpu.is_none()), "{}", m.name());
                    }
                    _ => {}
                }
            }
            // Only cpuidle may be missing on a machine perflab runs on (VMs have none).
            Err(MonitorError::Unavailable(u)) => assert_eq!(m.name(), "cpuidle", "{}", u.reason),
            Err(e) => panic!("{}: {e}", m.name()),
        }
    }
}
