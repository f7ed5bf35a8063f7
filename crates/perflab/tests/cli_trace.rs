//! The `trace` monitor end to end: netrr's receive path as spans on loopback with the
//! tracefs text backend, netrr and ctxsw with the in-kernel BPF backend (root, tracefs,
//! BPF; skipped, saying why, elsewhere), bad span definitions, the restore sweep of what a
//! killed perflab's tracing left, and nothing left loaded after a SIGKILL.

use crate::common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{run_id, text, Lab};
use perflab_monitors::trace::bpf;
use perflab_testkit::skip;

/// Tests that count what perflab left on the machine (instances, mounts, programs) run one
/// at a time: another one's perflab, alive or just killed, would be counted too.
static MACHINE_WIDE: Mutex<()> = Mutex::new(());

pub(crate) fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    MACHINE_WIDE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Root, tracefs and a kernel that lets this process load BPF; else the skip is said.
fn can_bpf(why: &str) -> bool {
    if !perflab_testkit::have_root(why) {
        return false;
    }
    if let Err(e) = bpf::probe() {
        skip("bpf", e);
        return false;
    }
    if !std::path::Path::new("/sys/kernel/tracing").is_dir() {
        skip("tracefs", "no /sys/kernel/tracing");
        return false;
    }
    true
}

fn perflab_programs() -> usize {
    bpf::sys::programs_named(bpf::PROG_NAME).expect("listing BPF programs as root")
}

/// perflab's programs once they count `before` again, or after 10 s: the kernel frees a
/// detached program after an RCU grace period, so it can still be listed for a moment
/// after the process that loaded it has exited.
fn programs_once_settled(before: usize) -> usize {
    let t0 = Instant::now();
    while perflab_programs() != before && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    perflab_programs()
}

/// perflab's ftrace instances and private tracefs mounts on this machine.
fn leftovers() -> Vec<String> {
    let mut out = Vec::new();
    for dir in [
        "/sys/kernel/tracing/instances",
        "/sys/kernel/debug/tracing/instances",
    ] {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("perflab-") {
                    out.push(format!("{dir}/{name}"));
                }
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    out.extend(
        mounts
            .lines()
            .filter(|l| l.contains("/run/perflab/tracefs-"))
            .map(str::to_string),
    );
    out
}

/// perflab with the tracefs text backend, whatever the kernel allows.
fn text_backend(lab: &Lab, args: &[&str]) -> std::process::Output {
    lab.cmd()
        .env(perflab_monitors::trace::BACKEND_VAR, "text")
        .args(args)
        .output()
        .expect("run perflab")
}

fn value(m: &serde_json::Value, key: &str) -> Option<f64> {
    m["telemetry"]
        .as_array()?
        .iter()
        .find(|t| t["source"] == "trace" && t["key"] == key)
        .and_then(|t| t["value"].as_f64())
}

#[test]
fn netrr_netrx_spans_fit_in_the_round_trip_needs_root() {
    if !perflab_testkit::have_root("making an ftrace instance") {
        return;
    }
    if !std::path::Path::new("/sys/kernel/tracing").is_dir() {
        skip(
            "tracefs",
            "no /sys/kernel/tracing (kernel without CONFIG_FTRACE?)",
        );
        return;
    }
    let _one = one_at_a_time();
    let before = leftovers();
    let lab = Lab::new();
    let o = text_backend(
        &lab,
        &[
            "run",
            "--workload",
            "netrr",
            "--duration",
            "1s",
            "--reps",
            "1",
            "--monitors",
            "trace",
            "--telemetry-reps",
            "1",
        ],
    );
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let run = lab.export_named(&run_id(&err));
    let tele: Vec<&serde_json::Value> = run["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "telemetry")
        .collect();
    assert_eq!(tele.len(), 1, "{err}");
    let m = tele[0];
    // Loopback has no NIC interrupt; every later stage follows each packet.
    let stages = ["raise", "wake", "sched", "syscall"];
    let mut sum_p50 = 0.0;
    for s in stages {
        let count = value(m, &format!("netrx.{s}:count")).unwrap_or(0.0);
        assert!(count > 0.0, "netrx.{s} is empty: {}", m["telemetry"]);
        sum_p50 += value(m, &format!("netrx.{s}:p50")).unwrap();
    }
    assert!(
        value(m, "netrx.irq:count").is_some(),
        "an empty span still has its count row"
    );
    let rtt_p50_ns = m["output"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "rtt_p50_us")
        .and_then(|x| x["value"].as_f64())
        .unwrap()
        * 1000.0;
    // One direction's receive stages are part of the round trip, which has two.
    assert!(
        sum_p50 < rtt_p50_ns,
        "spans' p50s sum to {sum_p50} ns, round trip p50 {rtt_p50_ns} ns"
    );
    // Headline measurements never carry the tracing.
    for h in run["measurements"].as_array().unwrap() {
        if h["role"] == "headline" {
            assert!(value(h, "netrx.wake:count").is_none());
        }
    }
    assert_eq!(leftovers(), before, "perflab left tracing behind");
}

/// The one telemetry measurement of a run of `workload` with `--monitors trace` on the
/// BPF backend (insisted on, so a fallback fails the test).
fn bpf_run(workload: &str) -> serde_json::Value {
    let lab = Lab::new();
    let o = lab
        .cmd()
        .env(perflab_monitors::trace::BACKEND_VAR, "bpf")
        .args([
            "run",
            "--workload",
            workload,
            "--duration",
            "1s",
            "--reps",
            "1",
            "--monitors",
            "trace",
            "--telemetry-reps",
            "1",
        ])
        .output()
        .expect("run perflab");
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let run = lab.export_named(&run_id(&err));
    let m = run["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "telemetry")
        .cloned()
        .unwrap_or_else(|| panic!("no telemetry measurement: {err}"));
    let notes = m["output"]["notes"].to_string();
    assert!(
        notes.contains("measured in the kernel (BPF backend)"),
        "{notes}"
    );
    m
}

#[test]
fn bpf_backend_measures_netrr_and_ctxsw_in_ns_needs_root_and_bpf() {
    if !can_bpf("loading BPF programs") {
        return;
    }
    let _one = one_at_a_time();
    let before = perflab_programs();
    for (workload, set, stages) in [
        ("netrr", "netrx", &["raise", "wake", "sched", "syscall"][..]),
        ("ctxsw", "wakeup", &["sched"][..]),
    ] {
        let m = bpf_run(workload);
        let mut sub_us = false;
        for s in stages {
            let key = |stat: &str| format!("{set}.{s}:{stat}");
            let count = value(&m, &key("count")).unwrap_or(0.0);
            assert!(count > 0.0, "{set}.{s} is empty: {}", m["telemetry"]);
            // The kernel's own counts: every matched span had a start and an end event.
            assert!(value(&m, &key("starts")).unwrap() >= count);
            assert!(value(&m, &key("ends")).unwrap() >= count);
            assert!(value(&m, &key("lost_starts")).is_some());
            for q in ["p50", "p90", "p99"] {
                sub_us |= value(&m, &key(q)).unwrap() % 1000.0 != 0.0;
            }
        }
        assert!(
            sub_us,
            "{workload}: every percentile a whole µs: {}",
            m["telemetry"]
        );
    }
    assert_eq!(
        programs_once_settled(before),
        before,
        "perflab left BPF programs loaded"
    );
}

#[test]
fn nothing_stays_loaded_after_sigkill_needs_root_and_bpf() {
    if !can_bpf("loading BPF programs") {
        return;
    }
    let _one = one_at_a_time();
    let before = perflab_programs();
    let left_before = leftovers();
    let lab = Lab::new();
    let mut child = lab
        .cmd()
        .env(perflab_monitors::trace::BACKEND_VAR, "bpf")
        .args([
            "run",
            "--workload",
            "ctxsw",
            "--duration",
            "3s",
            "--reps",
            "1",
            "--monitors",
            "trace",
            "--telemetry-reps",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start perflab");
    let t0 = Instant::now();
    while perflab_programs() == before && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        perflab_programs() > before,
        "perflab never loaded its programs"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        programs_once_settled(before),
        before,
        "programs outlived a killed perflab"
    );
    // Nothing pinned either; restore sweeps what the text side (a private tracefs mount)
    // left.
    let o = lab.run(&["restore"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(leftovers(), left_before, "restore left tracing behind");
}

#[test]
fn bad_span_definitions_are_one_line_and_store_nothing() {
    let lab = Lab::new();
    let bad = lab.dir.path().join("bad.toml");
    let cases: &[(&str, &str)] = &[
        ("name = \"x\"\n[[span]\n", "bad.toml"),
        ("name = \"x\"\n", "declares no [[span]]"),
        (
            "name = \"x\"\n[[span]]\nname = \"s\"\nlabel = \"S\"\n\
             from = { events = [\"sched:sched_waking\"], key = \"tid\" }\n\
             to = { events = [\"sched:sched_switch\"], key = \"cpu\" }\n",
            "unknown key kind \"tid\"",
        ),
    ];
    for (toml, want) in cases {
        std::fs::write(&bad, toml).unwrap();
        let spec = format!("trace:{}", bad.display());
        let o = lab.run(&["run", "--workload", "netrr", "--monitors", &spec]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!lab.db().exists(), "no database for a refused run");
    }
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "--monitors",
        "trace:nosuchset",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no built-in span set \"nosuchset\""), "{err}");
    assert!(!lab.db().exists());
}

#[test]
fn an_event_the_kernel_lacks_in_a_user_file_is_refused_needs_root() {
    if !perflab_testkit::have_root("reading tracefs events") {
        return;
    }
    let lab = Lab::new();
    let f = lab.dir.path().join("spans.toml");
    std::fs::write(
        &f,
        "name = \"x\"\n[[span]]\nname = \"s\"\nlabel = \"S\"\n\
         from = { events = [\"sched:sched_waking\"], key = \"field:pid\" }\n\
         to = { events = [\"sched:no_such_event\"], key = \"pid\" }\n",
    )
    .unwrap();
    let spec = format!("trace:{}", f.display());
    let o = lab.run(&["run", "--workload", "netrr", "--monitors", &spec]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("sched:no_such_event"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!lab.db().exists());
    // A key the event does not carry: the same, before anything is loaded.
    std::fs::write(
        &f,
        "name = \"x\"\n[[span]]\nname = \"s\"\nlabel = \"S\"\n\
         from = { events = [\"sched:sched_waking\"], key = \"field:pid\" }\n\
         to = { events = [\"sched:sched_switch\"], key = \"field:nextpid\" }\n",
    )
    .unwrap();
    let o = lab.run(&["run", "--workload", "netrr", "--monitors", &spec]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("has no field \"nextpid\""), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!lab.db().exists());
}

#[test]
fn restore_removes_tracing_a_dead_perflab_left() {
    let lab = Lab::new();
    let root = lab.dir.path().join("root");
    let dead = format!("perflab-{}-0", 999_999_999u32);
    let stale = root.join("sys/kernel/tracing/instances").join(&dead);
    let other = root.join("sys/kernel/tracing/instances/someone-else");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    std::fs::create_dir_all(root.join("proc")).unwrap();
    let o = lab.run(&["restore", "--sysroot", root.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("removed the ftrace instance"), "{out}");
    assert!(out.contains(&dead), "{out}");
    assert!(!stale.exists());
    assert!(other.exists());
}
