//! Reading runs, plans and measurements back.
//!
//! Every read runs in one read transaction, so it sees a single snapshot even while another
//! process records into the same run, and loads each table with one query per run rather
//! than one per measurement.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::write::run_exists;
use super::SqliteBackend;
use crate::assemble::{
    measurements_select, Assembler, RawHistogram, RawMeasurement, RawTelemetry, RawThread,
    TelemetryFilter,
};
use crate::codec::{parse_params, parse_role, RawRun};
use crate::decoded::Decoded;
use crate::error::At;
use crate::{
    Location, MeasurementRecord, PlannedMeasurement, RunId, RunInfo, StoreError, UnavailableVariant,
};

const RUN_SELECT: &str = "SELECT r.id, r.created_at, r.study, r.workload, r.label, r.status, \
     r.spec, r.fingerprint, \
     (SELECT count(*) FROM plan p WHERE p.run_id = r.id), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'ok'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'failed'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.ineffective IS NOT NULL), \
     r.uid \
     FROM runs r";

impl RawRun {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            created_at: r.get(1)?,
            study: r.get(2)?,
            workload: r.get(3)?,
            label: r.get(4)?,
            status: r.get(5)?,
            spec: r.get(6)?,
            fingerprint: r.get(7)?,
            planned: r.get(8)?,
            done: r.get(9)?,
            failed: r.get(10)?,
            ineffective: r.get(11)?,
            uid: r.get(12)?,
        })
    }
}

impl SqliteBackend {
    /// All runs, newest first.
    pub fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        let path = &self.path;
        let tx = self.conn.unchecked_transaction().at(path)?;
        let raw = tx
            .prepare_cached(&format!("{RUN_SELECT} ORDER BY r.id DESC"))
            .at(path)?
            .query_map([], RawRun::from_row)
            .at(path)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(path)?;
        let mut unavailable: HashMap<RunId, Vec<UnavailableVariant>> = HashMap::new();
        let mut stmt = tx
            .prepare_cached("SELECT run_id, variant, reason FROM unavailable ORDER BY run_id, idx")
            .at(path)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, RunId>(0)?,
                    UnavailableVariant {
                        variant: r.get(1)?,
                        reason: r.get(2)?,
                    },
                ))
            })
            .at(path)?;
        for row in rows {
            let (id, u) = row.at(path)?;
            unavailable.entry(id).or_default().push(u);
        }
        raw.into_iter()
            .map(|r| {
                let u = unavailable.remove(&r.id).unwrap_or_default();
                r.decode(path, u)
            })
            .collect()
    }

    /// One run; an error naming the id and the file when there is none.
    pub fn run(&self, id: RunId) -> Result<RunInfo, StoreError> {
        let path = &self.path;
        let tx = self.conn.unchecked_transaction().at(path)?;
        let raw = tx
            .prepare_cached(&format!("{RUN_SELECT} WHERE r.id = ?1"))
            .at(path)?
            .query_map([id], RawRun::from_row)
            .at(path)?
            .next()
            .transpose()
            .at(path)?
            .ok_or_else(|| self.no_run(id))?;
        let unavailable = tx
            .prepare_cached(
                "SELECT variant, reason FROM unavailable WHERE run_id = ?1 ORDER BY idx",
            )
            .at(path)?
            .query_map([id], |r| {
                Ok(UnavailableVariant {
                    variant: r.get(0)?,
                    reason: r.get(1)?,
                })
            })
            .at(path)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(path)?;
        raw.decode(path, unavailable)
    }

    pub fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError> {
        self.conn
            .prepare_cached("SELECT id FROM runs WHERE uid = ?1")
            .at(&self.path)?
            .query_row([uid], |r| r.get(0))
            .optional()
            .at(&self.path)
    }

    pub fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        let path = &self.path;
        let tx = self.conn.unchecked_transaction().at(path)?;
        self.require_run(&tx, id)?;
        let mut stmt = tx
            .prepare_cached(
                "SELECT seq, status = 'ok' FROM measurements WHERE run_id = ?1 ORDER BY seq",
            )
            .at(path)?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .at(path)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(path)?;
        Ok(rows)
    }

    /// The run's whole plan, in execution order.
    pub fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.planned(
            id,
            "SELECT seq, point, params, variant, rep, role FROM plan WHERE run_id = ?1 \
             ORDER BY seq",
        )
    }

    /// What a resume still has to do: planned measurements not recorded `Ok` (never
    /// recorded, or failed), in execution order.
    pub fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.planned(
            id,
            "SELECT p.seq, p.point, p.params, p.variant, p.rep, p.role FROM plan p \
             LEFT JOIN measurements m ON m.run_id = p.run_id AND m.seq = p.seq \
             WHERE p.run_id = ?1 AND (m.status IS NULL OR m.status <> 'ok') ORDER BY p.seq",
        )
    }

    fn planned(&self, id: RunId, sql: &str) -> Result<Vec<PlannedMeasurement>, StoreError> {
        let path = &self.path;
        let tx = self.conn.unchecked_transaction().at(path)?;
        self.require_run(&tx, id)?;
        let mut stmt = tx.prepare_cached(sql).at(path)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get(1)?,
                    r.get::<_, String>(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .at(path)?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, point, params, variant, rep, role) = row.at(path)?;
            out.push(PlannedMeasurement {
                seq,
                point,
                params: parse_params(path, id, seq, &params)?,
                variant,
                rep,
                role: parse_role(path, id, seq, &role)?,
            });
        }
        Ok(out)
    }

    /// Every recorded measurement of the run (Ok and failed), ordered by seq, with all it
    /// produced and its telemetry.
    pub fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError> {
        let path = &self.path;
        self.stable_plans()?;
        let tx = self.conn.unchecked_transaction().at(path)?;
        self.require_run(&tx, id)?;
        let mut seen = Decoded::default();
        self.seq_range(&tx, id, (0, u32::MAX), &mut |_| true, &mut seen)
    }

    /// Keeps each statement's plan across the bounds bound to it. This SQLite is built
    /// with STAT4, so a statement with a range is otherwise prepared again whenever new
    /// bounds are bound: once per query of every chunk, a twentieth of a 100,000
    /// measurement report. Without statistics tables (perflab never runs ANALYZE) the
    /// plan is the same either way.
    fn stable_plans(&self) -> Result<(), StoreError> {
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .at(&self.path)?;
        Ok(())
    }

    /// The run's measurements handed to `visit` one at a time, in seq order, read a
    /// chunk of seqs at a time inside one read transaction: one snapshot, as
    /// [`Self::measurements`], without the whole run in memory at once.
    pub fn visit_measurements(
        &self,
        id: RunId,
        telemetry: TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let path = &self.path;
        self.stable_plans()?;
        let tx = self.conn.unchecked_transaction().at(path)?;
        self.require_run(&tx, id)?;
        let seqs = tx
            .prepare_cached("SELECT seq FROM measurements WHERE run_id = ?1 ORDER BY seq")
            .at(path)?
            .query_map([id], |r| r.get::<_, u32>(0))
            .at(path)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .at(path)?;
        let mut seen = Decoded::default();
        for range in crate::assemble::chunks(&seqs) {
            for m in self.seq_range(&tx, id, range, &mut *telemetry, &mut seen)? {
                visit(m)?;
            }
        }
        Ok(())
    }

    /// The measurements of `id` whose seq lies in `lo..=hi`, whole.
    fn seq_range(
        &self,
        tx: &Connection,
        id: RunId,
        (lo, hi): (u32, u32),
        telemetry: TelemetryFilter,
        seen: &mut Decoded,
    ) -> Result<Vec<MeasurementRecord>, StoreError> {
        let path = &self.path;
        let db = &self.location;
        let recs = load_measurements(tx, path, db, id, (lo, hi), seen)?;
        let mut a = Assembler::new(db, id, recs, seen);
        let telemetry = a.filter_telemetry(telemetry);
        let range = (id, lo, hi);
        read_metrics(tx, path, range, &mut a)?;
        read_histograms(tx, path, range, &mut a)?;
        read_threads(tx, path, range, &mut a)?;
        for (lo, hi) in telemetry {
            read_telemetry(tx, path, (id, lo, hi), &mut a)?;
        }
        Ok(a.finish())
    }

    fn require_run(&self, conn: &Connection, id: RunId) -> Result<(), StoreError> {
        if run_exists(conn, id).at(&self.path)? {
            Ok(())
        } else {
            Err(self.no_run(id))
        }
    }

    fn no_run(&self, id: RunId) -> StoreError {
        StoreError::NoRun {
            db: self.path.clone().into(),
            id,
        }
    }
}

/// The measurement rows of a run, with their plan columns and empty outputs.
fn load_measurements(
    conn: &Connection,
    path: &Path,
    db: &Location,
    id: RunId,
    (lo, hi): (u32, u32),
    seen: &mut Decoded,
) -> Result<Vec<MeasurementRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(measurements_select!("?1", "?2", "?3"))
        .at(path)?;
    let mut rows = stmt.query(params![id, lo, hi]).at(path)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().at(path)? {
        let raw = RawMeasurement {
            seq: r.get(0).at(path)?,
            point: r.get(1).at(path)?,
            params: r.get(2).at(path)?,
            variant: r.get(3).at(path)?,
            rep: r.get(4).at(path)?,
            status: r.get(5).at(path)?,
            error: r.get(6).at(path)?,
            started_at: r.get(7).at(path)?,
            elapsed_s: r.get(8).at(path)?,
            notes: r.get(9).at(path)?,
            ineffective: r.get(10).at(path)?,
            role: r.get(11).at(path)?,
            monitors: r.get(12).at(path)?,
        };
        out.push(raw.decode(db, id, seen)?);
    }
    Ok(out)
}

/// A text column borrowed from the row, without copying it into a String.
fn text<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    let v = r.get_ref(i)?;
    v.as_str()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, v.data_type(), Box::new(e)))
}

/// The metrics of the measurements in `lo..=hi`, into the assembler.
fn read_metrics(
    tx: &Connection,
    path: &Path,
    (id, lo, hi): (RunId, u32, u32),
    a: &mut Assembler,
) -> Result<(), StoreError> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT seq, name, value, unit, better FROM metrics WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq, idx",
        )
        .at(path)?;
    let mut rows = stmt.query(params![id, lo, hi]).at(path)?;
    while let Some(r) = rows.next().at(path)? {
        a.metric(
            r.get(0).at(path)?,
            r.get(1).at(path)?,
            r.get(2).at(path)?,
            text(r, 3).at(path)?,
            text(r, 4).at(path)?,
        )?;
    }
    Ok(())
}

/// The histograms of the measurements in `lo..=hi`, into the assembler.
fn read_histograms(
    tx: &Connection,
    path: &Path,
    (id, lo, hi): (RunId, u32, u32),
    a: &mut Assembler,
) -> Result<(), StoreError> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT seq, name, unit, count, min, mean, max, stddev, p50, p90, p99, p999, \
             p9999, encoded, above, above_count FROM histograms WHERE run_id = ?1 \
             AND seq BETWEEN ?2 AND ?3 ORDER BY seq, idx",
        )
        .at(path)?;
    let mut rows = stmt.query(params![id, lo, hi]).at(path)?;
    while let Some(r) = rows.next().at(path)? {
        let mut stats = [None; 9];
        for (i, s) in stats.iter_mut().enumerate() {
            *s = r.get(4 + i).at(path)?;
        }
        a.histogram(RawHistogram {
            seq: r.get(0).at(path)?,
            name: r.get(1).at(path)?,
            unit: r.get(2).at(path)?,
            count: r.get(3).at(path)?,
            stats,
            encoded: r.get(13).at(path)?,
            above: (r.get(14).at(path)?, r.get(15).at(path)?),
        })?;
    }
    Ok(())
}

/// The threads of the measurements in `lo..=hi`, into the assembler.
fn read_threads(
    tx: &Connection,
    path: &Path,
    (id, lo, hi): (RunId, u32, u32),
    a: &mut Assembler,
) -> Result<(), StoreError> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT seq, role, tid, pinned_cpu, cpu_samples, migrations, voluntary_switches, \
             involuntary_switches, start_ns, end_ns, bytes, counters, cpu_path FROM threads \
             WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq, idx",
        )
        .at(path)?;
    let mut rows = stmt.query(params![id, lo, hi]).at(path)?;
    while let Some(r) = rows.next().at(path)? {
        a.thread(RawThread {
            seq: r.get(0).at(path)?,
            role: r.get(1).at(path)?,
            tid: r.get(2).at(path)?,
            pinned_cpu: r.get(3).at(path)?,
            cpu_samples: r.get(4).at(path)?,
            migrations: r.get(5).at(path)?,
            voluntary_switches: r.get(6).at(path)?,
            involuntary_switches: r.get(7).at(path)?,
            start_ns: r.get(8).at(path)?,
            end_ns: r.get(9).at(path)?,
            bytes: r.get(10).at(path)?,
            counters: r.get(11).at(path)?,
            cpu_path: r.get(12).at(path)?,
        })?;
    }
    Ok(())
}

/// The telemetry rows the assembler wants of the measurements in `lo..=hi`.
fn read_telemetry(
    tx: &Connection,
    path: &Path,
    (id, lo, hi): (RunId, u32, u32),
    a: &mut Assembler,
) -> Result<(), StoreError> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT seq, source, key, label, cpu, value, unit FROM telemetry \
             WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq, idx",
        )
        .at(path)?;
    let mut rows = stmt.query(params![id, lo, hi]).at(path)?;
    // The row's place in its measurement's rows.
    let (mut last, mut k) = (None, 0);
    while let Some(r) = rows.next().at(path)? {
        let seq = r.get(0).at(path)?;
        if !a.wants_telemetry(seq) {
            continue;
        }
        k = if last == Some(seq) { k + 1 } else { 0 };
        last = Some(seq);
        let columns = [
            bytes(r, 1).at(path)?,
            bytes(r, 2).at(path)?,
            bytes(r, 3).at(path)?,
        ];
        let [source, key, label] = a
            .seen()
            .telemetry_names(k, columns)
            .map_err(|e| rusqlite::Error::Utf8Error(1, e))
            .at(path)?;
        a.telemetry(RawTelemetry {
            seq,
            source,
            key,
            label,
            cpu: r.get(4).at(path)?,
            value: r.get(5).at(path)?,
            unit: text(r, 6).at(path)?,
        })?;
    }
    Ok(())
}

/// A text column's bytes, borrowed from the row and not yet checked as UTF-8.
fn bytes<'r>(r: &'r Row<'_>, i: usize) -> rusqlite::Result<&'r [u8]> {
    match r.get_ref(i)? {
        rusqlite::types::ValueRef::Text(b) => Ok(b),
        v => Err(rusqlite::Error::InvalidColumnType(
            i,
            "a text column".into(),
            v.data_type(),
        )),
    }
}
