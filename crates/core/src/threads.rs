//! Per-thread records taken by the workload threads themselves.
//!
//! A thread's placement has to be observed while it lives (its /proc entry disappears when
//! it exits), so each workload thread carries a `ThreadProbe`, samples its CPU with
//! `sched_getcpu` at points the workload chooses (outside its timed hot path where it can),
//! and hands the record to the shared `ThreadTracker` when it ends.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::Mutex;

use crate::output::{ThreadCount, ThreadRecord};
use crate::perf_event;
use crate::thread_accounting::{Accounted, Reading};

pub use crate::clocks::{monotonic_ns, thread_cpu_ns};

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no arguments and no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as u32)
}

/// The kernel thread id of the calling thread.
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// A perf event every workload thread counts on itself, as perf_event_open takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadEvent {
    pub name: &'static str,
    pub type_: u32,
    pub config: u64,
    /// perf_event_attr flag bits (exclude_kernel where only user mode may be counted).
    pub flags: u64,
}

/// Collects the records of all threads of one measurement.
#[derive(Debug, Default)]
pub struct ThreadTracker {
    records: Mutex<Vec<ThreadRecord>>,
    events: Mutex<Vec<ThreadEvent>>,
}

impl ThreadTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every thread that begins from now on count `events` on itself, so counts
    /// come per workload thread and not only summed over the process. The counters
    /// monitor calls it with the events it could open.
    pub fn count_per_thread(&self, events: Vec<ThreadEvent>) {
        *self.events.lock().unwrap_or_else(|e| e.into_inner()) = events;
    }

    /// Called from inside a workload thread when it starts its work.
    pub fn begin(&self, role: &str, pinned_cpu: Option<u32>) -> ThreadProbe {
        let mut probe = self.prepare(role, pinned_cpu);
        probe.start();
        probe
    }

    /// Opens the thread's counters without starting them, for a thread that waits at a
    /// start barrier after its set-up: opening is the slow part (tens of microseconds per
    /// event), so doing it before the barrier keeps it from staggering the threads' starts.
    /// [`ThreadProbe::start`] after the barrier starts the record and the counts.
    pub fn prepare(&self, role: &str, pinned_cpu: Option<u32>) -> ThreadProbe {
        let events = self
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // The software events come from the kernel's own accounting of the thread
        // (`thread_accounting`: a perf event per thread made every context switch dearer).
        // The rest are opened on the thread itself (pid 0), disabled until `start`, never
        // inherited: the count is this thread's alone. An event that fails to open is
        // left out; the monitor has already said which events this machine lacks.
        let counters = events
            .iter()
            .filter_map(|e| match Accounted::of(e.type_, e.config, e.flags) {
                Some(a) => Some((e.name, Counter::Kernel(a))),
                None => {
                    let flags = e.flags | perf_event::FLAG_DISABLED;
                    perf_event::open(e.type_, e.config, perf_event::READ_TIMES, flags, 0, -1)
                        .ok()
                        .map(|fd| (e.name, Counter::Perf(fd)))
                }
            })
            .collect();
        ThreadProbe {
            record: ThreadRecord {
                role: role.to_string(),
                tid: current_tid(),
                pinned_cpu,
                ..Default::default()
            },
            samples: BTreeMap::new(),
            counters,
            accounted_from: None,
        }
    }

    /// Adds a record a workload took where this tracker cannot be reached, such as a
    /// forked child process that sent its record back through a pipe.
    pub fn add(&self, record: ThreadRecord) {
        self.push(record);
    }

    /// Records of the finished threads, in the order they finished.
    pub fn take(&self) -> Vec<ThreadRecord> {
        std::mem::take(&mut *self.records.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A copy of the records so far, for monitors that report placement.
    pub fn snapshot(&self) -> Vec<ThreadRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn push(&self, record: ThreadRecord) {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
    }
}

/// Where one of a thread's counts comes from.
#[derive(Debug)]
enum Counter {
    Perf(OwnedFd),
    Kernel(Accounted),
}

/// The running record of one thread.
#[derive(Debug)]
pub struct ThreadProbe {
    record: ThreadRecord,
    samples: BTreeMap<u32, u64>,
    counters: Vec<(&'static str, Counter)>,
    /// The kernel's accounting of the thread at `start`, where a count comes from it.
    accounted_from: Option<Reading>,
}

impl ThreadProbe {
    /// Starts the record's interval and its counters (a cheap ioctl per counter).
    pub fn start(&mut self) {
        // A counter that cannot be enabled reads zero time enabled, which the record's
        // scaling reports as not counted rather than as a zero count.
        for (_, c) in &self.counters {
            if let Counter::Perf(fd) = c {
                let _ = perf_event::enable(fd);
            }
        }
        if self
            .counters
            .iter()
            .any(|(_, c)| matches!(c, Counter::Kernel(_)))
        {
            self.accounted_from = Some(Reading::now());
        }
        self.record.start_ns = monotonic_ns();
        self.sample_cpu();
    }

    /// Notes which CPU the thread is on now (a vDSO-cheap call; the clock is read only
    /// when the CPU changed, for the record's CPU path).
    pub fn sample_cpu(&mut self) {
        if let Some(cpu) = current_cpu() {
            *self.samples.entry(cpu).or_default() += 1;
            let start = self.record.start_ns;
            self.record
                .cpu_path
                .note(cpu, || monotonic_ns().saturating_sub(start));
        }
    }

    /// Closes the record, still on the thread, and hands it to the tracker.
    pub fn finish(mut self, tracker: &ThreadTracker, bytes: Option<u64>) {
        self.sample_cpu();
        self.record.end_ns = monotonic_ns();
        // One reading of the thread's accounting serves its counts and the record's
        // own scheduler figures. They describe this process on the running kernel, not
        // the machine's configuration, so they come from the real /proc and getrusage
        // rather than through a SysRoot that may point at another machine's tree.
        let end = Reading::now();
        self.record.counters = self
            .counters
            .iter()
            .filter_map(|(name, c)| match c {
                Counter::Perf(fd) => perf_event::read_times(fd)
                    .ok()
                    .map(|t| ThreadCount::from_times(name, t)),
                Counter::Kernel(a) => Some(ThreadCount {
                    event: name.to_string(),
                    value: self.accounted_from.and_then(|from| end.since(&from, *a)),
                    running_pct: None,
                }),
            })
            .collect();
        self.record.bytes = bytes;
        self.record.cpu_samples = self.samples.into_iter().collect();
        self.record.migrations = end.migrations;
        self.record.voluntary_switches = end.voluntary;
        self.record.involuntary_switches = end.involuntary;
        tracker.push(self.record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_a_thread() {
        let tracker = ThreadTracker::new();
        std::thread::scope(|s| {
            s.spawn(|| {
                let p = tracker.begin("worker", None);
                p.finish(&tracker, Some(42));
            });
        });
        let recs = tracker.take();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].role, "worker");
        assert_eq!(recs[0].bytes, Some(42));
        assert!(recs[0].end_ns >= recs[0].start_ns);
        assert!(!recs[0].cpu_samples.is_empty());
        assert!(recs[0].counters.is_empty(), "nothing asked for counts");
        // Counting per thread is tested where the counters monitor asks for it:
        // crates/monitors/tests/thread_counts.rs (it needs perf events, and visible skips).
        assert!(tracker.take().is_empty());
    }

    #[test]
    fn multiplexed_counts_are_scaled_and_unknown_when_never_running() {
        let c = ThreadCount::from_times("cycles", [1000, 400, 100]);
        assert_eq!(c.value, Some(4000.0));
        assert_eq!(c.running_pct, Some(25.0));
        let c = ThreadCount::from_times("cycles", [0, 400, 0]);
        assert_eq!(c.value, None);
        let c = ThreadCount::from_times("cycles", [0, 0, 0]);
        assert_eq!(c.value, None, "never enabled is unknown, not 0");
        let c = ThreadCount::from_times("task-clock", [7, 5, 5]);
        assert_eq!((c.value, c.running_pct), (Some(7.0), None));
    }
}
