use super::Check;
use crate::root::SysRoot;

pub(super) fn tracefs(sys: &SysRoot) -> Check {
    const NAME: &str = "tracefs";
    const HINT: &str = "mount -t tracefs nodev /sys/kernel/tracing; `--monitors trace` \
                        (span tracing) also needs root to make its own ftrace instance";
    // Only root (or CAP_SYS_ADMIN) makes an ftrace instance; a captured tree cannot say.
    let privileged = sys.is_host() && (is_root() || super::has_cap_sys_admin(sys));
    // The mount point exists even when tracefs is not mounted; a mounted tracefs has
    // `trace` in it.
    for dir in ["sys/kernel/tracing", "sys/kernel/debug/tracing"] {
        if sys.exists(&format!("{dir}/trace")) {
            let events = sys.exists(&format!("{dir}/available_events"));
            let detail = format!(
                "mounted at /{dir}{}",
                if events { "" } else { " (no available_events)" }
            );
            if sys.is_host() && !privileged {
                return Check::partial(
                    NAME,
                    format!("{detail}, but `--monitors trace` needs root for its ftrace instance"),
                    "run perflab as root to trace spans",
                );
            }
            return Check::ok(NAME, detail);
        }
    }
    if privileged && sys.exists("sys/kernel/tracing") {
        return Check::ok(
            NAME,
            "not mounted; `--monitors trace` mounts a private tracefs under /run/perflab \
             while it runs",
        );
    }
    let detail = if sys.exists("sys/kernel/tracing") {
        "/sys/kernel/tracing exists but tracefs is not mounted"
    } else {
        "no tracefs (CONFIG_FTRACE?)"
    };
    Check::missing(NAME, detail, HINT)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub(super) fn schedstat(sys: &SysRoot) -> Check {
    const NAME: &str = "schedstat";
    if !sys.exists("proc/schedstat") {
        return Check::missing(
            NAME,
            "no /proc/schedstat",
            "use a kernel with CONFIG_SCHEDSTATS=y, then `sysctl kernel.sched_schedstats=1`",
        );
    }
    let version = sys.read_string("proc/schedstat").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("version ").map(|v| v.trim().to_string()))
    });
    let version = version
        .map(|v| format!(" (version {v})"))
        .unwrap_or_default();
    match sys
        .read_trimmed("proc/sys/kernel/sched_schedstats")
        .as_deref()
    {
        Ok("0") => Check::partial(
            NAME,
            format!("/proc/schedstat present{version}, kernel.sched_schedstats=0"),
            "`sysctl kernel.sched_schedstats=1` to collect the wait-time statistics",
        ),
        Ok(v) => Check::ok(
            NAME,
            format!("/proc/schedstat present{version}, kernel.sched_schedstats={v}"),
        ),
        Err(_) => Check::ok(NAME, format!("/proc/schedstat present{version}")),
    }
}
