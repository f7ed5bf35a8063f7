//! `vm-vfio`: a physical NIC given to the guest with VFIO, reached from the host through
//! another NIC cabled to it (seed 001's fastest case). Both are named by the user, since
//! only they know the wiring: `PERFLAB_VFIO_NIC` (the PCI address of a NIC bound to
//! vfio-pci), `PERFLAB_VFIO_PEER` (the host interface on the same wire, with no address:
//! perflab moves it into the client namespace, and the kernel moves it back when that
//! namespace is deleted) and, where the guest kernel has the NIC's driver as a module,
//! `PERFLAB_VFIO_MODULE` (e.g. `igc`).

use perflab_core::Unavailable;
use perflab_sys::SysRoot;

use super::build::Built;
use super::cmd::ip;
use super::nic::Nic;
use super::topology::{address_up, Plan};
use crate::error::KnobError;

/// What the user named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VfioSetup {
    pub nic: Option<String>,
    pub peer: Option<String>,
    pub module: Option<String>,
}

impl VfioSetup {
    fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self {
            nic: var("PERFLAB_VFIO_NIC"),
            peer: var("PERFLAB_VFIO_PEER"),
            module: var("PERFLAB_VFIO_MODULE"),
        }
    }
}

pub(crate) fn check(sys: &SysRoot) -> Result<VfioSetup, Unavailable> {
    check_setup(sys, VfioSetup::from_env())
}

/// Whether the named NIC is given to vfio-pci with its IOMMU group's device, and the
/// peer interface exists and is unused.
pub(crate) fn check_setup(sys: &SysRoot, setup: VfioSetup) -> Result<VfioSetup, Unavailable> {
    let Some(nic) = setup.nic.as_deref() else {
        return Err(Unavailable::new(
            "no NIC was given for VFIO (this path needs a physical NIC bound to vfio-pci and \
             a host interface cabled to it)",
        )
        .with_hint("set PERFLAB_VFIO_NIC=DOMAIN:BUS:DEV.FN and PERFLAB_VFIO_PEER=IFACE"));
    };
    let valid = nic.len() == 12
        && nic.chars().enumerate().all(|(i, c)| match i {
            4 | 7 => c == ':',
            10 => c == '.',
            _ => c.is_ascii_hexdigit(),
        });
    if !valid {
        return Err(Unavailable::new(format!(
            "PERFLAB_VFIO_NIC={nic:?} is not a PCI address like 0000:03:00.0"
        )));
    }
    let dev = format!("sys/bus/pci/devices/{nic}");
    if !sys.exists(&dev) {
        return Err(Unavailable::new(format!("there is no PCI device {nic}")));
    }
    let driver = link_name(sys, &format!("{dev}/driver"));
    if driver.as_deref() != Some("vfio-pci") {
        return Err(Unavailable::new(format!(
            "{nic} is bound to {}, not vfio-pci",
            driver.as_deref().unwrap_or("no driver")
        ))
        .with_hint(format!(
            "echo vfio-pci > /sys/bus/pci/devices/{nic}/driver_override; echo {nic} > \
             /sys/bus/pci/drivers_probe (after unbinding it)"
        )));
    }
    let Some(group) = link_name(sys, &format!("{dev}/iommu_group")) else {
        return Err(Unavailable::new(format!(
            "{nic} has no IOMMU group: the IOMMU is off (intel_iommu=on / amd_iommu=on)"
        )));
    };
    if !sys.exists(&format!("dev/vfio/{group}")) {
        return Err(Unavailable::new(format!(
            "/dev/vfio/{group} (the IOMMU group of {nic}) is missing"
        )));
    }
    let Some(peer) = setup.peer.as_deref() else {
        return Err(Unavailable::new(format!(
            "no host interface was given to reach {nic} (set PERFLAB_VFIO_PEER=IFACE, the \
             interface cabled to it)"
        )));
    };
    if !sys.exists(&format!("sys/class/net/{peer}")) {
        return Err(Unavailable::new(format!(
            "PERFLAB_VFIO_PEER={peer}: there is no such interface"
        )));
    }
    Ok(setup)
}

fn link_name(sys: &SysRoot, rel: &str) -> Option<String> {
    std::fs::read_link(sys.path(rel))
        .ok()?
        .file_name()?
        .to_str()
        .map(str::to_string)
}

/// Moves the peer interface into the client namespace (it must carry no address: its
/// addresses would be lost) and names the device QEMU takes.
pub(crate) fn nic(b: &mut Built, plan: &Plan, sys: &SysRoot, cli: &str) -> Result<Nic, KnobError> {
    let _ = b;
    let setup = check(sys).map_err(|u| KnobError::Command {
        cmd: "vm-vfio".into(),
        why: u.reason,
    })?;
    let (Some(nic), Some(peer)) = (setup.nic, setup.peer) else {
        return Err(KnobError::Command {
            cmd: "vm-vfio".into(),
            why: "PERFLAB_VFIO_NIC and PERFLAB_VFIO_PEER are needed".into(),
        });
    };
    let addrs = ip(&["-o", "addr", "show", "dev", &peer])?;
    if addrs
        .lines()
        .any(|l| l.contains(" inet ") || l.contains("inet6") && !l.contains("fe80"))
    {
        return Err(KnobError::Busy {
            path: sys.path(&format!("sys/class/net/{peer}")),
            reason: "it has addresses; perflab uses only an unused interface (they would be \
                     lost when it moves back)"
                .into(),
        });
    }
    ip(&["link", "set", "dev", &peer, "netns", cli])?;
    address_up(cli, &peer, plan.client())?;
    Ok(Nic {
        fd: None,
        device: Some(format!("vfio-pci,host={nic}")),
        mac: None,
        client_dev: peer.clone(),
        facts: vec![("net.vfio_nic".into(), nic)],
        guest_modules: setup.module.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup(nic: Option<&str>, peer: Option<&str>) -> VfioSetup {
        VfioSetup {
            nic: nic.map(str::to_string),
            peer: peer.map(str::to_string),
            module: None,
        }
    }

    #[test]
    fn each_missing_piece_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        let why = |s| check_setup(&sys, s).unwrap_err().reason;
        assert!(why(setup(None, None)).contains("no NIC was given"));
        assert!(why(setup(Some("03:00.0"), None)).contains("not a PCI address"));
        assert!(why(setup(Some("0000:03:00.0"), None)).contains("no PCI device"));
        let dev = dir.path().join("sys/bus/pci/devices/0000:03:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::create_dir_all(dir.path().join("sys/bus/pci/drivers/igc")).unwrap();
        symlink("../../drivers/igc", dev.join("driver")).unwrap();
        let w = why(setup(Some("0000:03:00.0"), None));
        assert!(w.contains("bound to igc, not vfio-pci"), "{w}");
        std::fs::remove_file(dev.join("driver")).unwrap();
        symlink("../../drivers/vfio-pci", dev.join("driver")).unwrap();
        assert!(why(setup(Some("0000:03:00.0"), None)).contains("no IOMMU group"));
        symlink("../../../kernel/iommu_groups/14", dev.join("iommu_group")).unwrap();
        assert!(why(setup(Some("0000:03:00.0"), None)).contains("/dev/vfio/14"));
        std::fs::create_dir_all(dir.path().join("dev/vfio")).unwrap();
        std::fs::write(dir.path().join("dev/vfio/14"), "").unwrap();
        assert!(why(setup(Some("0000:03:00.0"), None)).contains("PERFLAB_VFIO_PEER"));
        assert!(why(setup(Some("0000:03:00.0"), Some("enp4s0"))).contains("no such interface"));
        std::fs::create_dir_all(dir.path().join("sys/class/net/enp4s0")).unwrap();
        assert!(check_setup(&sys, setup(Some("0000:03:00.0"), Some("enp4s0"))).is_ok());
    }
}
