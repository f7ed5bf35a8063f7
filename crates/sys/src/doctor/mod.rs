//! The machine readers of `perflab doctor`: one line per capability perflab can use,
//! saying whether this machine (or fixture tree) has it, and how to enable it when it does
//! not. Which plug-ins need a capability is not known here: `crates/doctor` runs these
//! readers and matches each line to the needs the registered plug-ins declare.
//!
//! Checks that need the live machine (effective uid, perf_event_open, namespaces) run
//! only when the root is the host; on a fixture tree they say "not checked: fixture tree".

use serde::Serialize;

use crate::root::SysRoot;

mod cpu;
mod dma;
mod idle;
mod kernel;
mod memory;
mod net;
mod netpaths;
mod perf;
mod privileges;

/// How much of a capability is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Missing,
    /// Present in part, or not checkable here (see the detail).
    Partial,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::Partial => "partial",
        }
    }
}

/// One capability's verdict. Every `Missing` or `Partial` carries a hint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub hint: Option<String>,
}

impl Check {
    pub fn ok(name: &str, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Ok,
            detail: detail.into(),
            hint: None,
        }
    }

    pub fn missing(name: &str, detail: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Missing,
            detail: detail.into(),
            hint: Some(hint.into()),
        }
    }

    pub fn partial(name: &str, detail: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Partial,
            detail: detail.into(),
            hint: Some(hint.into()),
        }
    }
}

/// Detail and hint of a live check skipped on a fixture tree.
pub(crate) const NOT_CHECKED: &str = "not checked: fixture tree";
pub(crate) const RUN_ON_HOST: &str = "run `perflab doctor` on the machine itself";

/// Runs every reader, in a fixed order (`perflab_core::Need::check` names these lines).
pub fn probe(sys: &SysRoot) -> Vec<Check> {
    vec![
        privileges::privileges(sys),
        cpu::topology(sys),
        cpu::isolation(sys),
        idle::cpuidle(sys),
        idle::pm_qos(sys),
        idle::cpufreq(sys),
        perf::software(sys),
        perf::hardware(sys),
        kernel::tracefs(sys),
        memory::huge_pages(sys),
        net::namespaces(sys),
        net::irq_affinity(sys),
        netpaths::ip_tool(sys),
        netpaths::openvswitch(sys),
        kernel::schedstat(sys),
        dma::dmatest(sys),
    ]
}

/// Names of the checks `probe` returns, in order.
pub const CHECK_NAMES: &[&str] = &[
    "privileges",
    "cpu topology",
    "isolation",
    "cpuidle",
    "pm qos",
    "cpufreq",
    "perf software events",
    "perf hardware events",
    "tracefs",
    "huge pages",
    "network namespaces",
    "irq affinity",
    "ip tool",
    "openvswitch",
    "schedstat",
    "dmatest",
];

/// Whether this process has CAP_SYS_ADMIN in its effective set (bit 21 of CapEff in
/// /proc/self/status), which is what namespaces, PM QoS and most knobs need.
pub(crate) fn has_cap_sys_admin(sys: &SysRoot) -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    sys.read_string("proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
}

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
