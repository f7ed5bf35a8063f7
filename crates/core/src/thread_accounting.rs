//! A thread's software counts from the kernel's own accounting of the task, in place of a
//! perf event per thread.
//!
//! The counters monitor counts the whole process with inherited perf events and asks every
//! workload thread for its own counts too. A second set of events on each thread costs
//! more than the first: tasks whose perf contexts are clones of one parent switch by
//! swapping context pointers, and a thread's own events end that, so every context switch
//! scheduled all of them out and in. On ctxsw that halved the rate (0.49 of it with
//! counters on, against 0.82 under `perf stat` with the same four software events). The
//! kernel already accounts the same quantities per task, at no cost to the switch:
//!
//! - task-clock: `CLOCK_THREAD_CPUTIME_ID`, the task's `sum_exec_runtime`, which is what
//!   the task-clock event adds up;
//! - context-switches: `getrusage(RUSAGE_THREAD)` voluntary + involuntary switches, counted
//!   at the same point of `__schedule` as the event (every switch away from the task);
//! - cpu-migrations: `se.nr_migrations` of `/proc/thread-self/sched`, incremented beside
//!   the event in `set_task_cpu` (the file needs SCHED_DEBUG; without it the event is
//!   opened as before);
//! - page-faults: rusage minor + major faults. The kernel counts these once a fault is
//!   handled, the event when the fault is taken, so a fault retried (after dropping the
//!   mmap lock) counts once here and once per try in perf.
//!
//! Only where kernel mode is counted: these counts do not separate user from kernel.

use crate::perf_event::{FLAG_EXCLUDE_KERNEL, PERF_TYPE_SOFTWARE};

/// A software event the kernel's task accounting gives per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accounted {
    TaskClock,
    ContextSwitches,
    CpuMigrations,
    PageFaults,
}

impl Accounted {
    /// The accounting that stands for the perf event `(type_, config)` opened with
    /// `flags`, if any (PERF_COUNT_SW_* numbering).
    pub fn of(type_: u32, config: u64, flags: u64) -> Option<Self> {
        if type_ != PERF_TYPE_SOFTWARE || flags & FLAG_EXCLUDE_KERNEL != 0 {
            return None;
        }
        match config {
            1 => Some(Self::TaskClock),
            2 => Some(Self::PageFaults),
            3 => Some(Self::ContextSwitches),
            4 if has_migrations() => Some(Self::CpuMigrations),
            _ => None,
        }
    }
}

/// The calling thread's accounting at one moment: what a thread record keeps of it at its
/// end too (switches, migrations), so the end is read once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    pub cpu_ns: u64,
    /// Voluntary and involuntary context switches (`None` where getrusage failed).
    pub voluntary: Option<u64>,
    pub involuntary: Option<u64>,
    pub faults: Option<u64>,
    pub migrations: Option<u64>,
}

impl Reading {
    /// The calling thread's counts now: two system calls and a /proc read.
    pub fn now() -> Self {
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes into the rusage we own.
        let ok = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } == 0;
        let field = |v: libc::c_long| ok.then_some(v.max(0) as u64);
        Self {
            cpu_ns: crate::clocks::thread_cpu_ns(),
            voluntary: field(ru.ru_nvcsw),
            involuntary: field(ru.ru_nivcsw),
            faults: field(ru.ru_minflt)
                .zip(field(ru.ru_majflt))
                .map(|(a, b)| a + b),
            migrations: read_migrations(),
        }
    }

    fn switches(&self) -> Option<u64> {
        Some(self.voluntary? + self.involuntary?)
    }

    /// The count of `event` from `start` to this reading, in the event's own unit
    /// (nanoseconds for task-clock); `None` where a side lacks it.
    pub fn since(&self, start: &Reading, event: Accounted) -> Option<f64> {
        let delta = |a: Option<u64>, b: Option<u64>| a?.checked_sub(b?).map(|d| d as f64);
        match event {
            Accounted::TaskClock => delta(Some(self.cpu_ns), Some(start.cpu_ns)),
            Accounted::ContextSwitches => delta(self.switches(), start.switches()),
            Accounted::PageFaults => delta(self.faults, start.faults),
            Accounted::CpuMigrations => delta(self.migrations, start.migrations),
        }
    }
}

/// `se.nr_migrations` of the calling thread. Read from the real /proc, not a SysRoot: it
/// describes this process on the running kernel.
fn read_migrations() -> Option<u64> {
    let f = std::fs::File::open("/proc/thread-self/sched").ok()?;
    crate::sched::parse_nr_migrations(std::io::BufReader::new(f))
}

/// Whether this kernel shows a thread's migrations (SCHED_DEBUG), asked once.
fn has_migrations() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| read_migrations().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_counted_software_events_are_accounted() {
        assert_eq!(Accounted::of(1, 1, 0), Some(Accounted::TaskClock));
        assert_eq!(Accounted::of(1, 3, 0), Some(Accounted::ContextSwitches));
        assert_eq!(Accounted::of(1, 2, 0), Some(Accounted::PageFaults));
        // cpu-clock, a hardware event, and user-only counting stay perf events.
        assert_eq!(Accounted::of(1, 0, 0), None);
        assert_eq!(Accounted::of(0, 1, 0), None);
        assert_eq!(Accounted::of(1, 3, FLAG_EXCLUDE_KERNEL), None);
    }

    #[test]
    fn counts_are_differences_and_a_missing_side_is_unknown() {
        let a = Reading {
            cpu_ns: 1_000,
            voluntary: Some(4),
            involuntary: Some(1),
            faults: Some(7),
            migrations: Some(1),
        };
        let b = Reading {
            cpu_ns: 4_500,
            voluntary: Some(7),
            involuntary: Some(2),
            faults: Some(7),
            migrations: None,
        };
        assert_eq!(b.since(&a, Accounted::TaskClock), Some(3_500.0));
        assert_eq!(b.since(&a, Accounted::ContextSwitches), Some(4.0));
        assert_eq!(b.since(&a, Accounted::PageFaults), Some(0.0));
        assert_eq!(b.since(&a, Accounted::CpuMigrations), None);
        // A reading older than the start (never: the counts only grow) is not a count.
        assert_eq!(a.since(&b, Accounted::TaskClock), None);
    }

    #[test]
    fn a_thread_that_sleeps_switches_and_one_that_spins_uses_cpu() {
        let start = Reading::now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let t0 = crate::clocks::thread_cpu_ns();
        while crate::clocks::thread_cpu_ns() - t0 < 2_000_000 {}
        let end = Reading::now();
        assert!(end.since(&start, Accounted::ContextSwitches).unwrap() >= 1.0);
        assert!(end.since(&start, Accounted::TaskClock).unwrap() >= 2e6);
    }
}
