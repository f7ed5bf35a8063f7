//! The CPU latency PM-QoS device (`pmqos=` holds a limit on it).

use super::access::{access, Access};
use crate::SysRoot;

/// The CPU latency PM-QoS device: writing a binary s32 (µs) holds a limit while open.
pub const PM_QOS_DEVICE: &str = "dev/cpu_dma_latency";

/// Whether the CPU latency PM-QoS device is there and perflab may hold a limit on it.
pub fn pm_qos(sys: &SysRoot) -> Access {
    access(sys, PM_QOS_DEVICE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_and_a_present_one_on_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(pm_qos(&sys), Access::Missing);
        std::fs::create_dir_all(dir.path().join("dev")).unwrap();
        std::fs::write(sys.path(PM_QOS_DEVICE), [0u8; 4]).unwrap();
        assert_eq!(pm_qos(&sys), Access::Writable);
    }
}
