//! The verdict on one measurement's thread intervals.

use std::collections::BTreeSet;

use super::sharing::{shared_cpus, SharedCpu};
use super::span::Span;
use perflab_core::note::Reason;

const MIB: f64 = (1u64 << 20) as f64;

/// When summing is called valid. The defaults allow 10% of slack on each count, since
/// thread start-up alone staggers starts by tens of microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criteria {
    /// Least share of the window in which all threads must have run.
    pub min_overlap: f64,
    /// Most share of the window in which two threads may have shared one CPU.
    pub max_shared: f64,
    /// Least effective parallelism, as a share of the thread count (only where CPU time
    /// was measured: without it every interval counts as busy).
    pub min_parallelism: f64,
    /// Largest relative difference between the summed and the aggregate bandwidth.
    pub max_sum_error: f64,
}

impl Default for Criteria {
    fn default() -> Self {
        Self {
            min_overlap: 0.9,
            max_shared: 0.1,
            min_parallelism: 0.9,
            max_sum_error: 0.1,
        }
    }
}

/// What the thread intervals of one measurement say.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Threads judged (spans left out are named in `reasons`).
    pub threads: usize,
    /// First start to last end.
    pub window_ns: u64,
    pub total_bytes: u64,
    /// Total bytes over the window, MiB/s.
    pub aggregate_mib_s: f64,
    /// Sum of each thread's bytes over its own interval, MiB/s.
    pub summed_mib_s: f64,
    /// Share of the window in which every thread was running.
    pub overlap: f64,
    /// Busy time of all threads over the window: how many ran at once on average.
    pub parallelism: f64,
    /// True when `parallelism` comes from measured CPU time of every thread.
    pub busy_measured: bool,
    pub shared: Vec<SharedCpu>,
    pub sum_valid: bool,
    /// Why summing is not valid (empty when it is), and spans left out: values, worded by
    /// [`Reason::text`] in the words of the workers (threads, copy engines).
    pub reasons: Vec<Reason>,
}

/// Judges one measurement's spans against `criteria`. Never panics; spans that cannot
/// be judged (end before start) are left out with a reason.
pub fn judge(spans: &[Span], criteria: &Criteria) -> Verdict {
    judge_with(spans, criteria, None)
}

/// [`judge`] for spans read back from a store, whose per-thread CPU time is not kept:
/// `measured_parallelism` is the effective parallelism the workload computed from that CPU
/// time (its stored `parallelism` metric, where its `busy_measured` metric says it was
/// measured), and stands in for the busy time of the spans. With the same spans it gives
/// the verdict the workload gave.
pub fn judge_stored(
    spans: &[Span],
    criteria: &Criteria,
    measured_parallelism: Option<f64>,
) -> Verdict {
    judge_with(
        spans,
        criteria,
        measured_parallelism.filter(|p| p.is_finite()),
    )
}

fn judge_with(spans: &[Span], criteria: &Criteria, measured: Option<f64>) -> Verdict {
    let mut reasons = Vec::new();
    let mut kept: Vec<&Span> = Vec::new();
    for s in spans {
        if s.end_ns < s.start_ns {
            reasons.push(Reason::EndsBeforeStart {
                worker: s.name.clone(),
            });
        } else {
            kept.push(s);
        }
    }
    let mut v = Verdict {
        threads: kept.len(),
        window_ns: 0,
        total_bytes: kept.iter().fold(0u64, |a, s| a.saturating_add(s.bytes)),
        aggregate_mib_s: 0.0,
        summed_mib_s: 0.0,
        overlap: 0.0,
        parallelism: 0.0,
        busy_measured: measured.is_some()
            || (!kept.is_empty() && kept.iter().all(|s| s.busy_ns.is_some())),
        shared: Vec::new(),
        sum_valid: false,
        reasons,
    };
    let (Some(first), Some(last)) = (
        kept.iter().map(|s| s.start_ns).min(),
        kept.iter().map(|s| s.end_ns).max(),
    ) else {
        v.reasons.push(Reason::NothingToJudge);
        return v;
    };
    v.window_ns = last - first;
    if v.window_ns == 0 {
        v.reasons.push(Reason::EmptyWindow);
        return v;
    }
    let window = v.window_ns as f64;
    v.aggregate_mib_s = v.total_bytes as f64 / MIB / (window / 1e9);
    for s in &kept {
        if s.len_ns() == 0 {
            v.reasons.push(Reason::EmptyInterval {
                worker: s.name.clone(),
            });
        } else {
            v.summed_mib_s += s.bytes as f64 / MIB / (s.len_ns() as f64 / 1e9);
        }
    }
    let busy: u64 = kept
        .iter()
        .map(|s| s.busy_ns.unwrap_or(s.len_ns()).min(s.len_ns()))
        .fold(0u64, u64::saturating_add);
    v.parallelism = busy as f64 / window;
    if let Some(p) = measured {
        v.parallelism = p;
    }
    let latest_start = kept.iter().max_by_key(|s| (s.start_ns, &s.name));
    let earliest_end = kept.iter().min_by_key(|s| (s.end_ns, &s.name));
    if let (Some(ls), Some(ee)) = (latest_start, earliest_end) {
        v.overlap = (ee.end_ns.saturating_sub(ls.start_ns) as f64 / window).min(1.0);
    }
    v.shared = shared_cpus(
        &kept.iter().map(|s| (*s).clone()).collect::<Vec<_>>(),
        v.window_ns,
    );
    if v.threads == 1 {
        v.sum_valid = v.reasons.is_empty();
        return v;
    }
    explain(&kept, criteria, &mut v);
    v.sum_valid = v.reasons.is_empty();
    v
}

/// Adds the reasons summing is not valid, most telling first.
fn explain(kept: &[&Span], c: &Criteria, v: &mut Verdict) {
    // No thread, no reason (and no first or last one to name).
    if kept.is_empty() {
        return;
    }
    overlap_reasons(kept, c, v);
    for s in v.shared.iter().filter(|s| s.fraction > c.max_shared) {
        v.reasons.push(Reason::SharedCpu {
            workers: s.threads,
            cpu: s.cpu,
            pinned: s.pinned,
            share: s.fraction,
        });
    }
    let cpus: BTreeSet<u32> = kept
        .iter()
        .flat_map(|s| {
            s.pinned_cpu
                .into_iter()
                .chain(s.cpu_samples.iter().map(|&(c, _)| c))
        })
        .collect();
    if !cpus.is_empty() && cpus.len() < kept.len() && v.shared.is_empty() {
        v.reasons.push(Reason::FewCpus {
            workers: kept.len(),
            cpus: cpus.len(),
        });
    }
    let n = kept.len() as f64;
    if v.busy_measured && v.parallelism < c.min_parallelism * n {
        v.reasons.push(Reason::Parallelism {
            value: v.parallelism,
            of: kept.len(),
        });
    }
    if v.aggregate_mib_s > 0.0 {
        let ratio = v.summed_mib_s / v.aggregate_mib_s;
        if (ratio - 1.0).abs() > c.max_sum_error {
            v.reasons.push(Reason::SumRatio {
                summed_mib_s: v.summed_mib_s,
                aggregate_mib_s: v.aggregate_mib_s,
            });
        }
    }
}

/// Why the threads did not run together long enough: one never met another, or one
/// started late or ran on long after another ended.
fn overlap_reasons(kept: &[&Span], c: &Criteria, v: &mut Verdict) {
    let window = v.window_ns as f64;
    let share = |ns: u64| ns as f64 / window;
    let by_start = |f: fn(u64, u64) -> bool| {
        kept.iter()
            .copied()
            .reduce(|a, b| if f(b.start_ns, a.start_ns) { b } else { a })
    };
    let by_end = |f: fn(u64, u64) -> bool| {
        kept.iter()
            .copied()
            .reduce(|a, b| if f(b.end_ns, a.end_ns) { b } else { a })
    };
    let (Some(first), Some(late), Some(early_end), Some(last_end)) = (
        by_start(|b, a| b < a),
        by_start(|b, a| b > a),
        by_end(|b, a| b < a),
        by_end(|b, a| b > a),
    ) else {
        return;
    };
    if v.overlap < c.min_overlap {
        if late.start_ns >= early_end.end_ns {
            v.reasons.push(Reason::NeverTogether {
                late: late.name.clone(),
                gap_ns: late.start_ns - early_end.end_ns,
                ended: early_end.name.clone(),
            });
        } else {
            v.reasons.push(Reason::TogetherOnly { share: v.overlap });
            let lag = late.start_ns - first.start_ns;
            if lag as f64 > window * (1.0 - c.min_overlap) / 2.0 {
                v.reasons.push(Reason::StartedLate {
                    late: late.name.clone(),
                    lag_ns: lag,
                    share: share(lag),
                    first: first.name.clone(),
                });
            }
            let tail = last_end.end_ns - early_end.end_ns;
            if tail as f64 > window * (1.0 - c.min_overlap) / 2.0 {
                v.reasons.push(Reason::RanOn {
                    last: last_end.name.clone(),
                    tail_ns: tail,
                    share: share(tail),
                    ended: early_end.name.clone(),
                });
            }
        }
    }
}
