//! perf events: perf_event_paranoid, and whether this process can count on itself,
//! tried with a real perf_event_open (then closed), since perf_event_paranoid alone does
//! not say whether a PMU exists.

use crate::perf_event as pe;
use crate::SysRoot;

/// The sysctl that says what an unprivileged process may count.
pub const PARANOID: &str = "proc/sys/kernel/perf_event_paranoid";
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;

/// Which counter the probe opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// task-clock: perf events at all.
    Software,
    /// instructions: a PMU.
    Hardware,
}

impl Counter {
    /// The counter's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Software => "task-clock",
            Counter::Hardware => "instructions counter",
        }
    }

    fn attr(self) -> (u32, u64) {
        match self {
            Counter::Software => (pe::PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
            Counter::Hardware => (pe::PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
        }
    }
}

/// What opening the counter did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// No perf_event_paranoid: a kernel without CONFIG_PERF_EVENTS.
    NoPerfEvents,
    /// A captured tree: perflab cannot open counters of another machine.
    NotChecked,
    Opens,
    /// Refused with EACCES or EPERM: perf_event_paranoid or a missing capability.
    Denied,
    /// Refused otherwise (no PMU, seccomp): the errno.
    Failed(i32),
}

/// The answer for one counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerfEvents {
    /// [`paranoid_text`] of the machine.
    pub paranoid: String,
    pub opened: Opened,
}

/// The value of perf_event_paranoid, if the kernel has perf events.
pub fn paranoid(sys: &SysRoot) -> Option<String> {
    sys.read_trimmed(PARANOID).ok()
}

/// `perf_event_paranoid=2`, or why there is none: the words every refusal cites.
pub fn paranoid_text(sys: &SysRoot) -> String {
    match paranoid(sys) {
        Some(v) => format!("perf_event_paranoid={v}"),
        None => "no perf_event_paranoid (kernel without CONFIG_PERF_EVENTS?)".into(),
    }
}

/// Whether `counter` opens on the calling thread.
pub fn perf_events(sys: &SysRoot, counter: Counter) -> PerfEvents {
    let opened = if !sys.exists(PARANOID) {
        Opened::NoPerfEvents
    } else if !sys.is_host() {
        Opened::NotChecked
    } else {
        let (type_, config) = counter.attr();
        match try_open(type_, config) {
            Ok(()) => Opened::Opens,
            Err(e) if e == libc::EACCES || e == libc::EPERM => Opened::Denied,
            Err(e) => Opened::Failed(e),
        }
    };
    PerfEvents {
        paranoid: paranoid_text(sys),
        opened,
    }
}

/// Opens a counter on the calling thread and closes it; the errno on failure.
fn try_open(type_: u32, config: u64) -> Result<(), i32> {
    // Disabled, and user space only, so perf_event_paranoid=2 still allows it.
    let flags = pe::FLAG_DISABLED | pe::FLAG_EXCLUDE_KERNEL | pe::FLAG_EXCLUDE_HV;
    pe::open(type_, config, 0, flags, 0, -1).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_reads_paranoid_but_opens_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        let none = perf_events(&sys, Counter::Software);
        assert_eq!(none.opened, Opened::NoPerfEvents);
        assert!(
            none.paranoid.starts_with("no perf_event_paranoid"),
            "{none:?}"
        );
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::write(sys.path(PARANOID), "2\n").unwrap();
        let tree = perf_events(&sys, Counter::Hardware);
        assert_eq!(tree.opened, Opened::NotChecked);
        assert_eq!(tree.paranoid, "perf_event_paranoid=2");
    }
}
