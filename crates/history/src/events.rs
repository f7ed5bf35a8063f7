//! Change points of many series that happened at the same run, as one event: a kernel
//! upgrade that moves 30 CPU pairs of a study is one event with 30 series, not 30.
//!
//! Series move "at the same run" when their first run after the change is the same run
//! (by uid, so runs copied between stores still meet) on the same host.

use std::collections::BTreeMap;

use perflab_stats::Verdict;
use serde::Serialize;

use crate::analyse::{RunRef, SeriesHistory};

/// One series' part in an event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Moved {
    pub series: String,
    pub change_pct: Option<f64>,
    pub verdict: Verdict,
}

/// The series that moved at one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    pub host: String,
    /// The first run after the change, and the last before it (of the first series).
    pub after: RunRef,
    pub before: RunRef,
    pub kernel_changed: bool,
    pub worse: usize,
    pub better: usize,
    /// Series whose verdict is neither (same, undecided, changed): they moved by the
    /// detector, not by more than the noise threshold.
    pub other: usize,
    pub series: Vec<Moved>,
}

/// The events of `histories`, oldest first.
pub fn events(histories: &[SeriesHistory]) -> Vec<Event> {
    let mut by_run: BTreeMap<(String, String), Event> = BTreeMap::new();
    for h in histories {
        for c in &h.changes {
            let e = by_run
                .entry((h.key.host.clone(), c.after.uid.clone()))
                .or_insert_with(|| Event {
                    host: h.key.host.clone(),
                    after: c.after.clone(),
                    before: c.before.clone(),
                    kernel_changed: c.kernel_changed,
                    worse: 0,
                    better: 0,
                    other: 0,
                    series: Vec::new(),
                });
            match c.verdict {
                Verdict::Regressed => e.worse += 1,
                Verdict::Improved => e.better += 1,
                _ => e.other += 1,
            }
            e.series.push(Moved {
                series: h.name.clone(),
                change_pct: c.change_pct,
                verdict: c.verdict,
            });
        }
    }
    let mut out: Vec<Event> = by_run.into_values().collect();
    out.sort_by(|a, b| a.after.created_at.total_cmp(&b.after.created_at));
    out
}
