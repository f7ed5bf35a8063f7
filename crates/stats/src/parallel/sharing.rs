//! Which CPUs several threads had to share, and for how much of the window.
//!
//! Where each thread ran, in order of trust: the CPU it was pinned to for its whole
//! interval; else its CPU path (the CPU at each change its samples saw), one stay per CPU;
//! else the CPU that holds a majority of its `sched_getcpu` samples for its whole interval
//! (a thread that wandered without a majority or a path is not counted on any CPU; its
//! samples still show in the per-thread records). For each CPU, a sweep over the stays
//! placed there gives the time in which at least two threads were there at once.

use std::collections::BTreeMap;

use super::span::Span;

/// A CPU that several threads ran on at the same time.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedCpu {
    pub cpu: u32,
    /// The most threads running on it at once.
    pub threads: usize,
    /// Share of the window in which at least two of them were running.
    pub fraction: f64,
    /// True when every one of them was pinned there (exact); false when some were placed
    /// by their CPU samples or paths (an estimate).
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

/// Where a span was: (CPU, start, end, pinned) for each stay.
fn stays(s: &Span) -> Vec<(u32, u64, u64, bool)> {
    if s.pinned_cpu.is_none() && !s.cpu_path.is_empty() {
        return s
            .cpu_path
            .stays(s.end_ns.saturating_sub(s.start_ns))
            .into_iter()
            .filter_map(|st| {
                st.cpu.map(|c| {
                    (
                        c,
                        s.start_ns.saturating_add(st.from),
                        s.start_ns.saturating_add(st.to),
                        false,
                    )
                })
            })
            .collect();
    }
    home(s)
        .map(|(c, pinned)| (c, s.start_ns, s.end_ns, pinned))
        .into_iter()
        .collect()
}

/// CPUs on which two or more threads were at the same time, most shared first.
pub fn shared_cpus(spans: &[Span], window_ns: u64) -> Vec<SharedCpu> {
    // One thread's stays never overlap, so any overlap on a CPU is between threads.
    let mut by_cpu: BTreeMap<u32, Vec<(u64, u64, bool)>> = BTreeMap::new();
    for s in spans {
        for (cpu, start, end, pinned) in stays(s) {
            by_cpu.entry(cpu).or_default().push((start, end, pinned));
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
            .flat_map(|&(start, end, _)| [(start, 1), (end, -1)])
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
            pinned: members.iter().all(|&(_, _, p)| p),
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
