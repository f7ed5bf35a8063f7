//! Per-thread records taken by the workload threads themselves.
//!
//! A thread's placement has to be observed while it lives (its /proc entry disappears when
//! it exits), so each workload thread carries a `ThreadProbe`, samples its CPU with
//! `sched_getcpu` at points the workload chooses (outside its timed hot path where it can),
//! and hands the record to the shared `ThreadTracker` when it ends.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::output::ThreadRecord;

/// CLOCK_MONOTONIC in nanoseconds: the one clock all thread records use.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

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

/// Collects the records of all threads of one measurement.
#[derive(Debug, Default)]
pub struct ThreadTracker {
    records: Mutex<Vec<ThreadRecord>>,
}

impl ThreadTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Called from inside a workload thread when it starts its work.
    pub fn begin(&self, role: &str, pinned_cpu: Option<u32>) -> ThreadProbe {
        let mut probe = ThreadProbe {
            record: ThreadRecord {
                role: role.to_string(),
                tid: current_tid(),
                pinned_cpu,
                start_ns: monotonic_ns(),
                ..Default::default()
            },
            samples: BTreeMap::new(),
        };
        probe.sample_cpu();
        probe
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

/// The running record of one thread.
#[derive(Debug)]
pub struct ThreadProbe {
    record: ThreadRecord,
    samples: BTreeMap<u32, u64>,
}

impl ThreadProbe {
    /// Notes which CPU the thread is on now (a vDSO-cheap call).
    pub fn sample_cpu(&mut self) {
        if let Some(cpu) = current_cpu() {
            *self.samples.entry(cpu).or_default() += 1;
        }
    }

    /// Closes the record, still on the thread, and hands it to the tracker.
    pub fn finish(mut self, tracker: &ThreadTracker, bytes: Option<u64>) {
        self.sample_cpu();
        self.record.end_ns = monotonic_ns();
        self.record.bytes = bytes;
        self.record.cpu_samples = self.samples.into_iter().collect();
        // The thread's own live scheduler counters: these describe this process on the
        // running kernel, not the machine's configuration, so they are read from the real
        // /proc rather than through a SysRoot that may point at another machine's tree.
        self.record.migrations = std::fs::File::open("/proc/thread-self/sched")
            .ok()
            .and_then(|f| perflab_sys::sched::parse_nr_migrations(std::io::BufReader::new(f)));
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes into the rusage we own.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } == 0 {
            self.record.voluntary_switches = Some(ru.ru_nvcsw as u64);
            self.record.involuntary_switches = Some(ru.ru_nivcsw as u64);
        }
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
        assert!(tracker.take().is_empty());
    }
}
