//! perf events: can this process count on itself? Tried with a real perf_event_open
//! (then closed), since perf_event_paranoid alone does not say whether a PMU exists.

use super::{Check, NOT_CHECKED, RUN_ON_HOST};
use crate::perf_event as pe;
use crate::root::SysRoot;

const PARANOID: &str = "proc/sys/kernel/perf_event_paranoid";
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;

/// Opens a counter on the calling thread and closes it; the errno on failure.
fn try_open(type_: u32, config: u64) -> Result<(), i32> {
    // Disabled, and user space only, so perf_event_paranoid=2 still allows it.
    let flags = pe::FLAG_DISABLED | pe::FLAG_EXCLUDE_KERNEL | pe::FLAG_EXCLUDE_HV;
    pe::open(type_, config, 0, flags, 0, -1).map(drop)
}

fn paranoid(sys: &SysRoot) -> String {
    match sys.read_trimmed(PARANOID) {
        Ok(v) => format!("perf_event_paranoid={v}"),
        Err(_) => "no perf_event_paranoid (kernel without CONFIG_PERF_EVENTS?)".into(),
    }
}

fn denied_hint() -> &'static str {
    "run as root, or `sysctl kernel.perf_event_paranoid=1` (or lower)"
}

/// Tries one counter (`counter` names it in messages): missing without
/// perf_event_paranoid, partial on a captured tree (it cannot open counters of another
/// machine), else the outcome of a real open. `failed` words a failure other than a
/// permission refusal as (detail, hint), given the error and the paranoid text.
fn probe(
    sys: &SysRoot,
    name: &str,
    counter: &str,
    (type_, config): (u32, u64),
    failed: impl FnOnce(std::io::Error, &str) -> (String, &'static str),
) -> Check {
    let p = paranoid(sys);
    if !sys.exists(PARANOID) {
        return Check::missing(name, p, "use a kernel with CONFIG_PERF_EVENTS=y");
    }
    if !sys.is_host() {
        return Check::partial(
            name,
            format!("{p}; perf_event_open {NOT_CHECKED}"),
            RUN_ON_HOST,
        );
    }
    match try_open(type_, config) {
        Ok(()) => Check::ok(name, format!("{counter} opens; {p}")),
        Err(e) if e == libc::EACCES || e == libc::EPERM => {
            Check::missing(name, format!("{counter} denied; {p}"), denied_hint())
        }
        Err(e) => {
            let (detail, hint) = failed(std::io::Error::from_raw_os_error(e), &p);
            Check::missing(name, detail, hint)
        }
    }
}

pub(super) fn software(sys: &SysRoot) -> Check {
    let task_clock = (pe::PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    probe(
        sys,
        "perf software events",
        "task-clock",
        task_clock,
        |e, p| {
            (
            format!("task-clock failed: {e}; {p}"),
            "use a kernel with CONFIG_PERF_EVENTS=y; in a container, allow perf_event_open in seccomp",
        )
        },
    )
}

pub(super) fn hardware(sys: &SysRoot) -> Check {
    let instructions = (pe::PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
    probe(
        sys,
        "perf hardware events",
        "instructions counter",
        instructions,
        |e, _| {
            (
                format!("no PMU (virtual machine?): instructions counter failed with {e}"),
                "run on bare metal, or give the VM a virtual PMU (QEMU/KVM: -cpu host,pmu=on)",
            )
        },
    )
}
