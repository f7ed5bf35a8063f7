//! The tracefs text backend leaves nothing behind and never hangs: a `--dry-run` leaves no
//! ftrace instance (the plan's check of the monitor made one and dropped it after its
//! private tracefs mount, so it stayed in the kernel, tracing); a run killed with SIGKILL
//! has its instance journaled, and `perflab restore` removes it where tracefs is not
//! mounted; 300 spans under a context-switch load finish (the reader was joined while
//! the instance still traced, and never saw its pipe empty). Root and tracefs; skipped,
//! saying why, elsewhere.

use crate::cli_trace::one_at_a_time;
use crate::common;

use std::os::unix::net::UnixStream;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{text, Lab};
use perflab_monitors::trace::tracefs::Tracefs;
use perflab_sys::SysRoot;

/// Root and a kernel with tracefs (mounted or not: perflab mounts it as root).
fn can_trace(why: &str) -> bool {
    if !perflab_testkit::have_root(why) {
        return false;
    }
    let mountable = std::fs::read_to_string("/proc/filesystems")
        .is_ok_and(|t| t.lines().any(|l| l.trim_end().ends_with("\ttracefs")));
    if !mountable {
        perflab_testkit::skip("tracefs", "the kernel has no tracefs (CONFIG_FTRACE)");
    }
    mountable
}

/// The ftrace instances of perflab process `pid`, seen through tracefs wherever it is
/// (mounted by this test where it is not: every mount shows the same instances).
fn instances_of(pid: u32) -> Vec<String> {
    let fs = Tracefs::open(&SysRoot::host()).expect("tracefs as root");
    let prefix = format!("perflab-{pid}-");
    let mut out: Vec<String> = std::fs::read_dir(fs.fs.path("instances"))
        .expect("tracefs has instances/")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    out.sort();
    out
}

/// perflab with the text backend, insisted on.
fn text_backend(lab: &Lab, args: &[&str]) -> std::process::Command {
    let mut c = lab.cmd();
    c.env(perflab_monitors::trace::BACKEND_VAR, "text")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Waits for `child` at most `limit`; kills it and fails the test past that.
fn wait_within(mut child: Child, limit: Duration, what: &str) -> std::process::Output {
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what} did not finish within {} s: {}",
                limit.as_secs(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_dry_run_and_a_killed_run_leave_no_ftrace_instance_after_restore_needs_root() {
    if !can_trace("making an ftrace instance") {
        return;
    }
    let _one = one_at_a_time();
    let lab = Lab::new();
    let run = [
        "run",
        "--workload",
        "ctxsw",
        "--duration",
        "5s",
        "--reps",
        "1",
        "--monitors",
        "trace",
        "--telemetry-reps",
        "1",
    ];

    let mut dry = run.to_vec();
    dry.push("--dry-run");
    let child = text_backend(&lab, &dry).spawn().unwrap();
    let pid = child.id();
    let o = wait_within(child, Duration::from_secs(120), "a --dry-run");
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        instances_of(pid),
        Vec::<String>::new(),
        "--dry-run left tracing"
    );

    let mut child = text_backend(&lab, &run).spawn().unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    let name = loop {
        if let Some(n) = instances_of(pid).pop() {
            break n;
        }
        if t0.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "perflab never made its ftrace instance: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Recorded before it was made, like everything perflab creates.
    let journal = std::fs::read_to_string(lab.journal()).unwrap();
    assert!(
        journal.contains(&name),
        "{name} is not journaled: {journal}"
    );
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    assert_eq!(instances_of(pid), vec![name.clone()], "the kill left it");

    let o = lab.run(&["restore"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains(&name),
        "restore does not say it removed {name}: {out}"
    );
    assert_eq!(instances_of(pid), Vec::<String>::new(), "{out}");
    let journal = std::fs::read_to_string(lab.journal()).unwrap();
    assert!(!journal.contains(&name), "{journal}");
}

/// Two threads that wake each other as fast as they can until `stop`.
fn ping_pong(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    use std::io::{Read, Write};
    let (mut a, mut b) = UnixStream::pair().unwrap();
    let echo = std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        while b.read_exact(&mut byte).is_ok() && b.write_all(&byte).is_ok() {}
    });
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        while !stop.load(Ordering::Relaxed) {
            if a.write_all(&byte).is_err() || a.read_exact(&mut byte).is_err() {
                break;
            }
        }
        drop(a);
        let _ = echo.join();
    })
}

/// A span file of `n` spans on the scheduler's events, each with a filter on a string
/// field (which the in-kernel backend cannot express either).
fn many_spans(n: usize) -> String {
    let mut t = String::from("name = \"many\"\n");
    for i in 0..n {
        t.push_str(&format!(
            "[[span]]\nname = \"s{i}\"\nlabel = \"span {i}\"\n\
             from = {{ events = [\"sched:sched_waking\"], key = \"field:pid\", \
             where = {{ comm = \"*\" }} }}\n\
             to = {{ events = [\"sched:sched_switch\"], key = \"field:next_pid\" }}\n"
        ));
    }
    t
}

#[test]
fn three_hundred_spans_under_a_context_switch_load_finish_needs_root() {
    if !can_trace("making an ftrace instance") {
        return;
    }
    let lab = Lab::new();
    let file = lab.dir.path().join("many.toml");
    std::fs::write(&file, many_spans(300)).unwrap();
    let monitor = format!("trace:{}", file.display());
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..2).map(|_| ping_pong(stop.clone())).collect();
    let child = text_backend(
        &lab,
        &[
            "run",
            "--workload",
            "ctxsw",
            "--duration",
            "1s",
            "--reps",
            "1",
            "--monitors",
            &monitor,
            "--telemetry-reps",
            "1",
        ],
    )
    .spawn()
    .unwrap();
    // Bounded, not timed: a run that hangs never ends; one that works ends in seconds.
    let o = wait_within(child, Duration::from_secs(300), "a run of 300 spans");
    stop.store(true, Ordering::Relaxed);
    for l in load {
        l.join().unwrap();
    }
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("tracefs text"), "{err}");
}
