//! The events the monitor counts, named as `perf list` names them.

use perflab_core::Unit;

use super::perf::{PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_SOFTWARE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Kernel software counters: present wherever perf events are.
    Software,
    /// Need a PMU; a VM without a virtual PMU has none.
    Hardware,
}

#[derive(Debug)]
pub(crate) struct Event {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: Kind,
    pub attr: (u32, u64),
    /// Recorded with kernel-mode registers, so a user-only counter reads a false 0.
    pub kernel_only: bool,
    /// Clocks count nanoseconds; rows give milliseconds.
    pub clock: bool,
}

impl Event {
    pub fn unit(&self) -> Unit {
        if self.clock {
            Unit::Milliseconds
        } else {
            Unit::Count
        }
    }

    /// The raw value in the row's unit.
    pub fn value(&self, raw: f64) -> f64 {
        if self.clock {
            raw / 1e6
        } else {
            raw
        }
    }
}

const fn sw(name: &'static str, label: &'static str, config: u64, kernel_only: bool) -> Event {
    Event {
        name,
        label,
        kind: Kind::Software,
        attr: (PERF_TYPE_SOFTWARE, config),
        kernel_only,
        clock: config <= 1,
    }
}

const fn hw(name: &'static str, label: &'static str, config: u64) -> Event {
    Event {
        name,
        label,
        kind: Kind::Hardware,
        attr: (PERF_TYPE_HARDWARE, config),
        kernel_only: false,
        clock: false,
    }
}

/// A generalized cache event: cache id | op << 8 | result << 16 (op READ = 0).
const fn cache(name: &'static str, label: &'static str, cache: u64, miss: bool) -> Event {
    Event {
        name,
        label,
        kind: Kind::Hardware,
        attr: (PERF_TYPE_HW_CACHE, cache | (miss as u64) << 16),
        kernel_only: false,
        clock: false,
    }
}

const L1D: u64 = 0;
const LL: u64 = 2;

/// task-clock counts a task's time on CPU; for a whole CPU perf uses cpu-clock instead.
pub(crate) const TASK_CLOCK: Event = sw("task-clock", "CPU time of the workload's tasks", 1, false);
pub(crate) const CPU_CLOCK: Event = sw("cpu-clock", "time the CPU was counted", 0, false);

/// Every other event, software first (they decide whether kernel mode may be counted).
pub(crate) const EVENTS: &[Event] = &[
    sw("context-switches", "context switches", 3, true),
    sw("cpu-migrations", "migrations to another CPU", 4, true),
    sw("page-faults", "page faults", 2, false),
    hw("cycles", "CPU cycles", 0),
    hw("instructions", "instructions retired", 1),
    hw(
        "cache-references",
        "cache references (usually last-level)",
        2,
    ),
    hw("cache-misses", "cache misses (usually last-level)", 3),
    cache("L1-dcache-loads", "L1 data cache loads", L1D, false),
    cache(
        "L1-dcache-load-misses",
        "L1 data cache load misses",
        L1D,
        true,
    ),
    cache("LLC-loads", "last-level cache loads", LL, false),
    cache("LLC-load-misses", "last-level cache load misses", LL, true),
];

/// Derived ratios: (key, numerator, denominator, percent?).
pub(crate) const DERIVED: &[(&str, &str, &str, bool)] = &[
    ("ipc", "instructions", "cycles", false),
    ("cache_miss_rate", "cache-misses", "cache-references", true),
    (
        "L1-dcache-miss_rate",
        "L1-dcache-load-misses",
        "L1-dcache-loads",
        true,
    ),
    ("LLC-miss_rate", "LLC-load-misses", "LLC-loads", true),
];

/// The counts `per_byte` divides by the bytes a workload moved: the cache misses, and the
/// page faults, whose rate per byte shows the page size the buffers really got (one per
/// 4096 bytes on 4 KiB pages, one per 2 MiB on huge pages) on machines without a PMU too.
pub(crate) const PER_BYTE: &[&str] = &[
    "cache-misses",
    "L1-dcache-load-misses",
    "LLC-load-misses",
    "page-faults",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_configs_match_the_kernel_encoding() {
        let find = |n: &str| EVENTS.iter().find(|e| e.name == n).unwrap().attr;
        // Values from perf's own tables (tools/perf/util/evsel.c): LLC-load-misses is
        // PERF_COUNT_HW_CACHE_LL | OP_READ << 8 | RESULT_MISS << 16 = 0x10002.
        assert_eq!(find("LLC-load-misses"), (PERF_TYPE_HW_CACHE, 0x10002));
        assert_eq!(find("L1-dcache-loads"), (PERF_TYPE_HW_CACHE, 0));
        assert_eq!(find("instructions"), (PERF_TYPE_HARDWARE, 1));
        const { assert!(TASK_CLOCK.clock && CPU_CLOCK.clock) };
        assert!(!EVENTS.iter().any(|e| e.clock));
    }

    #[test]
    fn derived_and_per_byte_name_counted_events() {
        for (_, num, den, _) in DERIVED {
            assert!(EVENTS.iter().any(|e| e.name == *num));
            assert!(EVENTS.iter().any(|e| e.name == *den));
        }
        for n in PER_BYTE {
            assert!(EVENTS.iter().any(|e| e.name == *n));
        }
    }
}
