//! Which CPUs several threads had to share, and for how much of the window.
//!
//! A thread's home CPU is the one it was pinned to, or else the CPU that holds a majority
//! of its `sched_getcpu` samples; a thread that wandered without a majority has no home
//! and is not counted on any CPU (its samples still show in the per-thread records).
//! For each CPU that is home to two or more threads, a sweep over their intervals gives
//! the time in which at least two of them were running there.

use std::collections::BTreeMap;

use super::verdict::Span;

/// A CPU that several threads ran on at the same time.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedCpu {
    pub cpu: u32,
    /// The most threads running on it at once.
    pub threads: usize,
    /// Share of the window in which at least two of them were running.
    pub fraction: f64,
    /// True when every one of them was pinned there (exact); false when some were placed
    /// by their CPU samples (an estimate).
    pub pinned: bool,
}

/// The CPU a span ran on for most of its life, and whether that is from pinning.
fn home(s: &Span) -> Option<(u32, bool)> {
    if let Some(c) = s.pinned_cpu {
        return Some((c, true));
    }
    let total = s
        .cpu_samples
        .iter()
        .fold(0u128, |a, &(_, n)| a + u128::from(n));
    s.cpu_samples
        .iter()
        .find(|&&(_, n)| u128::from(n) * 2 > total)
        .map(|&(c, _)| (c, false))
}

/// CPUs home to two or more threads that overlapped in time, most shared first.
pub fn shared_cpus(spans: &[Span], window_ns: u64) -> Vec<SharedCpu> {
    let mut by_cpu: BTreeMap<u32, Vec<(&Span, bool)>> = BTreeMap::new();
    for s in spans {
        if let Some((cpu, pinned)) = home(s) {
            by_cpu.entry(cpu).or_default().push((s, pinned));
        }
    }
    let mut out = Vec::new();
    for (cpu, members) in by_cpu {
        if members.len() < 2 || window_ns == 0 {
            continue;
        }
        // Ends sort before starts at the same instant: touching intervals do not overlap.
        let mut events: Vec<(u64, i32)> = members
            .iter()
            .flat_map(|(s, _)| [(s.start_ns, 1), (s.end_ns, -1)])
            .collect();
        events.sort_unstable();
        let (mut running, mut most, mut shared_ns) = (0i32, 0i32, 0u64);
        let mut last = 0u64;
        for (t, step) in events {
            if running >= 2 {
                shared_ns += t.saturating_sub(last);
            }
            running += step;
            most = most.max(running);
            last = t;
        }
        if shared_ns == 0 {
            continue;
        }
        out.push(SharedCpu {
            cpu,
            threads: most.max(0) as usize,
            fraction: (shared_ns as f64 / window_ns as f64).min(1.0),
            pinned: members.iter().all(|&(_, p)| p),
        });
    }
    out.sort_by(|a, b| {
        b.fraction
            .total_cmp(&a.fraction)
            .then(b.threads.cmp(&a.threads))
            .then(a.cpu.cmp(&b.cpu))
    });
    out
}
