//! Telemetry monitors: each snapshots a kernel counter source at `start` and returns the
//! deltas at `finish`, per CPU of the measurement and as totals over the machine.
//!
//! Row conventions (the store, reports and studies rely on them):
//! - `interrupts`: key = row name (`LOC`, `24`), label = the row's text, one row per CPU
//!   of the measurement and a total (`cpu: None`); rows are matched by (name, text, n-th
//!   occurrence) since POWER repeats `LOC`.
//! - `softirqs`: key = vector name (`TIMER`, `NET_RX`), same shape.
//! - `cpu_time`: keys `user` … `steal`, milliseconds.
//! - `cpuidle`: `{state}:usage`, `{state}:time` (µs), `{state}:disabled` (value at finish).
//! - `placement`: key = thread role, value = samples seen on each CPU; `{role}:migrations`.
//! - `counters` / `counters-cpu`: key = perf event name (`cycles`, `L1-dcache-load-misses`;
//!   `task-clock`/`cpu-clock` in milliseconds), `{event}:running_pct` for multiplexed
//!   events, derived `ipc`, `cache_miss_rate`, `L1-dcache-miss_rate`, `LLC-miss_rate`.
//!   `counters` has totals only (the process); `counters-cpu` has the measurement's CPUs
//!   and their total (not the whole machine). See [`counters`].
//!
//! - `disturbance`: totals only: `other_work:pct`, `other_work_ms`, `study_ms`,
//!   `steal_ms`, `capacity_ms`, `granularity_ms`, `cpu_pressure:pct`, `procs_running`.
//!   Every run carries it, named or not. See [`disturbance`].
//! - `trace`: key = `{set}.{span}:{stat}` (`count`, `p50`, `p90`, `p99`, `mean`, `max` in
//!   ns, `unmatched`), label = the span's label, totals only, in the set's order. See
//!   [`trace`].
//!
//! A measurement with no CPUs of its own (`ctx.cpus` empty) gets only the totals.
//!
//! Each monitor declares its `DESCRIPTOR` (name, help, needs, and the report hints that
//! word and group its rows) in its own file; [`registry`] lists them, one line each, and
//! `names`, `by_name`, the defaults, `perflab list`, `perflab doctor` and the report read
//! it (docs/plugins.md).

mod counter;
pub mod counters;
pub mod cpu_time;
pub mod cpuidle;
pub mod disturbance;
pub mod fake;
pub mod interrupts;
pub mod isolation;
pub mod placement;
pub mod pressure;
pub mod sched_totals;
mod snapshot;
pub mod softirqs;
pub mod trace;
pub mod vmstat;

use std::sync::LazyLock;

use perflab_core::{Descriptor, Monitor, Registered, Registry};

pub use counters::CountersMonitor;
pub use cpu_time::CpuTimeMonitor;
pub use cpuidle::CpuidleMonitor;
pub use fake::FakeMonitor;
pub use interrupts::InterruptsMonitor;
pub use isolation::IsolationMonitor;
pub use placement::PlacementMonitor;
pub use softirqs::SoftirqsMonitor;
pub use trace::TraceMonitor;

/// One monitor in the registry: its descriptor (declared in its own file), how to make a
/// fresh one, and whether a run uses it when the user names none.
pub struct Entry {
    pub descriptor: &'static Descriptor,
    pub make: fn() -> Box<dyn Monitor>,
    pub default: bool,
}

impl Registered for Entry {
    fn descriptor(&self) -> &'static Descriptor {
        self.descriptor
    }
}

// One line per monitor, the deterministic `fake` last. counters is a default so every
// result carries its counts; counters-cpu needs privileges and counts other tasks too,
// so it is asked for by name.
#[rustfmt::skip]
static REGISTRY: Registry<Entry> = Registry::new(&[
    Entry { descriptor: &interrupts::DESCRIPTOR, make: || Box::new(InterruptsMonitor::default()), default: true },
    Entry { descriptor: &softirqs::DESCRIPTOR, make: || Box::new(SoftirqsMonitor::default()), default: true },
    Entry { descriptor: &cpu_time::DESCRIPTOR, make: || Box::new(CpuTimeMonitor::default()), default: true },
    Entry { descriptor: &cpuidle::DESCRIPTOR, make: || Box::new(CpuidleMonitor::default()), default: true },
    Entry { descriptor: &placement::DESCRIPTOR, make: || Box::new(PlacementMonitor), default: true },
    Entry { descriptor: &isolation::DESCRIPTOR, make: || Box::new(IsolationMonitor::default()), default: false },
    Entry { descriptor: &counters::DESCRIPTOR, make: || Box::new(CountersMonitor::per_process()), default: true },
    Entry { descriptor: &counters::CPU_DESCRIPTOR, make: || Box::new(CountersMonitor::per_cpu()), default: false },
    Entry { descriptor: &trace::DESCRIPTOR, make: || Box::new(TraceMonitor::new(trace::Choice::Auto)), default: false },
    Entry { descriptor: &vmstat::DESCRIPTOR, make: || Box::new(vmstat::VmstatMonitor::default()), default: false },
    Entry { descriptor: &sched_totals::DESCRIPTOR, make: || Box::new(sched_totals::SchedTotalsMonitor::default()), default: false },
    Entry { descriptor: &pressure::DESCRIPTOR, make: || Box::new(pressure::PressureMonitor::default()), default: false },
    Entry { descriptor: &disturbance::DESCRIPTOR, make: || Box::new(disturbance::DisturbanceMonitor::default()), default: true },
    Entry { descriptor: &fake::DESCRIPTOR, make: || Box::new(FakeMonitor::default()), default: false },
]);

static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| REGISTRY.names());
static DEFAULTS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    REGISTRY
        .entries()
        .iter()
        .filter(|e| e.default)
        .map(|e| e.descriptor.name)
        .collect()
});

/// Every monitor, in the order `perflab list` shows them.
pub fn registry() -> &'static [Entry] {
    REGISTRY.entries()
}

/// Every monitor name `by_name` accepts, the deterministic `fake` last.
pub fn names() -> &'static [&'static str] {
    &NAMES
}

/// The monitors a run uses when the user names none.
pub fn default_names() -> &'static [&'static str] {
    &DEFAULTS
}

/// The descriptor of the monitor whose rows carry `source` (`trace` for `trace:netrx`).
pub fn descriptor(source: &str) -> Option<&'static Descriptor> {
    let base = source.split_once(':').map_or(source, |(b, _)| b);
    REGISTRY
        .get(source)
        .or_else(|| REGISTRY.get(base))
        .map(|e| e.descriptor)
}

/// Installs the monitors' descriptors and their built-in span sets' outlines in
/// [`perflab_core::catalog`], where the report reads them without linking the monitors.
pub fn install_catalog() {
    perflab_core::catalog::install_monitors(REGISTRY.descriptors().collect());
    perflab_core::catalog::install_span_sets(|name| {
        trace::spans::built_in(name).map(|s| s.outline())
    });
}

/// Checks a monitor name that carries an argument (`trace:FILE.toml`) against this
/// machine: the one-line error is bad input. Plain names pass (`by_name` knows them).
pub fn check(name: &str, sys: &perflab_sys::SysRoot) -> Result<(), String> {
    trace::check_name(name, sys)
}

/// A fresh monitor by name (`trace:SET` and `trace:FILE.toml` included).
pub fn by_name(name: &str) -> Option<Box<dyn Monitor>> {
    if let Some(t) = TraceMonitor::from_name(name) {
        return t.ok().map(|m| Box::new(m) as Box<dyn Monitor>);
    }
    REGISTRY.get(name).map(|e| (e.make)())
}

/// Fresh instances of the default monitors.
pub fn default_monitors() -> Vec<Box<dyn Monitor>> {
    REGISTRY
        .entries()
        .iter()
        .filter(|e| e.default)
        .map(|e| (e.make)())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_match_monitors() {
        for &n in names() {
            assert_eq!(by_name(n).unwrap().name(), n);
        }
        assert!(by_name("nope").is_none());
        assert_eq!(by_name("trace:netrx").unwrap().name(), "trace");
        assert!(by_name("trace:nope").is_none());
        let defaults: Vec<&str> = default_monitors().iter().map(|m| m.name()).collect();
        assert_eq!(defaults, default_names());
        assert!(!defaults.contains(&"fake"));
        assert_eq!(
            defaults,
            [
                "interrupts",
                "softirqs",
                "cpu_time",
                "cpuidle",
                "placement",
                "counters",
                "disturbance"
            ]
        );
    }

    #[test]
    fn descriptors_are_monitors_with_row_hints() {
        for e in registry() {
            let d = e.descriptor;
            assert_eq!(d.kind, perflab_core::Kind::Monitor, "{}", d.name);
            assert!(d.rows().is_some() && !d.help.is_empty(), "{}", d.name);
        }
        assert_eq!(descriptor("trace:netrx").map(|d| d.name), Some("trace"));
        assert_eq!(
            descriptor("counters-cpu").map(|d| d.name),
            Some("counters-cpu")
        );
        assert!(descriptor("no-such-monitor").is_none());
    }
}
