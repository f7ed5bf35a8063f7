use super::{has_cap_sys_admin, is_root, Check, NOT_CHECKED, RUN_ON_HOST};
use crate::root::SysRoot;

pub(super) fn namespaces(sys: &SysRoot) -> Check {
    const NAME: &str = "network namespaces";
    if !sys.exists("proc/self/ns/net") {
        return Check::missing(
            NAME,
            "no /proc/self/ns/net",
            "use a kernel with CONFIG_NET_NS=y",
        );
    }
    if !sys.is_host() {
        return Check::partial(
            NAME,
            format!("/proc/self/ns/net present; unshare(CLONE_NEWNET) {NOT_CHECKED}"),
            RUN_ON_HOST,
        );
    }
    // unshare itself is not tried: it would move this process into a new namespace.
    if is_root() || has_cap_sys_admin(sys) {
        Check::ok(
            NAME,
            "supported, and unshare(CLONE_NEWNET) is allowed (CAP_SYS_ADMIN)",
        )
    } else {
        Check::partial(
            NAME,
            "supported, but creating one needs CAP_SYS_ADMIN",
            "run perflab as root for network-topology variants",
        )
    }
}

pub(super) fn irq_affinity(sys: &SysRoot) -> Check {
    const NAME: &str = "irq affinity";
    let irqs: Vec<String> = sys
        .list_dir("proc/irq")
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.parse::<u32>().is_ok())
        .filter(|n| sys.exists(&format!("proc/irq/{n}/smp_affinity_list")))
        .collect();
    if irqs.is_empty() {
        return Check::missing(
            NAME,
            "no /proc/irq/*/smp_affinity_list",
            "use a kernel with CONFIG_SMP and procfs mounted on /proc",
        );
    }
    let writable = irqs
        .iter()
        .filter(|n| sys.writable(&format!("proc/irq/{n}/smp_affinity_list")))
        .count();
    if writable == 0 {
        return Check::partial(
            NAME,
            format!(
                "{} IRQs, none with a writable smp_affinity_list",
                irqs.len()
            ),
            "run as root to steer interrupts",
        );
    }
    Check::ok(
        NAME,
        format!(
            "{writable} of {} IRQs have a writable smp_affinity_list",
            irqs.len()
        ),
    )
}
