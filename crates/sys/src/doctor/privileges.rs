use super::{has_cap_sys_admin, is_root, Check, NOT_CHECKED, RUN_ON_HOST};
use crate::root::SysRoot;

const NAME: &str = "privileges";

pub(super) fn privileges(sys: &SysRoot) -> Check {
    if !sys.is_host() {
        return Check::partial(NAME, NOT_CHECKED, RUN_ON_HOST);
    }
    if is_root() {
        return Check::ok(NAME, "running as root");
    }
    if has_cap_sys_admin(sys) {
        return Check::ok(NAME, "not root, but CAP_SYS_ADMIN is effective");
    }
    Check::missing(
        NAME,
        "not root and no CAP_SYS_ADMIN: knobs (idle states, PM QoS, IRQ affinity, huge pages) \
         and network namespaces are unavailable",
        "run perflab with sudo, or grant CAP_SYS_ADMIN",
    )
}
