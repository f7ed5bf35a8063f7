//! perf events: can this process count on itself (the probe opens a real counter, since
//! perf_event_paranoid alone does not say whether a PMU exists).

use perflab_core::Need;

use super::check::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::probe::perf_events::{perf_events, Counter, Opened};
use crate::root::SysRoot;

fn denied_hint() -> &'static str {
    "run as root, or `sysctl kernel.perf_event_paranoid=1` (or lower)"
}

/// The line for one counter: missing without perf_event_paranoid, partial on a captured
/// tree, else the outcome of a real open. `failed` words a failure other than a
/// permission refusal as (detail, hint), given the error and the paranoid text.
fn line(
    sys: &SysRoot,
    need: Need,
    counter: Counter,
    failed: impl FnOnce(std::io::Error, &str) -> (String, &'static str),
) -> Check {
    let found = perf_events(sys, counter);
    let p = &found.paranoid;
    let what = counter.name();
    match found.opened {
        Opened::NoPerfEvents => {
            Check::missing(need, p.as_str(), "use a kernel with CONFIG_PERF_EVENTS=y")
        }
        Opened::NotChecked => Check::partial(
            need,
            format!("{p}; perf_event_open {NOT_CHECKED}"),
            RUN_ON_HOST,
        ),
        Opened::Opens => Check::ok(need, format!("{what} opens; {p}")),
        Opened::Denied => Check::missing(need, format!("{what} denied; {p}"), denied_hint()),
        Opened::Failed(errno) => {
            let (detail, hint) = failed(std::io::Error::from_raw_os_error(errno), p);
            Check::missing(need, detail, hint)
        }
    }
}

pub(super) fn software(sys: &SysRoot) -> Check {
    line(sys, Need::PerfSoftware, Counter::Software, |e, p| {
        (
            format!("task-clock failed: {e}; {p}"),
            "use a kernel with CONFIG_PERF_EVENTS=y; in a container, allow perf_event_open \
             in seccomp",
        )
    })
}

pub(super) fn hardware(sys: &SysRoot) -> Check {
    line(sys, Need::PerfHardware, Counter::Hardware, |e, _| {
        (
            format!("no PMU (virtual machine?): instructions counter failed with {e}"),
            "run on bare metal, or give the VM a virtual PMU (QEMU/KVM: -cpu host,pmu=on)",
        )
    })
}
