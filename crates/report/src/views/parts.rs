//! The sections several views share: what a run shows beside its summary or its
//! comparisons (`show` and the end of `run`), its spans, and which variants a run
//! compares (`show --pair`, the end of `run`, `compare`).

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_stats::StatsConfig;

use crate::section::Section;

/// What a run shows beside its summary, in this order: the threads' aggregate against
/// summed bandwidth and the lock waits of threaded transfers, the interrupts on the
/// workload's CPU, the counters, netrr's seed-001 table, and the latency percentiles of
/// ctxsw and netrr.
pub fn run_sections(info: &RunInfo, ms: &[MeasurementRecord]) -> Vec<Box<dyn Section>> {
    let mut out = telemetry_sections(info, ms);
    out.extend(latency_section(info, ms));
    if let Some(t) = crate::latency_percentiles(&[(info, ms)]) {
        out.push(Box::new(t));
    }
    out
}

/// The threads, lock waits and the tables of [`crate::tables::PER_RUN`] (interrupts,
/// counters, …) of a run, those it has.
pub fn telemetry_sections(info: &RunInfo, ms: &[MeasurementRecord]) -> Vec<Box<dyn Section>> {
    let mut out = threads_sections(info, ms);
    out.extend(
        crate::tables::PER_RUN
            .iter()
            .filter_map(|part| (part.build)(info, ms)),
    );
    out
}

/// The aggregate-against-summed table, when the run's measurements carry the verdict of
/// threaded transfers (xfer's channel model, dmatest), and the lock-wait percentiles and
/// per-thread totals (seed 000's spintime).
fn threads_sections(info: &RunInfo, ms: &[MeasurementRecord]) -> Vec<Box<dyn Section>> {
    let mut out: Vec<Box<dyn Section>> = Vec::new();
    if let Some(t) = crate::parallel_table(info, ms) {
        out.push(Box::new(t));
    }
    if let Some(t) = crate::lock_wait_table(&[(info, ms)]) {
        out.push(Box::new(t));
    }
    out
}

/// The seed-001 table (one row per path and load) for runs of netrr.
pub fn latency_section(info: &RunInfo, ms: &[MeasurementRecord]) -> Option<Box<dyn Section>> {
    crate::hints::has_latency_table(&info.workload)
        .then(|| Box::new(crate::latency_table(info, ms)) as _)
}

/// Where the time goes, when telemetry repetitions traced spans: the breakdown per point
/// and variant, seed 001's layout for round-trip runs, and the A/B comparisons; `more`
/// says how many comparisons were left out.
pub struct Spans {
    pub sections: Vec<Box<dyn Section>>,
    pub more: Option<String>,
}

/// The span sections, at most `cap` A/B comparisons among them; `db_flag` (` --db PATH`
/// or nothing) goes into the `perflab show` that has the rest.
pub fn span_sections(info: &RunInfo, ms: &[MeasurementRecord], cap: usize, db_flag: &str) -> Spans {
    let cfg = StatsConfig::default();
    let mut out = Spans {
        sections: Vec::new(),
        more: None,
    };
    let Some(t) = crate::span_table(info, ms, &cfg) else {
        return out;
    };
    out.sections.push(Box::new(t));
    if let Some(seed) = crate::seed_span_table(info, ms) {
        out.sections.push(Box::new(seed));
    }
    let (comparisons, total) = crate::span_comparisons(info, ms, &cfg, cap);
    if total > comparisons.len() {
        out.more = Some(format!(
            "{} more span comparisons: `perflab show {}{db_flag} --format json` has them all",
            total - comparisons.len(),
            info.id
        ));
    }
    for c in comparisons {
        out.sections.push(Box::new(c));
    }
    out
}

/// The study's baseline and the first other measured variant.
pub fn baseline_and_other(info: &RunInfo, measured: &[String]) -> Option<(String, String)> {
    let base = crate::baseline_variant(info, measured)?;
    let other = measured.iter().find(|m| **m != base)?.clone();
    Some((base, other))
}
