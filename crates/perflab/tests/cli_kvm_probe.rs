//! End-to-end: the KVM probe's QEMU after perflab is SIGKILLed during the probe. Where
//! nested KVM runs a vCPU but not a kernel (these machines), that QEMU hangs in the
//! kernel's set-up code ignoring SIGTERM; a kill of perflab used to leave it running under
//! init with its console file, and `perflab restore` found nothing to restore. Needs root
//! (the netpath knob), QEMU, busybox, a guest kernel and /dev/kvm; skipped with the reason
//! where one is missing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{text, Lab};

/// The non-zombie processes whose command line names `tag`.
fn processes_naming(tag: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'));
        if cmdline.contains(tag) && !zombie {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Whether this machine gets as far as the probe's QEMU; the skip says why not.
fn probe_starts_qemu() -> bool {
    if !(perflab_testkit::have_root("the netpath knob builds namespaces and taps")
        && perflab_testkit::have_tool("qemu-system-x86_64", "qemu-system-x86")
        && perflab_testkit::have_tool("busybox", "busybox-static"))
    {
        return false;
    }
    if let Err(why) = perflab_knobs::guest::kernel::find(&perflab_sys::SysRoot::host(), None) {
        perflab_testkit::skip("guest kernel", why);
        return false;
    }
    if !Path::new("/dev/kvm").exists() {
        perflab_testkit::skip("kvm", "no /dev/kvm: the probe never starts QEMU");
        return false;
    }
    // The QEMU half of the probe runs only after a one-instruction vCPU ran.
    if let Err(why) = perflab_knobs::guest::accel::probe_vcpu() {
        perflab_testkit::skip(
            "kvm",
            format!("the vCPU probe fails ({why}), so QEMU is never started"),
        );
        return false;
    }
    // Where KVM really runs a kernel, the probe's QEMU is gone within a second: there is
    // no hung probe to kill.
    let qemu = perflab_knobs::guest::qemu::find_qemu().expect("found above");
    let kernel = perflab_knobs::guest::kernel::find(&perflab_sys::SysRoot::host(), None).unwrap();
    if perflab_knobs::guest::accel::probe_qemu(&qemu, &kernel.path).is_ok() {
        perflab_testkit::skip(
            "nested-kvm-hang",
            "QEMU under KVM boots a kernel here, so its probe ends too soon to be killed during",
        );
        return false;
    }
    true
}

#[test]
fn sigkill_during_the_kvm_probe_then_restore_leaves_no_qemu_and_no_probe_file_needs_root_qemu_and_kvm(
) {
    if !probe_starts_qemu() {
        return;
    }
    let lab = Lab::new();
    let tmp = lab.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = lab
        .cmd()
        .args(["run", "netpaths", "--variant", "vm-tap-novhost", "--quick"])
        .env("TMPDIR", &tmp)
        .env_remove("PERFLAB_GUEST_ACCEL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perflab");
    let pid = child.id();
    let probe_dir: PathBuf = tmp.join(format!("perflab-kvm-probe-{pid}"));
    let tag = probe_dir.display().to_string();
    let t0 = Instant::now();
    while processes_naming(&tag).is_empty() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("perflab ended ({status}) before its KVM probe started QEMU");
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no probe QEMU");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().unwrap();

    let o = lab.run(&["restore"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains("kvm-probe"),
        "restore did not know the probe: {out}{err}"
    );
    // The kernel delivers a parent-death signal asynchronously: give it a moment.
    let t0 = Instant::now();
    while !processes_naming(&tag).is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_naming(&tag), Vec::<String>::new());
    assert!(!probe_dir.exists(), "{} is left", probe_dir.display());
    let o = lab.run(&["restore"]);
    assert!(text(&o).0.contains("nothing to restore"), "{:?}", text(&o));
}
