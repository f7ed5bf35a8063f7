//! vhost-net, which QEMU's tap backend uses to move a guest's packets in the kernel.

use crate::SysRoot;

/// The vhost-net device.
pub const VHOST_NET_DEVICE: &str = "dev/vhost-net";

/// Whether the kernel offers vhost-net (`netpath=vm-tap` needs it).
pub fn vhost_net(sys: &SysRoot) -> bool {
    sys.exists(VHOST_NET_DEVICE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_is_looked_for_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert!(!vhost_net(&sys));
        std::fs::create_dir_all(dir.path().join("dev")).unwrap();
        std::fs::write(sys.path(VHOST_NET_DEVICE), b"").unwrap();
        assert!(vhost_net(&sys));
    }
}
