//! End-to-end: the network paths that end in a guest perflab boots with QEMU (seed 001's
//! host-to-VM cases). Under TCG here (nested KVM does not run a vCPU on these machines),
//! so the figures are only checked to exist; what is checked is that the guest answers,
//! and that no process, tap, namespace or file is left behind: after a normal run, after
//! a boot that times out, and after SIGKILL followed by `perflab restore`.
//! Each test needs root, QEMU, busybox and a guest kernel, says so in its name, and is
//! skipped with the reason where one is missing.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{run_id, text, Lab};

/// The tests compare the machine's processes and network before and after: one at a time.
static HOST: Mutex<()> = Mutex::new(());

/// Whether everything a guest needs is here; if not, the skip says what is missing.
fn have_guest_parts() -> bool {
    perflab_testkit::have_root("booting a guest on a tap")
        && perflab_testkit::have_tool("ip", "iproute2")
        && perflab_testkit::have_tool("qemu-system-x86_64", "qemu-system-x86")
        && perflab_testkit::have_tool("busybox", "busybox-static")
        && guest_kernel_present()
}

fn guest_kernel_present() -> bool {
    let sys = perflab_sys::SysRoot::host();
    match perflab_knobs::guest::kernel::find(&sys, None) {
        Ok(_) => true,
        Err(why) => {
            perflab_testkit::skip("guest kernel", why);
            false
        }
    }
}

/// vm-tap where the kernel has vhost-net, else the same tap with QEMU moving frames.
fn tap_path() -> &'static str {
    if Path::new("/dev/vhost-net").exists() {
        "vm-tap"
    } else {
        "vm-tap-novhost"
    }
}

/// `perflab run --workload netrr` over the tap path to a guest, with `extra` arguments.
fn netrr_over_tap(lab: &Lab, extra: &[&str]) -> Command {
    let path = tap_path();
    let mut cmd = lab.cmd();
    cmd.args(["run", "--workload", "netrr", "--variant"])
        .arg(format!("{path}:netpath={path}"))
        .args(extra);
    cmd
}

/// The QEMU processes, namespaces and guest directories of perflab process `pid`.
fn leftovers(pid: u32) -> Vec<String> {
    let tag = format!("perflab-{pid}-");
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'));
        if cmdline.contains("qemu-system") && cmdline.contains(&tag) && !zombie {
            left.push(format!("process: {cmdline}"));
        }
    }
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for line in String::from_utf8_lossy(&netns.stdout).lines() {
        if line.starts_with(&tag) {
            left.push(format!("netns: {line}"));
        }
    }
    for entry in std::fs::read_dir("/run/perflab")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("guest-{tag}")) {
            left.push(format!("dir: {name}"));
        }
    }
    left
}

#[test]
fn a_tap_path_to_a_tcg_guest_answers_and_leaves_nothing_needs_root_qemu_and_a_guest_kernel() {
    if !have_guest_parts() {
        return;
    }
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::new();
    let path = tap_path();
    let child = netrr_over_tap(
        &lab,
        &["-p", "duration=2s", "-p", "timeout=0.5s", "--reps", "2"],
    )
    .args(["--monitors", "interrupts,softirqs"])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start perflab");
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(leftovers(pid).is_empty(), "{:?}", leftovers(pid));
    assert!(out.lines().any(|l| l.starts_with(path)), "{out}");
    let doc = lab.export(&run_id(&err));
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 2, "{doc}");
    for m in ms {
        assert_eq!(m["status"]["status"], "ok", "{m}");
        let h = &m["output"]["histograms"][0];
        assert!(h["count"].as_u64().unwrap() > 0, "no round trip timed: {h}");
        let notes = m["output"]["notes"].to_string();
        assert!(notes.contains(&format!("path {path}")), "{notes}");
        // This machine has no working nested KVM: the note must say TCG, loudly.
        if perflab_knobs::guest::accel::choose(&perflab_sys::SysRoot::host(), None)
            != perflab_knobs::guest::accel::Accel::Kvm
        {
            assert!(notes.contains("NOT representative"), "{notes}");
        }
    }
    assert!(
        out.contains(&format!("Path notes:\n  {path}: the guest runs under"))
            || !out.contains("TCG"),
        "{out}"
    );
}

#[test]
fn a_guest_that_does_not_boot_in_time_fails_in_one_line_and_leaves_nothing_needs_root_qemu_and_a_guest_kernel(
) {
    if !have_guest_parts() {
        return;
    }
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::new();
    let child = netrr_over_tap(&lab, &["-p", "duration=1s", "--reps", "1"])
        .args(["--monitors", "interrupts"])
        .env("PERFLAB_GUEST_BOOT_TIMEOUT", "0.3")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start perflab");
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    let line = err
        .lines()
        .find(|l| l.contains("did not start serving within"))
        .unwrap_or_else(|| panic!("no boot failure line:\n{err}"));
    assert!(line.contains("PERFLAB_GUEST_BOOT_TIMEOUT"), "{line}");
    assert!(leftovers(pid).is_empty(), "{:?}", leftovers(pid));
}

#[test]
fn sigkill_while_the_guest_runs_then_restore_leaves_nothing_needs_root_qemu_and_a_guest_kernel() {
    if !have_guest_parts() {
        return;
    }
    let _turn = HOST.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::new();
    let mut child = netrr_over_tap(&lab, &["-p", "duration=20s", "--reps", "1"])
        .args(["--monitors", "interrupts"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perflab");
    let pid = child.id();
    let t0 = Instant::now();
    while !leftovers(pid).iter().any(|l| l.starts_with("process")) {
        assert!(t0.elapsed() < Duration::from_secs(60), "no guest started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    // The guest dies with perflab (PR_SET_PDEATHSIG); its namespaces and files wait for
    // `perflab restore`, which also finds the guest journaled.
    let left = leftovers(pid);
    assert!(left.iter().any(|l| l.starts_with("netns")), "{left:?}");

    let o = lab.run(&["restore"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(format!("{out}{err}").contains("QEMU guest"), "{out}{err}");
    let t0 = Instant::now();
    while !leftovers(pid).is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(leftovers(pid).is_empty(), "{:?}", leftovers(pid));
}

#[test]
fn a_guest_kernel_that_does_not_exist_is_refused_in_one_line() {
    let lab = Lab::new();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let k = missing.to_str().unwrap();
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "--guest-kernel",
        k,
        "--variant",
        "vm:netpath=vm-tap-novhost",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nope"), "{err}");
    assert!(!lab.db().exists(), "no database for a refused run");
}
