//! The doctor's lines for the network paths that end in a guest (`netpath=vm-*`): whether
//! a guest can be booted here, and with which accelerator. They are the knob's own checks
//! (the guest parts, the KVM probe), so they live here rather than in `sys`.

use perflab_core::Need;
use perflab_knobs::guest::{accel, kernel, qemu};
use perflab_sys::doctor::Check;
use perflab_sys::probe::tools::find_tool;
use perflab_sys::SysRoot;

const GUEST: Need = Need::VmGuest;
const ACCEL: Need = Need::VmAccelerator;
const VHOST: Need = Need::VhostNet;
/// The needs `checks` answers on the host, in order.
pub const NEEDS: &[Need] = &[GUEST, ACCEL, VHOST];

/// `vm guest`, `vm accelerator` and `vhost-net`; nothing on a fixture tree (a guest boots
/// on the machine itself).
pub fn checks(sys: &SysRoot) -> Vec<Check> {
    if !sys.is_host() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let qemu = qemu::find_qemu();
    let kernel = kernel::find(sys, kernel::named_in_env().as_deref());
    let busybox = find_tool("busybox");
    match (&qemu, &kernel, &busybox) {
        (Some(q), Ok(k), Some(_)) => out.push(Check::ok(
            GUEST,
            format!(
                "{} boots {} ({}) with a busybox initramfs: netpath=vm-* paths can be built",
                q.display(),
                k.path.display(),
                k.release
            ),
        )),
        _ => {
            let mut missing = Vec::new();
            let mut install = Vec::new();
            if qemu.is_none() {
                missing.push("QEMU".to_string());
                install.push("qemu-system-x86");
            }
            if let Err(why) = &kernel {
                missing.push(why.clone());
                install.push("linux-image-amd64");
            }
            if busybox.is_none() {
                missing.push("busybox".to_string());
                install.push("busybox-static");
            }
            out.push(Check::missing(
                GUEST,
                format!(
                    "netpath=vm-* paths are unavailable: missing {}",
                    missing.join("; ")
                ),
                format!("apt-get install {}", install.join(" ")),
            ));
        }
    }
    let boot = match (&qemu, &kernel) {
        (Some(q), Ok(k)) => Some((q.as_path(), k.path.as_path())),
        _ => None,
    };
    match accel::choose(sys, boot) {
        accel::Accel::Kvm => out.push(Check::ok(ACCEL, "kvm: /dev/kvm runs a vCPU")),
        accel::Accel::Tcg { why } => out.push(Check::partial(
            ACCEL,
            format!(
                "tcg (emulation) because {why}: guests boot, but VM latencies are not \
                 representative"
            ),
            "run on a host (or a VM with working nested KVM) where /dev/kvm runs a vCPU",
        )),
    }
    // The same probe netpath=vm-tap asks before it builds.
    if perflab_sys::probe::vhost_net(sys) {
        out.push(Check::ok(
            VHOST,
            "/dev/vhost-net: netpath=vm-tap can use it",
        ));
    } else {
        out.push(Check::missing(
            VHOST,
            "no /dev/vhost-net: netpath=vm-tap is unavailable (vm-tap-novhost is not)",
            "modprobe vhost_net, or a kernel with CONFIG_VHOST_NET",
        ));
    }
    out
}
