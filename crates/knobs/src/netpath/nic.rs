//! The guest's network device as QEMU gets it: what each VM backend (`vm`'s tap,
//! macvtap and OVS, `vfio`'s passed-through NIC) builds, in a file of its own so that the
//! backends do not import each other.

use std::os::fd::OwnedFd;

/// The guest's network device as QEMU gets it.
pub(crate) struct Nic {
    /// A tap or macvtap descriptor for `-netdev tap,fd=3`; `None` for a VFIO device.
    pub fd: Option<OwnedFd>,
    /// A VFIO device's `-device` argument.
    pub device: Option<String>,
    pub mac: Option<String>,
    pub client_dev: String,
    pub facts: Vec<(String, String)>,
    /// Modules the guest loads for this NIC besides virtio's (a VFIO NIC's driver).
    pub guest_modules: Vec<String>,
}
