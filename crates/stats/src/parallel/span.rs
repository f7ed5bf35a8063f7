//! One thread of a measurement as the parallel verdict sees it: its interval, bytes and
//! where it ran. Its own file because both the verdict (`judge`) and the CPU-sharing
//! sweep (`sharing`) read it, and neither should import the other for it.

use perflab_core::{CpuPath, ThreadRecord};

/// One thread as the verdict sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    /// How reasons name the thread (`c0t3`, `dma0chan1-copy0`).
    pub name: String,
    /// One clock for all spans (CLOCK_MONOTONIC for perflab's threads).
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: u64,
    /// CPU time the thread used, where measured; otherwise its whole interval counts as
    /// busy.
    pub busy_ns: Option<u64>,
    pub pinned_cpu: Option<u32>,
    /// (CPU, samples that saw the thread there).
    pub cpu_samples: Vec<(u32, u64)>,
    /// The CPU at each change the samples saw; empty where not recorded.
    pub cpu_path: CpuPath,
}

impl Span {
    pub(crate) fn len_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Spans of stored or collected thread records (their CPU time is not recorded).
pub fn spans_from_records(records: &[ThreadRecord]) -> Vec<Span> {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| Span {
            name: if r.role.is_empty() {
                i.to_string()
            } else {
                r.role.clone()
            },
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            bytes: r.bytes.unwrap_or(0),
            busy_ns: None,
            pinned_cpu: r.pinned_cpu,
            cpu_samples: r.cpu_samples.clone(),
            cpu_path: r.cpu_path.clone(),
        })
        .collect()
}
