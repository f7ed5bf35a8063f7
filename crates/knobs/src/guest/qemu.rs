//! Starting the guest: QEMU's command line, its network device on a descriptor perflab
//! opened (a tap, or a macvtap's character device), and the wait until the guest's
//! `perflab serve` listens.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::accel::Accel;
use super::initramfs::{READY, SERVE_ENDED};

/// The descriptor number the NIC's file has in QEMU.
const NIC_FD: i32 = 3;

/// The variable that overrides how long a boot may take, in seconds.
pub const BOOT_TIMEOUT_ENV: &str = "PERFLAB_GUEST_BOOT_TIMEOUT";

/// How one guest is started.
#[derive(Clone, Debug)]
pub struct QemuPlan {
    pub qemu: PathBuf,
    pub accel: Accel,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub console: PathBuf,
    pub name: String,
    /// `vhost=on`: the kernel's vhost-net moves the frames, not QEMU's own thread.
    pub vhost: bool,
    /// The guest NIC's MAC; a macvtap passes only frames for its own address.
    pub mac: Option<String>,
    pub memory_mib: u32,
}

/// The QEMU executable for this machine's architecture.
pub fn find_qemu() -> Option<PathBuf> {
    perflab_sys::probe::tools::find_tool(match std::env::consts::ARCH {
        "aarch64" => "qemu-system-aarch64",
        _ => "qemu-system-x86_64",
    })
}

impl QemuPlan {
    pub fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = ["-name", &self.name, "-accel", self.accel.name()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if self.accel == Accel::Kvm {
            a.extend(["-cpu".into(), "host".into()]);
        }
        a.extend(
            [
                "-m",
                &self.memory_mib.to_string(),
                "-smp",
                "1",
                "-nodefaults",
                "-no-user-config",
                "-display",
                "none",
                "-no-reboot",
                "-serial",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        a.push(format!("file:{}", self.console.display()));
        a.push("-kernel".into());
        a.push(self.kernel.display().to_string());
        a.push("-initrd".into());
        a.push(self.initrd.display().to_string());
        a.push("-append".into());
        a.push("console=ttyS0 quiet panic=-1".into());
        a.push("-netdev".into());
        a.push(format!(
            "tap,id=n0,fd={NIC_FD},vhost={}",
            if self.vhost { "on" } else { "off" }
        ));
        a.push("-device".into());
        a.push(match &self.mac {
            Some(mac) => format!("virtio-net-pci,netdev=n0,mac={mac}"),
            None => "virtio-net-pci,netdev=n0".into(),
        });
        a
    }

    /// Starts QEMU with a VFIO device (`vfio-pci,host=…`) as its NIC instead of a tap.
    pub fn spawn_with_device(&self, device: &str) -> Result<Child, String> {
        let mut args = self.args();
        let at = args
            .iter()
            .position(|a| a == "-netdev")
            .unwrap_or(args.len());
        args.truncate(at);
        args.extend(["-device".to_string(), device.to_string()]);
        self.command(args)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.qemu.display()))
    }

    fn command(&self, args: Vec<String>) -> Command {
        let mut cmd = Command::new(&self.qemu);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(self.console.with_extension("stderr"))
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
            );
        // A kill of perflab between spawn and journaling must not leave a guest behind.
        crate::child::tie_to_perflab(&mut cmd);
        cmd
    }

    /// Starts QEMU with `nic` as its descriptor 3; the caller journals the process.
    pub fn spawn(&self, nic: &OwnedFd) -> Result<Child, String> {
        let raw = nic.as_raw_fd();
        let mut cmd = self.command(self.args());
        // SAFETY: dup2 is async-signal-safe; it puts the NIC at descriptor 3 without
        // close-on-exec for QEMU to take.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(raw, NIC_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.qemu.display()))
    }
}

/// How long the guest may take to answer: emulation boots in seconds here, but a loaded
/// machine may take several times as long.
pub fn boot_timeout(accel: &Accel) -> Duration {
    let default = match accel {
        Accel::Kvm => 30.0,
        Accel::Tcg { .. } => 90.0,
    };
    let secs = std::env::var(BOOT_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(secs)
}

/// Waits until the guest's serve listens. An error says why, in one line, with the last
/// thing the guest printed.
pub fn wait_ready(
    child: &mut Child,
    console: &Path,
    timeout: Duration,
) -> Result<Duration, String> {
    let started = Instant::now();
    loop {
        let text = std::fs::read(console).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        if text.contains(READY) {
            return Ok(started.elapsed());
        }
        if text.contains(SERVE_ENDED) {
            return Err(format!(
                "the guest's perflab serve exited: {}",
                last_line(&text, console)
            ));
        }
        if let Ok(Some(status)) = child.try_wait() {
            let stderr =
                std::fs::read_to_string(console.with_extension("stderr")).unwrap_or_default();
            let why = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            return Err(format!(
                "QEMU exited ({status}) before the guest answered: {}",
                if why.is_empty() {
                    last_line(&text, console)
                } else {
                    why.trim().to_string()
                }
            ));
        }
        if started.elapsed() > timeout {
            return Err(format!(
                "the guest did not start serving within {:.0} s ({BOOT_TIMEOUT_ENV} sets the \
                 limit): {}",
                timeout.as_secs_f64(),
                last_line(&text, console)
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn last_line(text: &str, console: &Path) -> String {
    match text
        .lines()
        .map(|l| l.trim_matches(|c: char| c.is_control() || c.is_whitespace()))
        .rev()
        .find(|l| !l.is_empty())
    {
        Some(l) => format!("its console's last line: {l:?}"),
        None => format!("its console ({}) is empty", console.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(accel: Accel, vhost: bool, mac: Option<&str>) -> QemuPlan {
        QemuPlan {
            qemu: "/usr/bin/qemu-system-x86_64".into(),
            accel,
            kernel: "/boot/vmlinuz".into(),
            initrd: "/run/perflab/g/initramfs".into(),
            console: "/run/perflab/g/console".into(),
            name: "perflab-1-0".into(),
            vhost,
            mac: mac.map(str::to_string),
            memory_mib: 512,
        }
    }

    #[test]
    fn the_command_line_takes_the_nic_from_descriptor_3() {
        let a = plan(Accel::Tcg { why: "x".into() }, false, None)
            .args()
            .join(" ");
        assert!(a.contains("-accel tcg"), "{a}");
        assert!(!a.contains("-cpu host"), "{a}");
        assert!(a.contains("-netdev tap,id=n0,fd=3,vhost=off"), "{a}");
        assert!(a.contains("-serial file:/run/perflab/g/console"), "{a}");
        let a = plan(Accel::Kvm, true, Some("52:54:00:12:34:56"))
            .args()
            .join(" ");
        assert!(a.contains("-accel kvm -cpu host"), "{a}");
        assert!(a.contains("vhost=on"), "{a}");
        assert!(
            a.contains("virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56"),
            "{a}"
        );
    }

    #[test]
    fn a_guest_that_never_answers_is_reported_with_its_last_words() {
        let dir = tempfile::tempdir().unwrap();
        let console = dir.path().join("console");
        std::fs::write(&console, "Booting\r\n[ 1.0] Run /init as init process\r\n").unwrap();
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let e = wait_ready(&mut child, &console, Duration::from_millis(200)).unwrap_err();
        let _ = child.kill();
        let _ = child.wait();
        assert!(e.contains("within 0 s") && e.contains("Run /init"), "{e}");
        assert!(!e.contains('\n'));
        std::fs::write(&console, format!("x\n{SERVE_ENDED} with 2\n")).unwrap();
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let e = wait_ready(&mut child, &console, Duration::from_secs(5)).unwrap_err();
        let _ = child.kill();
        let _ = child.wait();
        assert!(e.contains("serve exited"), "{e}");
    }
}
