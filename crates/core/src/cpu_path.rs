//! Where a thread ran over time: the CPU it was seen on at each change, so a timeline can
//! draw a migrated thread as stays on several CPUs instead of one colour.
//!
//! A path is as fine as the samples that built it: a change is dated at the first sample
//! that saw the new CPU, so a stay shorter than the sampling interval can be missed and
//! every change is late by up to one interval.

use serde::{Deserialize, Serialize};

/// The CPU at each observed change, in nanoseconds since the thread record's start.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPath {
    /// (nanoseconds since the record's `start_ns`, CPU), one entry per change seen; the
    /// first is the first sample.
    pub changes: Vec<(u64, u32)>,
    /// Set when the path reached [`CpuPath::MAX_CHANGES`]: from this time on (the first
    /// change not kept) where the thread ran is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_after: Option<u64>,
}

/// One stay on one CPU: `[from, to)` nanoseconds since the record's start; `cpu` is
/// `None` for the part after a full path, where it is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stay {
    pub from: u64,
    pub to: u64,
    pub cpu: Option<u32>,
}

impl CpuPath {
    /// Enough for a thread that changes CPU every millisecond for a second; a path is
    /// stored with every thread of every measurement, so it must stay small.
    pub const MAX_CHANGES: usize = 1024;

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Notes that the thread is on `cpu` now; `now` (nanoseconds since the record's
    /// start) is read only when the CPU differs from the last one noted, so sampling
    /// costs no clock read while the thread stays put.
    pub fn note(&mut self, cpu: u32, now: impl FnOnce() -> u64) {
        if self.unknown_after.is_some() || self.changes.last().is_some_and(|&(_, c)| c == cpu) {
            return;
        }
        let at = now();
        if self.changes.len() >= Self::MAX_CHANGES {
            self.unknown_after = Some(at);
        } else {
            self.changes.push((at, cpu));
        }
    }

    /// The stays over a record `len` nanoseconds long, in time order. Times past `len`
    /// (a corrupt or foreign record) are clamped to it and out-of-order changes are
    /// dropped, so the stays never overlap and never run backwards.
    pub fn stays(&self, len: u64) -> Vec<Stay> {
        let mut stays: Vec<Stay> = Vec::with_capacity(self.changes.len() + 1);
        let end = self.unknown_after.map_or(len, |u| u.min(len));
        for &(at, cpu) in &self.changes {
            let at = at.min(end);
            if let Some(last) = stays.last_mut() {
                if at < last.from {
                    continue;
                }
                last.to = at;
            }
            stays.push(Stay {
                from: at,
                to: end,
                cpu: Some(cpu),
            });
        }
        stays.retain(|s| s.to > s.from);
        if self.unknown_after.is_some() && end < len {
            stays.push(Stay {
                from: end,
                to: len,
                cpu: None,
            });
        }
        stays
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_changes_are_kept_and_dated_when_they_happen() {
        let mut p = CpuPath::default();
        let mut reads = 0;
        for (t, cpu) in [(0, 3), (10, 3), (20, 5), (30, 5), (40, 3)] {
            p.note(cpu, || {
                reads += 1;
                t
            });
        }
        assert_eq!(p.changes, vec![(0, 3), (20, 5), (40, 3)]);
        assert_eq!(reads, 3, "the clock is read only at a change");
        let cpus: Vec<(u64, u64, Option<u32>)> =
            p.stays(50).iter().map(|s| (s.from, s.to, s.cpu)).collect();
        assert_eq!(
            cpus,
            vec![(0, 20, Some(3)), (20, 40, Some(5)), (40, 50, Some(3))]
        );
    }

    #[test]
    fn a_full_path_says_where_it_stops_knowing() {
        let mut p = CpuPath::default();
        for i in 0..CpuPath::MAX_CHANGES as u64 + 10 {
            p.note((i % 2) as u32, || i * 100);
        }
        assert_eq!(p.changes.len(), CpuPath::MAX_CHANGES);
        let cut = CpuPath::MAX_CHANGES as u64 * 100;
        assert_eq!(p.unknown_after, Some(cut));
        let stays = p.stays(cut + 5000);
        let last = stays.last().unwrap();
        assert_eq!((last.from, last.to, last.cpu), (cut, cut + 5000, None));
    }

    proptest! {
        /// Whatever a record holds, the stays tile [first change, len) in order.
        #[test]
        fn stays_never_overlap_or_run_backwards(
            changes in proptest::collection::vec((0u64..2000, 0u32..8), 0..40),
            unknown in proptest::option::of(0u64..2000),
            len in 0u64..2000,
        ) {
            let p = CpuPath { changes, unknown_after: unknown };
            let stays = p.stays(len);
            for s in &stays {
                prop_assert!(s.from < s.to && s.to <= len, "{s:?}");
            }
            for w in stays.windows(2) {
                prop_assert_eq!(w[0].to, w[1].from);
            }
        }
    }
}
