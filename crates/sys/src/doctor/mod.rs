//! The machine lines of `perflab doctor`: one line per capability perflab can use,
//! saying whether this machine (or fixture tree) has it, and how to enable it when it does
//! not. Each line renders the answer of the probe in [`crate::probe`] that the knob or
//! monitor needing the capability asks too, and names the [`perflab_core::Need`] it
//! answers; which plug-ins declare that need is not known here: `crates/doctor` matches
//! the lines to the registered plug-ins by it.
//!
//! Checks that need the live machine (effective uid, perf_event_open, bpf(), namespaces)
//! run only when the root is the host; on a fixture tree they say "not checked: fixture
//! tree".

mod bpf;
mod check;
mod cpu;
mod dma;
mod idle;
mod kernel;
mod memory;
mod net;
mod netpaths;
mod perf;
mod privileges;

pub use check::{Check, Line, Status, NOT_CHECKED, RUN_ON_HOST};

use crate::root::SysRoot;

/// Runs every line, in a fixed order (the names are [`CHECK_NAMES`]).
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
        memory::locked_memory(sys),
        net::namespaces(sys),
        net::irq_affinity(sys),
        netpaths::ip_tool(sys),
        netpaths::openvswitch(sys),
        kernel::schedstat(sys),
        dma::dmatest(sys),
    ]
}

/// Names of the lines `probe` returns, in order.
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
    "locked memory",
    "network namespaces",
    "irq affinity",
    "ip tool",
    "openvswitch",
    "schedstat",
    "dmatest",
];

/// The `bpf` line: whether programs load here, and whether raw tracepoints can read
/// struct fields (BTF). Live only: `None` on a fixture tree. Apart from [`probe`]
/// because `perflab doctor` shows it beside the trace monitor's backend line.
pub fn bpf(sys: &SysRoot) -> Option<Check> {
    bpf::bpf(sys)
}
