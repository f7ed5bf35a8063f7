//! The second half of the KVM probe: QEMU under KVM on the guest kernel, which must get
//! as far as the kernel's banner. Under a nested KVM that cannot run it, QEMU hangs in the
//! kernel's real-mode set-up ("Probing EDD") at a third of a CPU and ignores SIGTERM, so
//! this QEMU is handled like every long-lived child: it dies with perflab, and it and its
//! console file are journaled, so `perflab restore` ends and removes what a kill left.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::process;
use crate::child::{tie_to_perflab, Journaled};
use crate::journal::Created;

/// How long QEMU gets to print the kernel's banner; a working KVM takes well under a
/// second. (The vCPU half of the probe, in `accel`, has half as long.)
pub const PROBE_TIME: Duration = Duration::from_secs(6);

/// The knob name the probe's journal entries carry.
pub const PROBE_KNOB: &str = "kvm-probe";

/// The directory of this process's probe: its QEMU's console file.
pub fn probe_dir() -> PathBuf {
    std::env::temp_dir().join(format!("perflab-kvm-probe-{}", std::process::id()))
}

/// Starts QEMU under KVM on `kernel` with no disk and no initramfs and waits for the
/// kernel proper to print its banner (`Linux version`). The first output is not enough:
/// under a nested KVM that cannot run it, the kernel's real-mode setup code prints
/// "Probing EDD" and then the switch to long mode hangs.
pub fn probe_qemu(qemu: &Path, kernel: &Path) -> Result<(), String> {
    let dir = probe_dir();
    let mut journaled = Journaled::new(PROBE_KNOB)?;
    journaled.record(&Created::Dir { path: dir.clone() })?;
    let outcome = boot_and_watch(qemu, kernel, &dir, &mut journaled);
    // Whatever happened, the child is stopped (in boot_and_watch) and its files go; the
    // entries stay for `perflab restore` only if the files could not be removed.
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {}
        _ => journaled.forget()?,
    }
    outcome
}

fn boot_and_watch(
    qemu: &Path,
    kernel: &Path,
    dir: &Path,
    journaled: &mut Journaled,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let console = dir.join("console");
    let mut child = spawn(qemu, kernel, &console)?;
    let pid = child.id();
    let recorded = match process::start_ticks(pid) {
        Some(ticks) => journaled.record(&Created::Process {
            pid,
            start_ticks: ticks,
            comm: process::comm(pid),
            what: "QEMU of the KVM probe".into(),
        }),
        None => Ok(()),
    };
    let printed = recorded.is_ok() && watch(&mut child, &console);
    let _ = child.kill();
    let _ = child.wait();
    recorded?;
    if printed {
        Ok(())
    } else {
        Err(format!(
            "QEMU under KVM did not get the guest kernel to print within {} s (it hangs in \
             its firmware or set-up code: nested virtualisation without working nested KVM)",
            PROBE_TIME.as_secs()
        ))
    }
}

fn spawn(qemu: &Path, kernel: &Path, console: &Path) -> Result<Child, String> {
    let mut cmd = Command::new(qemu);
    cmd.args([
        "-accel",
        "kvm",
        "-m",
        "256",
        "-nodefaults",
        "-no-user-config",
    ])
    .args(["-display", "none", "-no-reboot", "-serial"])
    .arg(format!("file:{}", console.display()))
    .arg("-kernel")
    .arg(kernel)
    .args(["-append", "console=ttyS0 earlyprintk=ttyS0 panic=-1"])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    tie_to_perflab(&mut cmd);
    cmd.spawn()
        .map_err(|e| format!("cannot start {}: {e}", qemu.display()))
}

/// Whether the kernel printed its banner before the time ran out or QEMU exited.
fn watch(child: &mut Child, console: &Path) -> bool {
    let started = Instant::now();
    while started.elapsed() < PROBE_TIME {
        if std::fs::read(console).is_ok_and(|c| contains(&c, b"Linux version")) {
            return true;
        }
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_sys::SysRoot;

    /// Where both QEMU and a kernel are installed, the probe answers within its limit,
    /// leaves no directory behind, and this machine's verdict is printed for the person
    /// reading the test output.
    #[test]
    fn the_qemu_probe_answers_within_its_time_limit() {
        let Some(qemu) = perflab_sys::probe::tools::find_tool("qemu-system-x86_64") else {
            perflab_testkit::skip("qemu-system-x86_64", "qemu-system-x86 is not installed");
            return;
        };
        if !Path::new("/dev/kvm").exists() {
            perflab_testkit::skip("kvm", "no /dev/kvm on this machine");
            return;
        }
        let Ok(k) = crate::guest::kernel::find(&SysRoot::host(), None) else {
            perflab_testkit::skip("guest kernel", "no guest kernel (linux-image-amd64)");
            return;
        };
        let started = Instant::now();
        let verdict = probe_qemu(&qemu, &k.path);
        eprintln!("qemu kvm probe: {verdict:?}");
        assert!(started.elapsed() < PROBE_TIME + Duration::from_secs(8));
        assert!(!probe_dir().exists());
    }
}
