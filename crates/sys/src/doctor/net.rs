use perflab_core::Need;

use super::check::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::probe::irq_affinity::irq_affinity as probe_irqs;
use crate::probe::net_namespaces::{net_namespaces, NetNamespaces};
use crate::root::SysRoot;

pub(super) fn namespaces(sys: &SysRoot) -> Check {
    const NAME: Need = Need::NetNamespaces;
    match net_namespaces(sys) {
        NetNamespaces::Absent => Check::missing(
            NAME,
            "no /proc/self/ns/net",
            "use a kernel with CONFIG_NET_NS=y",
        ),
        NetNamespaces::NotChecked => Check::partial(
            NAME,
            format!("/proc/self/ns/net present; unshare(CLONE_NEWNET) {NOT_CHECKED}"),
            RUN_ON_HOST,
        ),
        NetNamespaces::Allowed => Check::ok(
            NAME,
            "supported, and unshare(CLONE_NEWNET) is allowed (CAP_SYS_ADMIN)",
        ),
        NetNamespaces::NeedsCapSysAdmin => Check::partial(
            NAME,
            "supported, but creating one needs CAP_SYS_ADMIN",
            "run perflab as root for network-topology variants",
        ),
    }
}

pub(super) fn irq_affinity(sys: &SysRoot) -> Check {
    const NAME: Need = Need::IrqAffinity;
    let found = probe_irqs(sys);
    if found.irqs == 0 {
        return Check::missing(
            NAME,
            "no /proc/irq/*/smp_affinity_list",
            "use a kernel with CONFIG_SMP and procfs mounted on /proc",
        );
    }
    if found.writable == 0 {
        return Check::partial(
            NAME,
            format!(
                "{} IRQs, none with a writable smp_affinity_list",
                found.irqs
            ),
            "run as root to steer interrupts",
        );
    }
    Check::ok(
        NAME,
        format!(
            "{} of {} IRQs have a writable smp_affinity_list",
            found.writable, found.irqs
        ),
    )
}
