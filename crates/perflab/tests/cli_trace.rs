//! The `trace` monitor end to end: netrr's receive path as spans on loopback (root and
//! tracefs; skipped, saying why, elsewhere), bad span definitions, and the restore sweep
//! of what a killed perflab's tracing left.

mod common;

use common::{run_id, text, Lab};
use perflab_testkit::skip;

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
    let before = leftovers();
    let lab = Lab::new();
    let o = lab.run(&[
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
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let run = lab.export(&run_id(&err));
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
