use perflab_core::Need;

use super::check::Check;
use crate::probe::privileges::{privileges, Privileges};
use crate::probe::schedstat::{schedstat as probe_schedstat, Schedstat};
use crate::probe::tracefs::{tracefs as probe_tracefs, Tracefs};
use crate::root::SysRoot;

pub(super) fn tracefs(sys: &SysRoot) -> Check {
    const NAME: Need = Need::Tracefs;
    const HINT: &str = "mount -t tracefs nodev /sys/kernel/tracing; `--monitors trace` \
                        (span tracing) also needs root to make its own ftrace instance";
    // Only root (or CAP_SYS_ADMIN) makes an ftrace instance; a captured tree cannot say.
    let who = privileges(sys);
    match probe_tracefs(sys) {
        Tracefs::Mounted { at, events } => {
            let detail = format!(
                "mounted at /{at}{}",
                if events { "" } else { " (no available_events)" }
            );
            if who == Privileges::Unprivileged {
                return Check::partial(
                    NAME,
                    format!("{detail}, but `--monitors trace` needs root for its ftrace instance"),
                    "run perflab as root to trace spans",
                );
            }
            Check::ok(NAME, detail)
        }
        Tracefs::Unmounted if who.allowed() => Check::ok(
            NAME,
            "not mounted; `--monitors trace` mounts a private tracefs under /run/perflab \
             while it runs",
        ),
        Tracefs::Unmounted => Check::missing(
            NAME,
            "/sys/kernel/tracing exists but tracefs is not mounted",
            HINT,
        ),
        Tracefs::Absent => Check::missing(NAME, "no tracefs (CONFIG_FTRACE?)", HINT),
    }
}

pub(super) fn schedstat(sys: &SysRoot) -> Check {
    const NAME: Need = Need::Schedstat;
    let (version, collecting) =
        match probe_schedstat(sys) {
            Schedstat::Absent => return Check::missing(
                NAME,
                "no /proc/schedstat",
                "use a kernel with CONFIG_SCHEDSTATS=y, then `sysctl kernel.sched_schedstats=1`",
            ),
            Schedstat::Present {
                version,
                collecting,
            } => (version, collecting),
        };
    let version = version
        .map(|v| format!(" (version {v})"))
        .unwrap_or_default();
    match collecting.as_deref() {
        Some("0") => Check::partial(
            NAME,
            format!("/proc/schedstat present{version}, kernel.sched_schedstats=0"),
            "`sysctl kernel.sched_schedstats=1` to collect the wait-time statistics",
        ),
        Some(v) => Check::ok(
            NAME,
            format!("/proc/schedstat present{version}, kernel.sched_schedstats={v}"),
        ),
        None => Check::ok(NAME, format!("/proc/schedstat present{version}")),
    }
}
