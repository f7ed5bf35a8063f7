//! One probe per machine need that both a plug-in and `perflab doctor` ask about: the
//! knob or workload asks before it runs (and says why it cannot), doctor asks to say what
//! the machine lacks. One answer, so the two can never disagree.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use crate::SysRoot;

/// The CPU latency PM-QoS device: writing a binary s32 (µs) holds a limit while open.
pub const PM_QOS_DEVICE: &str = "dev/cpu_dma_latency";
/// The vhost-net device QEMU's tap backend uses to move packets in the kernel.
pub const VHOST_NET_DEVICE: &str = "dev/vhost-net";

/// What perflab may do with a device or attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Missing,
    ReadOnly,
    Writable,
}

/// Whether the CPU latency PM-QoS device is there and perflab may hold a limit on it.
pub fn pm_qos(sys: &SysRoot) -> Access {
    if !sys.exists(PM_QOS_DEVICE) {
        Access::Missing
    } else if may_write(sys, PM_QOS_DEVICE) {
        Access::Writable
    } else {
        Access::ReadOnly
    }
}

/// Whether the kernel offers vhost-net (`netpath=vm-tap` needs it).
pub fn vhost_net(sys: &SysRoot) -> bool {
    sys.exists(VHOST_NET_DEVICE)
}

/// Write permission by access(2) with the effective ids, without opening the file:
/// opening /dev/cpu_dma_latency for writing already files a PM-QoS request.
fn may_write(sys: &SysRoot, rel: &str) -> bool {
    let Ok(path) = CString::new(sys.path(rel).as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_and_a_present_one_on_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(pm_qos(&sys), Access::Missing);
        assert!(!vhost_net(&sys));
        std::fs::create_dir_all(dir.path().join("dev")).unwrap();
        std::fs::write(sys.path(PM_QOS_DEVICE), [0u8; 4]).unwrap();
        std::fs::write(sys.path(VHOST_NET_DEVICE), b"").unwrap();
        assert_eq!(pm_qos(&sys), Access::Writable);
        assert!(vhost_net(&sys));
    }
}
