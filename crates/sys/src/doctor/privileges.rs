use perflab_core::Need;

use super::check::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::probe::privileges::{privileges as probe, Privileges};
use crate::root::SysRoot;

pub(super) fn privileges(sys: &SysRoot) -> Check {
    const NAME: Need = Need::Privileges;
    match probe(sys) {
        Privileges::NotChecked => Check::partial(NAME, NOT_CHECKED, RUN_ON_HOST),
        Privileges::Root => Check::ok(NAME, "running as root"),
        Privileges::CapSysAdmin => Check::ok(NAME, "not root, but CAP_SYS_ADMIN is effective"),
        Privileges::Unprivileged => Check::missing(
            NAME,
            "not root and no CAP_SYS_ADMIN: knobs (idle states, PM QoS, IRQ affinity, huge \
             pages) and network namespaces are unavailable",
            "run perflab with sudo, or grant CAP_SYS_ADMIN",
        ),
    }
}
