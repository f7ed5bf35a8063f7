//! Turning the rows of a run's measurements back into records, for both backends. Each
//! backend only fetches columns (its own way, its own SQL dialect) into the raw structs
//! here; what the columns mean, how JSON columns and enum names decode, and which record a
//! child row belongs to are decided once, so the two backends cannot drift apart.

use std::collections::HashMap;

use perflab_core::{
    Better, HistogramData, Metric, TelemetryRow, ThreadRecord, Unit, WorkloadOutput,
};

use crate::codec::{parse_params, parse_role, real, status_from_columns, u64_from_sql, NameCache};
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
}

/// The query of a run's measurement rows with seq in a range, in the order
/// [`RawMeasurement`] takes its columns, with the placeholders of the backend's dialect
/// (`?1`, `$1`) for the run id and the range's ends.
macro_rules! measurements_select {
    ($run_id:literal, $lo:literal, $hi:literal) => {
        concat!(
            "SELECT m.seq, p.point, p.params, p.variant, p.rep, m.status, m.error, \
             m.started_at, m.elapsed_s, m.notes, m.ineffective, p.role, m.monitors \
             FROM measurements m JOIN plan p ON p.run_id = m.run_id AND p.seq = m.seq \
             WHERE m.run_id = ",
            $run_id,
            " AND m.seq BETWEEN ",
            $lo,
            " AND ",
            $hi,
            " ORDER BY m.seq"
        )
    };
}

/// Recorded measurements a streaming read assembles at a time: enough that each of its
/// five queries is worth its round trip, few enough that a chunk of records with their
/// histograms and telemetry stays a few MB.
pub(crate) const CHUNK: usize = 256;

/// The seq ranges (`lo..=hi`) that split `seqs` (ascending) into chunks of [`CHUNK`].
pub(crate) fn chunks(seqs: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    seqs.chunks(CHUNK).map(|c| (c[0], c[c.len() - 1]))
}
pub(crate) use measurements_select;

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
            status: status_from_columns(&self.status, self.error, self.ineffective)
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

/// The JSON columns of a run's measurements, each distinct text decoded once per read:
/// the 100,000 measurements of a run share a few hundred parameter sets and one or two
/// monitor lists, and decoding each row's own (parameters through an untagged enum) was
/// a tenth of a report's time.
#[derive(Default)]
pub(crate) struct Decoded {
    params: Memo<perflab_core::Params>,
    notes: Memo<Vec<String>>,
    monitors: Memo<Vec<String>>,
    cpu_samples: Memo<Vec<(u32, u64)>>,
    cpu_path: Memo<perflab_core::CpuPath>,
    counters: Memo<Vec<perflab_core::ThreadCount>>,
    /// The source, key and label of each telemetry row of the last measurement read, by
    /// the row's place in it.
    telemetry_names: Vec<[String; 3]>,
}

impl Decoded {
    /// The source, key and label of the `k`-th telemetry row of a measurement, from their
    /// columns' bytes. A measurement's rows name the same things in the same order as
    /// the one before it (59 rows each with the default monitors on two CPUs, millions
    /// in an export), so each is copied from the last measurement's `k`-th row where its
    /// bytes are the same, and only what differs is checked as UTF-8 and read.
    pub(crate) fn telemetry_names(
        &mut self,
        k: usize,
        columns: [&[u8]; 3],
    ) -> Result<[String; 3], std::str::Utf8Error> {
        if let Some(known) = self.telemetry_names.get(k) {
            if known.iter().zip(columns).all(|(s, c)| s.as_bytes() == c) {
                return Ok(known.clone());
            }
        }
        let mut names: [String; 3] = Default::default();
        for (name, bytes) in names.iter_mut().zip(columns) {
            *name = std::str::from_utf8(bytes)?.to_string();
        }
        let known = &mut self.telemetry_names;
        if k < known.len() {
            known[k].clone_from(&names);
        } else if k == known.len() {
            known.push(names.clone());
        }
        Ok(names)
    }
}

/// Decoded values by their text; cleared when full, so a run whose every row differs
/// (unusual: parameters are per point) costs what it cost before and holds little.
struct Memo<T> {
    seen: HashMap<String, T>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self {
            seen: HashMap::new(),
        }
    }
}

/// Distinct texts a [`Memo`] keeps: more points than any grid has.
const MEMO_LIMIT: usize = 4096;

impl<T: Clone> Memo<T> {
    fn get(
        &mut self,
        text: &str,
        decode: impl FnOnce(&str) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if let Some(v) = self.seen.get(text) {
            return Ok(v.clone());
        }
        let v = decode(text)?;
        if self.seen.len() >= MEMO_LIMIT {
            self.seen.clear();
        }
        self.seen.insert(text.to_string(), v.clone());
        Ok(v)
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
        let expected = self.seen.telemetry_names.len();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telemetry_names_follow_the_rows_whatever_the_last_measurement_named() {
        let mut d = Decoded::default();
        let names = |d: &mut Decoded, k: usize, c: [&str; 3]| {
            d.telemetry_names(k, c.map(str::as_bytes)).unwrap()
        };
        let row = |a: &str, b: &str, c: &str| [a, b, c].map(String::from);
        // A measurement of two rows, then one of three whose second row differs.
        assert_eq!(
            names(&mut d, 0, ["irq", "LOC", "timer"]),
            row("irq", "LOC", "timer")
        );
        assert_eq!(names(&mut d, 1, ["irq", "NMI", ""]), row("irq", "NMI", ""));
        assert_eq!(
            names(&mut d, 0, ["irq", "LOC", "timer"]),
            row("irq", "LOC", "timer")
        );
        assert_eq!(
            names(&mut d, 1, ["irq", "RES", "resched"]),
            row("irq", "RES", "resched")
        );
        assert_eq!(
            names(&mut d, 2, ["cpu", "user", ""]),
            row("cpu", "user", "")
        );
        // Out of step (a row without its predecessors): read, not remembered.
        assert_eq!(names(&mut d, 7, ["x", "y", "z"]), row("x", "y", "z"));
        assert_eq!(
            names(&mut d, 1, ["irq", "RES", "resched"]),
            row("irq", "RES", "resched")
        );
        assert!(d.telemetry_names(0, [b"irq", b"\xff", b""]).is_err());
    }

    #[test]
    fn a_memo_decodes_each_text_once_and_forgets_when_full() {
        let mut memo = Memo::<usize>::default();
        let decoded = std::cell::Cell::new(0);
        let get = |memo: &mut Memo<usize>, text: &str| {
            memo.get(text, |t| {
                decoded.set(decoded.get() + 1);
                Ok(t.len())
            })
            .unwrap()
        };
        assert_eq!(get(&mut memo, "abc"), 3);
        assert_eq!(get(&mut memo, "abc"), 3);
        assert_eq!(get(&mut memo, "de"), 2);
        assert_eq!(decoded.get(), 2);
        for i in 0..MEMO_LIMIT + 10 {
            assert_eq!(get(&mut memo, &"x".repeat(i % 50 + 1)), i % 50 + 1);
            let _ = get(&mut memo, &format!("{i:08}"));
        }
        assert!(memo.seen.len() <= MEMO_LIMIT);
        // An error is passed on and nothing is kept for it.
        let e = memo.get("bad", |_| Err(StoreError::Visitor("no".into())));
        assert!(e.is_err());
        assert!(!memo.seen.contains_key("bad"));
    }
}
