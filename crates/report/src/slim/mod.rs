//! Reading runs as the store streams them, so a report over 100,000 measurements holds
//! what its tables need rather than every record whole (issue 24, item 6).
//!
//! The heavy part of a stored measurement is its raw histograms: each a few KiB encoded
//! and 200 KiB decoded. Every reader of them pools a cell's repetitions (percentile
//! tables, lock waits, latency figures), so [`RunFold`] sums each cell's histograms as
//! the records arrive (in [`hdr_v2`]'s encoded form, without decoding) and keeps the sum
//! in the cell's first repetition; the later repetitions keep their summaries (count,
//! percentiles, maximum, overflow) and carry an empty histogram in place of their buckets.
//! A reader that pools the repetitions of a cell, or of any union of cells, in seq order
//! therefore gets the very histogram it got from the whole records: the first member of
//! any such group is the first repetition of its cell, which holds that cell's sum.
//!
//! A cell is one point, variant, status kind, role, and histogram slot (position and
//! name): every way a reader selects repetitions (results, successful ones, one point,
//! one label) is a union of cells. A histogram that cannot be summed here (compressed,
//! other bounds than its cell's first, damaged) stays as it was, and so do the later ones
//! of its cell: the readers then judge them as they always did.
//!
//! Telemetry rows are the other heavy part (59 per measurement on a 2-CPU machine with
//! the default monitors, hundreds on a big one), and the tables that read them (what
//! changed with a difference, counters, interrupts per CPU, trace and span rows, the
//! per-CPU figures, a drill-down) compare repetitions, not sums. They are kept for the
//! first [`TELEMETRY_REPS`] repetitions of each point, variant, role and status kind
//! ([`TelemetryBound`], which the store asks before it reads a record's rows, so the
//! rest are never read): a run with more repetitions than that has its telemetry tables
//! from those, its headline numbers from all. Metrics and thread records are kept whole.
//! [`without_detail`] drops everything but metrics, for benchstat's export.

pub(crate) mod hdr_v2;
pub mod pipeline;

use std::collections::HashMap;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role};

use hdr_v2::{Sum, Workspace};

/// Repetitions of a cell whose telemetry rows a report keeps: more than any ordinary
/// run has (the snapshot tests' 3 to 5, studies' 5 to 10), few enough that 100,000
/// measurements' rows stay tens of MB on a small machine.
pub const TELEMETRY_REPS: usize = 20;

/// Decides, record by record in seq order, whose telemetry rows are kept: the first
/// [`TELEMETRY_REPS`] of each point, variant, role and status kind.
#[derive(Default)]
pub struct TelemetryBound {
    seen: HashMap<(u32, String, Role, u8), usize>,
}

impl TelemetryBound {
    pub fn keeps(&mut self, m: &MeasurementRecord) -> bool {
        let n = self
            .seen
            .entry((m.point, m.variant.clone(), m.role, status_kind(&m.status)))
            .or_default();
        *n += 1;
        *n <= TELEMETRY_REPS
    }
}

fn status_kind(s: &MeasurementStatus) -> u8 {
    match s {
        MeasurementStatus::Ok => 0,
        MeasurementStatus::Failed(_) => 1,
        MeasurementStatus::Ineffective(_) => 2,
        MeasurementStatus::Disturbed(_) => 3,
    }
}

/// Which repetitions' histograms are summed together.
type CellKey = (u32, String, u8, Role, usize, String);

/// A cell's sum, kept in the histogram slot `carrier` (record, histogram) names.
struct Cell {
    carrier: Option<(usize, usize)>,
    sum: Option<Sum>,
    /// A histogram could not be summed: it and every later one of the cell stay whole.
    verbatim: bool,
}

/// The records of one run, as the store hands them out in seq order, with each cell's
/// histograms summed into its first repetition.
#[derive(Default)]
pub struct RunFold {
    ms: Vec<MeasurementRecord>,
    cells: HashMap<CellKey, Cell>,
    space: Workspace,
    empty: Vec<u8>,
}

impl RunFold {
    pub fn new() -> Self {
        Self {
            empty: hdr_v2::empty(),
            ..Self::default()
        }
    }

    /// Takes the next record (in seq order).
    pub fn push(&mut self, mut m: MeasurementRecord) {
        let at = self.ms.len();
        let status = status_kind(&m.status);
        for (slot, h) in m.output.histograms.iter_mut().enumerate() {
            if h.encoded.is_empty() {
                continue;
            }
            let key = (
                m.point,
                m.variant.clone(),
                status,
                m.role,
                slot,
                h.name.clone(),
            );
            match self.cells.get_mut(&key) {
                None => {
                    let sum = Sum::first(&h.encoded, &mut self.space);
                    let cell = Cell {
                        carrier: sum.is_some().then_some((at, slot)),
                        verbatim: sum.is_none(),
                        sum,
                    };
                    if !cell.verbatim {
                        // Its own buckets are in the sum, which replaces them at the end.
                        h.encoded = Vec::new();
                    }
                    self.cells.insert(key, cell);
                }
                Some(c) if c.verbatim => {}
                Some(c) => {
                    if c.sum.as_mut().is_some_and(|sum| sum.add(&h.encoded)) {
                        h.encoded = self.empty.clone();
                    } else {
                        c.verbatim = true;
                    }
                }
            }
        }
        self.ms.push(m);
    }

    /// The records, each cell's first repetition holding its cell's sum.
    pub fn finish(mut self) -> Vec<MeasurementRecord> {
        for cell in self.cells.into_values() {
            if let (Some((i, j)), Some(sum)) = (cell.carrier, cell.sum) {
                self.ms[i].output.histograms[j].encoded = sum.encode();
            }
        }
        self.ms
    }
}

/// `m` without its telemetry, thread records and histograms: metrics, parameters and
/// status alone, for a reader of nothing else.
pub fn without_detail(mut m: MeasurementRecord) -> MeasurementRecord {
    m.telemetry = Vec::new();
    m.output.threads = Vec::new();
    m.output.histograms = Vec::new();
    m
}

/// A copy of `m` without its telemetry rows, which are never copied.
pub fn without_telemetry(m: &MeasurementRecord) -> MeasurementRecord {
    MeasurementRecord {
        seq: m.seq,
        point: m.point,
        params: m.params.clone(),
        variant: m.variant.clone(),
        rep: m.rep,
        status: m.status.clone(),
        started_at: m.started_at,
        elapsed_s: m.elapsed_s,
        output: m.output.clone(),
        telemetry: Vec::new(),
        role: m.role,
        monitors: m.monitors.clone(),
    }
}

/// The records of `ms` (in seq order) as a report reads them from the store: telemetry
/// rows within [`TelemetryBound`], histograms folded by [`RunFold`] (for readers that
/// hold the records already, and for tests).
pub fn fold(ms: Vec<MeasurementRecord>) -> Vec<MeasurementRecord> {
    let mut bound = TelemetryBound::default();
    let mut f = RunFold::new();
    for mut m in ms {
        if !bound.keeps(&m) {
            m.telemetry = Vec::new();
        }
        f.push(m);
    }
    f.finish()
}
