//! Descriptor-lock waits of threaded transfers (xfer's channel model): the counterpart of
//! seed 000's traced `spintime`, per point and variant, in every format.
//!
//! The workload times every acquisition of a channel's lock into the `lock_wait_ns` HDR
//! histogram and stores each measurement's per-thread totals (`lock_wait_ms_per_thread`,
//! `lock_wait_ms_thread_max`). A row pools the histograms of its repetitions, so p99 is
//! that of every acquisition measured there, and gives the total wait per thread as the
//! seed summed its spintime lines per thread (median over repetitions; the longest total
//! of any thread, over all repetitions).

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::HistogramData;
use serde::Serialize;

use crate::doc::Block;
use crate::tables::percentiles::{cell, pool, pooled_blocks, pooled_table, result_groups, Lead};

/// The histogram the channel model records lock waits into.
pub const LOCK_WAIT: &str = "lock_wait_ns";

/// One point and variant of one run. Waits in µs, per-thread totals in ms.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockWaitRow {
    pub run: i64,
    /// The point's varying parameters, `all` when none vary.
    pub point: String,
    pub variant: String,
    /// Repetitions pooled.
    pub reps: u32,
    /// Lock acquisitions in the pooled distribution.
    pub acquisitions: u64,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub max: f64,
    /// Each thread's total wait over its interval, median over repetitions of the
    /// per-repetition mean over threads (ms); `None` for records without it.
    pub per_thread_ms: Option<f64>,
    /// The longest total wait of any one thread in any repetition (ms).
    pub thread_max_ms: Option<f64>,
    /// Percentiles are medians over repetitions, not read from pooled histograms.
    pub approximate: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockWaitTable {
    /// The unit of the wait percentiles (per-thread totals are in ms).
    pub unit: &'static str,
    pub rows: Vec<LockWaitRow>,
}

/// The table of `runs`, `None` when no result among them has lock waits.
pub fn lock_wait_table(runs: &[(&RunInfo, &[MeasurementRecord])]) -> Option<LockWaitTable> {
    let mut rows = Vec::new();
    for g in result_groups(runs) {
        let mine = &g.members;
        let hs: Vec<&HistogramData> = mine
            .iter()
            .filter_map(|m| m.output.histograms.iter().find(|h| h.name == LOCK_WAIT))
            .collect();
        if hs.is_empty() {
            continue;
        }
        let p = pool(g.run, g.point.clone(), &g.variant, LOCK_WAIT.into(), &hs);
        let values = |name: &str| -> Vec<f64> {
            mine.iter()
                .filter_map(|m| m.output.metric(name).map(|x| x.value))
                .filter(|x| x.is_finite())
                .collect()
        };
        rows.push(LockWaitRow {
            run: p.run,
            point: p.point,
            variant: p.variant,
            reps: p.reps,
            acquisitions: p.count,
            p50: p.p50,
            p90: p.p90,
            p99: p.p99,
            max: p.max,
            per_thread_ms: perflab_stats::median(values("lock_wait_ms_per_thread")),
            thread_max_ms: values("lock_wait_ms_thread_max")
                .into_iter()
                .reduce(f64::max),
            approximate: p.approximate,
        });
    }
    (!rows.is_empty()).then_some(LockWaitTable { unit: "µs", rows })
}

impl LockWaitRow {
    fn lead(&self) -> Lead<'_> {
        Lead {
            run: self.run,
            point: &self.point,
            variant: &self.variant,
            approximate: self.approximate,
            reps: self.reps,
        }
    }
}

impl LockWaitTable {
    /// A caption and the table, for the text, Markdown, mail and HTML renderers.
    pub fn to_blocks(&self) -> Vec<Block> {
        let head = [
            "acquisitions",
            "p50",
            "p90",
            "p99",
            "max",
            "per thread",
            "max thread",
        ];
        let table = pooled_table(&self.rows, LockWaitRow::lead, &head, |r| {
            let mut row = vec![r.acquisitions.to_string()];
            row.extend([r.p50, r.p90, r.p99, Some(r.max)].map(cell));
            row.push(cell(r.per_thread_ms));
            row.push(cell(r.thread_max_ms));
            row
        });
        pooled_blocks(
            Block::para(format!(
                "Descriptor-lock waits (seed 000's spintime): the wait to acquire a \
                 channel's lock, in {}, each row pooling every acquisition of its \
                 repetitions; per thread = each thread's total wait in ms (median over \
                 repetitions of the mean over threads), max thread = the longest total of \
                 any one thread.",
                self.unit
            )),
            table,
            self.rows.iter().any(|r| r.approximate),
        )
    }
}
