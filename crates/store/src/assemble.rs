//! Turning the rows of a run's measurements back into records, for both backends. Each
//! backend only fetches columns (its own way, its own SQL dialect) into the raw structs
//! here; what the columns mean, how JSON columns and enum names decode, and which record a
//! child row belongs to are decided once, so the two backends cannot drift apart.

use std::collections::HashMap;

use perflab_core::{
    Better, HistogramData, Metric, TelemetryRow, ThreadRecord, Unit, WorkloadOutput,
};

use crate::codec::{parse_params, parse_role, real, status_from_columns, u64_from_sql, NameCache};
use crate::decoded::Decoded;
use crate::error::corrupt;
use crate::{Location, MeasurementRecord, RunId, StoreError};

/// A `measurements` row joined with its `plan` row.
pub(crate) struct RawMeasurement {
    pub(crate) seq: u32,
    pub(crate) point: u32,
    pub(crate) params: String,
    pub(crate) variant: String,
    pub(crate) rep: u32,
    pub(crate) status: String,
    pub(crate) error: Option<String>,
    pub(crate) started_at: Option<f64>,
    pub(crate) elapsed_s: Option<f64>,
    pub(crate) notes: String,
    pub(crate) ineffective: Option<String>,
    pub(crate) role: String,
    pub(crate) monitors: Option<String>,
    pub(crate) disturbed: Option<String>,
}

/// Recorded measurements a streaming read assembles at a time: enough that each of its
/// five queries is worth its round trip, few enough that a chunk of records with their
/// histograms and telemetry stays a few MB.
pub(crate) const CHUNK: usize = 256;

/// The seq ranges (`lo..=hi`) that split `seqs` (ascending) into chunks of [`CHUNK`].
pub(crate) fn chunks(seqs: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    seqs.chunks(CHUNK).map(|c| (c[0], c[c.len() - 1]))
}

/// A `threads` row.
pub(crate) struct RawThread {
    pub(crate) seq: u32,
    pub(crate) role: String,
    pub(crate) tid: i32,
    pub(crate) pinned_cpu: Option<u32>,
    pub(crate) cpu_samples: String,
    pub(crate) migrations: Option<i64>,
    pub(crate) voluntary_switches: Option<i64>,
    pub(crate) involuntary_switches: Option<i64>,
    pub(crate) start_ns: i64,
    pub(crate) end_ns: i64,
    pub(crate) bytes: Option<i64>,
    pub(crate) counters: Option<String>,
    pub(crate) cpu_path: Option<String>,
}

/// A `histograms` row; `stats` are min, mean, max, stddev, p50, p90, p99, p999, p9999.
pub(crate) struct RawHistogram {
    pub(crate) seq: u32,
    pub(crate) name: String,
    pub(crate) unit: String,
    pub(crate) count: i64,
    pub(crate) stats: [Option<f64>; 9],
    pub(crate) encoded: Vec<u8>,
    /// `above` and `above_count`; NULL (both) for a histogram without a fixed range.
    pub(crate) above: (Option<f64>, Option<i64>),
}

/// A `telemetry` row.
pub(crate) struct RawTelemetry<'r> {
    pub(crate) seq: u32,
    pub(crate) source: String,
    pub(crate) key: String,
    pub(crate) label: String,
    pub(crate) cpu: Option<u32>,
    pub(crate) value: Option<f64>,
    pub(crate) unit: &'r str,
}

impl RawMeasurement {
    /// The record with an empty output; its child rows go in through [`Assembler`].
    pub(crate) fn decode(
        self,
        db: &Location,
        id: RunId,
        seen: &mut Decoded,
    ) -> Result<MeasurementRecord, StoreError> {
        let seq = self.seq;
        let bad = |what: String| corrupt(db, format!("run {id} measurement {seq}: {what}"));
        Ok(MeasurementRecord {
            seq,
            point: self.point,
            params: seen
                .params
                .get(&self.params, |t| parse_params(db, id, seq, t))?,
            variant: self.variant,
            rep: self.rep,
            status: status_from_columns(&self.status, self.error, self.ineffective, self.disturbed)
                .ok_or_else(|| bad(format!("unknown status {:?}", self.status)))?,
            started_at: real(self.started_at),
            elapsed_s: real(self.elapsed_s),
            output: WorkloadOutput {
                notes: seen.notes.get(&self.notes, |t| {
                    serde_json::from_str(t).map_err(|e| bad(format!("notes: {e}")))
                })?,
                ..WorkloadOutput::default()
            },
            telemetry: Vec::new(),
            role: parse_role(db, id, seq, &self.role)?,
            monitors: match self.monitors {
                Some(m) => seen.monitors.get(&m, |t| {
                    serde_json::from_str(t).map_err(|e| bad(format!("monitors: {e}")))
                })?,
                None => Vec::new(),
            },
        })
    }
}

/// Puts child rows (read in seq, idx order) into the records they belong to.
pub(crate) struct Assembler<'a> {
    db: &'a Location,
    id: RunId,
    seen: &'a mut Decoded,
    recs: Vec<MeasurementRecord>,
    index: HashMap<u32, usize>,
    units: NameCache<Unit>,
    betters: NameCache<Better>,
    /// The records whose telemetry rows are read; `None`: all of them.
    telemetry: Option<std::collections::HashSet<u32>>,
    /// The last seq looked up, with its record's place, and whether its telemetry is
    /// wanted.
    last: Option<(u32, usize)>,
    wanted: Option<(u32, bool)>,
}

/// Decodes a thread's JSON column `what` of measurement `seq`, naming both where the
/// text does not read.
fn json<'d, T: serde::de::DeserializeOwned>(
    (db, id, seq): (&'d Location, RunId, u32),
    what: &'static str,
) -> impl FnOnce(&str) -> Result<T, StoreError> + 'd {
    move |text| {
        serde_json::from_str(text).map_err(|e| {
            corrupt(
                db,
                format!("run {id} measurement {seq}: thread {what}: {e}"),
            )
        })
    }
}

/// Which records of a read get their telemetry rows (a record's rows are most of its
/// size: 59 on a 2-CPU machine with the default monitors, several hundred on a big one).
pub type TelemetryFilter<'f> = &'f mut dyn FnMut(&MeasurementRecord) -> bool;

impl<'a> Assembler<'a> {
    pub(crate) fn new(
        db: &'a Location,
        id: RunId,
        recs: Vec<MeasurementRecord>,
        seen: &'a mut Decoded,
    ) -> Self {
        let index = recs.iter().enumerate().map(|(i, r)| (r.seq, i)).collect();
        Self {
            db,
            id,
            seen,
            recs,
            index,
            units: NameCache::new(),
            betters: NameCache::new(),
            telemetry: None,
            last: None,
            wanted: None,
        }
    }

    /// Asks `filter` which records get telemetry rows; the seq ranges (`lo..=hi`) the
    /// backend reads them from: one per stretch of wanted records, so the rows of the
    /// records between are never read (none at all when no record is wanted).
    pub(crate) fn filter_telemetry(&mut self, filter: TelemetryFilter) -> Vec<(u32, u32)> {
        let mut wanted = std::collections::HashSet::new();
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        let mut extends = false;
        for r in &self.recs {
            if !filter(r) {
                extends = false;
                continue;
            }
            wanted.insert(r.seq);
            match ranges.last_mut() {
                Some((_, hi)) if extends => *hi = r.seq,
                _ => ranges.push((r.seq, r.seq)),
            }
            extends = true;
        }
        self.telemetry = Some(wanted);
        ranges
    }

    /// What the read remembers of the rows decoded so far.
    pub(crate) fn seen(&mut self) -> &mut Decoded {
        self.seen
    }

    /// Whether the telemetry rows of `seq` are wanted (checked before they are decoded).
    pub(crate) fn wants_telemetry(&mut self, seq: u32) -> bool {
        match self.wanted {
            Some((s, wanted)) if s == seq => wanted,
            _ => {
                let wanted = self.telemetry.as_ref().is_none_or(|w| w.contains(&seq));
                self.wanted = Some((seq, wanted));
                wanted
            }
        }
    }

    fn slot(&mut self, seq: u32) -> Result<&mut MeasurementRecord, StoreError> {
        // Rows come by seq: a record's many rows look it up once.
        let i = match self.last {
            Some((s, i)) if s == seq => i,
            _ => {
                let (db, id) = (self.db, self.id);
                let i = self.index.get(&seq).copied().ok_or_else(|| {
                    corrupt(
                        db,
                        format!("run {id}: rows for unrecorded measurement {seq}"),
                    )
                })?;
                self.last = Some((seq, i));
                i
            }
        };
        Ok(&mut self.recs[i])
    }

    fn unit(&mut self, s: &str) -> Result<Unit, StoreError> {
        let db = self.db;
        self.units
            .get(s)
            .ok_or_else(|| corrupt(db, format!("unknown unit {s:?}")))
    }

    pub(crate) fn metric(
        &mut self,
        seq: u32,
        name: String,
        value: Option<f64>,
        unit: &str,
        better: &str,
    ) -> Result<(), StoreError> {
        let unit = self.unit(unit)?;
        let db = self.db;
        let better = self
            .betters
            .get(better)
            .ok_or_else(|| corrupt(db, format!("unknown direction {better:?}")))?;
        let m = Metric {
            name,
            value: real(value),
            unit,
            better,
        };
        self.slot(seq)?.output.metrics.push(m);
        Ok(())
    }

    pub(crate) fn histogram(&mut self, raw: RawHistogram) -> Result<(), StoreError> {
        let [min, mean, max, stddev, p50, p90, p99, p999, p9999] = raw.stats.map(real);
        let h = HistogramData {
            name: raw.name,
            unit: self.unit(&raw.unit)?,
            count: u64_from_sql(raw.count),
            min,
            mean,
            max,
            stddev,
            p50,
            p90,
            p99,
            p999,
            p9999,
            encoded: raw.encoded,
            above: match raw.above {
                (Some(limit), Some(count)) => Some(perflab_core::AboveRange {
                    limit,
                    count: u64_from_sql(count),
                }),
                _ => None,
            },
        };
        self.slot(raw.seq)?.output.histograms.push(h);
        Ok(())
    }

    pub(crate) fn thread(&mut self, raw: RawThread) -> Result<(), StoreError> {
        let seq = raw.seq;
        let at = (self.db, self.id, seq);
        let seen = &mut *self.seen;
        let t = ThreadRecord {
            role: raw.role,
            tid: raw.tid,
            pinned_cpu: raw.pinned_cpu,
            cpu_samples: seen
                .cpu_samples
                .get(&raw.cpu_samples, json(at, "CPU samples"))?,
            cpu_path: match &raw.cpu_path {
                None => Default::default(),
                Some(text) => seen.cpu_path.get(text, json(at, "CPU path"))?,
            },
            migrations: raw.migrations.map(u64_from_sql),
            voluntary_switches: raw.voluntary_switches.map(u64_from_sql),
            involuntary_switches: raw.involuntary_switches.map(u64_from_sql),
            start_ns: u64_from_sql(raw.start_ns),
            end_ns: u64_from_sql(raw.end_ns),
            bytes: raw.bytes.map(u64_from_sql),
            counters: match &raw.counters {
                None => Vec::new(),
                Some(text) => seen.counters.get(text, json(at, "counters"))?,
            },
        };
        self.slot(seq)?.output.threads.push(t);
        Ok(())
    }

    pub(crate) fn telemetry(&mut self, raw: RawTelemetry) -> Result<(), StoreError> {
        let t = TelemetryRow {
            source: raw.source,
            key: raw.key,
            label: raw.label,
            cpu: raw.cpu,
            value: real(raw.value),
            unit: self.unit(raw.unit)?,
        };
        // Room for as many rows as the measurements before had.
        let expected = self.seen.telemetry_rows();
        let rows = &mut self.slot(raw.seq)?.telemetry;
        if rows.is_empty() {
            rows.reserve_exact(expected);
        }
        rows.push(t);
        Ok(())
    }

    pub(crate) fn finish(self) -> Vec<MeasurementRecord> {
        self.recs
    }
}
