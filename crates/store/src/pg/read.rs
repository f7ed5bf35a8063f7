//! Reading runs, plans and measurements back (PostgreSQL).
//!
//! Each read runs in one REPEATABLE READ, READ ONLY transaction: one snapshot even while
//! another process records into the run, as SQLite's read transactions give.

use std::collections::HashMap;

use postgres::types::FromSql;
use postgres::{Client, IsolationLevel, Row, Transaction};

use super::{small, PgBackend};
use crate::assemble::{
    measurements_select, Assembler, RawHistogram, RawMeasurement, RawTelemetry, RawThread,
    TelemetryFilter,
};
use crate::codec::{parse_params, parse_role, RawRun};
use crate::decoded::Decoded;
use crate::error::{corrupt, PgAt};
use crate::{
    Location, MeasurementRecord, PlannedMeasurement, RunId, RunInfo, StoreError, UnavailableVariant,
};

const RUNS_ALL: &str = "SELECT r.id, r.created_at, r.study, r.workload, r.label, r.status, \
     r.spec, r.fingerprint, \
     (SELECT count(*) FROM plan p WHERE p.run_id = r.id), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'ok'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'failed'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.ineffective IS NOT NULL), \
     r.uid FROM runs r ORDER BY r.id DESC";

const RUN_ONE: &str = "SELECT r.id, r.created_at, r.study, r.workload, r.label, r.status, \
     r.spec, r.fingerprint, \
     (SELECT count(*) FROM plan p WHERE p.run_id = r.id), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'ok'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'failed'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.ineffective IS NOT NULL), \
     r.uid FROM runs r WHERE r.id = $1";

const PLAN: &str = "SELECT seq, point, params, variant, rep, role FROM plan WHERE run_id = $1 \
     ORDER BY seq";

const PENDING: &str = "SELECT p.seq, p.point, p.params, p.variant, p.rep, p.role FROM plan p \
     LEFT JOIN measurements m ON m.run_id = p.run_id AND m.seq = p.seq \
     WHERE p.run_id = $1 AND (m.status IS NULL OR m.status <> 'ok') ORDER BY p.seq";

/// One column, typed; a column of another type (a table someone altered) is an error,
/// never a panic.
fn col<'a, T: FromSql<'a>>(r: &'a Row, i: usize, db: &Location) -> Result<T, StoreError> {
    r.try_get(i).at(db)
}

/// A BIGINT column that holds a u32 field.
fn col32(r: &Row, i: usize, db: &Location, what: &str) -> Result<u32, StoreError> {
    small(db, what, col::<i64>(r, i, db)?)
}

fn snapshot<'c>(c: &'c mut Client, db: &Location) -> Result<Transaction<'c>, StoreError> {
    c.build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .at(db)
}

fn raw_run(r: &Row, db: &Location) -> Result<RawRun, StoreError> {
    Ok(RawRun {
        id: col(r, 0, db)?,
        created_at: col(r, 1, db)?,
        study: col(r, 2, db)?,
        workload: col(r, 3, db)?,
        label: col(r, 4, db)?,
        status: col(r, 5, db)?,
        spec: col(r, 6, db)?,
        fingerprint: col(r, 7, db)?,
        planned: col32(r, 8, db, "a planned count")?,
        done: col32(r, 9, db, "a done count")?,
        failed: col32(r, 10, db, "a failed count")?,
        ineffective: col32(r, 11, db, "an ineffective count")?,
        uid: col(r, 12, db)?,
    })
}

impl PgBackend {
    pub(crate) fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client, db)?;
        let st = self.stmt(&mut tx, RUNS_ALL)?;
        let raw = tx
            .query(&st, &[])
            .at(db)?
            .iter()
            .map(|r| raw_run(r, db))
            .collect::<Result<Vec<_>, _>>()?;
        let st = self.stmt(
            &mut tx,
            "SELECT run_id, variant, reason FROM unavailable ORDER BY run_id, idx",
        )?;
        let mut unavailable: HashMap<RunId, Vec<UnavailableVariant>> = HashMap::new();
        for r in tx.query(&st, &[]).at(db)? {
            unavailable
                .entry(col(&r, 0, db)?)
                .or_default()
                .push(UnavailableVariant {
                    variant: col(&r, 1, db)?,
                    reason: col(&r, 2, db)?,
                });
        }
        tx.commit().at(db)?;
        raw.into_iter()
            .map(|r| {
                let u = unavailable.remove(&r.id).unwrap_or_default();
                r.decode(db, u)
            })
            .collect()
    }

    pub(crate) fn run(&self, id: RunId) -> Result<RunInfo, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client, db)?;
        let st = self.stmt(&mut tx, RUN_ONE)?;
        let row = tx
            .query_opt(&st, &[&id])
            .at(db)?
            .ok_or_else(|| self.no_run(id))?;
        let raw = raw_run(&row, db)?;
        let st = self.stmt(
            &mut tx,
            "SELECT variant, reason FROM unavailable WHERE run_id = $1 ORDER BY idx",
        )?;
        let unavailable = tx
            .query(&st, &[&id])
            .at(db)?
            .iter()
            .map(|r| {
                Ok(UnavailableVariant {
                    variant: col(r, 0, db)?,
                    reason: col(r, 1, db)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        tx.commit().at(db)?;
        raw.decode(db, unavailable)
    }

    pub(crate) fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let st = self.stmt(&mut *client, "SELECT id FROM runs WHERE uid = $1")?;
        match client.query_opt(&st, &[&uid]).at(db)? {
            Some(r) => Ok(Some(col(&r, 0, db)?)),
            None => Ok(None),
        }
    }

    pub(crate) fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.planned(id, PLAN)
    }

    pub(crate) fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.planned(id, PENDING)
    }

    fn planned(&self, id: RunId, sql: &'static str) -> Result<Vec<PlannedMeasurement>, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client, db)?;
        self.require_run(&mut tx, id)?;
        let st = self.stmt(&mut tx, sql)?;
        let mut out = Vec::new();
        for r in tx.query(&st, &[&id]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            let params: String = col(&r, 2, db)?;
            let role: String = col(&r, 5, db)?;
            out.push(PlannedMeasurement {
                seq,
                point: col32(&r, 1, db, "a point")?,
                params: parse_params(db, id, seq, &params)?,
                variant: col(&r, 3, db)?,
                rep: col32(&r, 4, db, "a rep")?,
                role: parse_role(db, id, seq, &role)?,
            });
        }
        tx.commit().at(db)?;
        Ok(out)
    }

    pub(crate) fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client, db)?;
        self.require_run(&mut tx, id)?;
        let st = self.stmt(
            &mut tx,
            "SELECT seq, status = 'ok' FROM measurements WHERE run_id = $1 ORDER BY seq",
        )?;
        let out = tx
            .query(&st, &[&id])
            .at(db)?
            .iter()
            .map(|r| Ok((col32(r, 0, db, "a seq")?, col(r, 1, db)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        tx.commit().at(db)?;
        Ok(out)
    }

    pub(crate) fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client, db)?;
        self.require_run(&mut tx, id)?;
        let all = (0, i64::from(u32::MAX));
        let out = self.seq_range(&mut tx, id, all, &mut |_| true, &mut Decoded::default())?;
        tx.commit().at(db)?;
        Ok(out)
    }

    /// The run's measurements handed to `visit` one at a time, in seq order, a chunk of
    /// seqs at a time inside one repeatable-read transaction: one snapshot, as
    /// [`Self::measurements`], without the whole run in memory at once.
    pub(crate) fn visit_measurements(
        &self,
        id: RunId,
        telemetry: TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client, db)?;
        self.require_run(&mut tx, id)?;
        let st = self.stmt(
            &mut tx,
            "SELECT seq FROM measurements WHERE run_id = $1 ORDER BY seq",
        )?;
        let seqs = tx
            .query(&st, &[&id])
            .at(db)?
            .iter()
            .map(|r| col32(r, 0, db, "a seq"))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut seen = Decoded::default();
        for (lo, hi) in crate::assemble::chunks(&seqs) {
            let range = (i64::from(lo), i64::from(hi));
            for m in self.seq_range(&mut tx, id, range, &mut *telemetry, &mut seen)? {
                visit(m)?;
            }
        }
        tx.commit().at(db)?;
        Ok(())
    }

    /// The measurements of `id` whose seq lies in `lo..=hi`, whole.
    fn seq_range(
        &self,
        tx: &mut Transaction<'_>,
        id: RunId,
        (lo, hi): (i64, i64),
        telemetry: TelemetryFilter,
        seen: &mut Decoded,
    ) -> Result<Vec<MeasurementRecord>, StoreError> {
        let db = &self.location;
        let recs = self.load_measurements(tx, id, (lo, hi), seen)?;
        let mut a = Assembler::new(db, id, recs, seen);
        let telemetry = a.filter_telemetry(telemetry);

        let range = (id, lo, hi);
        self.read_metrics(tx, range, &mut a)?;
        self.read_histograms(tx, range, &mut a)?;
        self.read_threads(tx, range, &mut a)?;
        for (lo, hi) in telemetry {
            self.read_telemetry(tx, (id, i64::from(lo), i64::from(hi)), &mut a)?;
        }
        Ok(a.finish())
    }

    /// The metrics of the measurements in `lo..=hi`, into the assembler.
    fn read_metrics(
        &self,
        tx: &mut Transaction<'_>,
        (id, lo, hi): (RunId, i64, i64),
        a: &mut Assembler,
    ) -> Result<(), StoreError> {
        let db = &self.location;
        let st = self.stmt(
            tx,
            "SELECT seq, name, value, unit, better FROM metrics WHERE run_id = $1 \
             AND seq BETWEEN $2 AND $3 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id, &lo, &hi]).at(db)? {
            a.metric(
                col32(&r, 0, db, "a seq")?,
                col(&r, 1, db)?,
                col(&r, 2, db)?,
                col(&r, 3, db)?,
                col(&r, 4, db)?,
            )?;
        }
        Ok(())
    }

    /// The histograms of the measurements in `lo..=hi`, into the assembler.
    fn read_histograms(
        &self,
        tx: &mut Transaction<'_>,
        (id, lo, hi): (RunId, i64, i64),
        a: &mut Assembler,
    ) -> Result<(), StoreError> {
        let db = &self.location;
        let st = self.stmt(
            tx,
            "SELECT seq, name, unit, count, min, mean, max, stddev, p50, p90, p99, p999, \
             p9999, encoded, above, above_count FROM histograms WHERE run_id = $1 \
             AND seq BETWEEN $2 AND $3 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id, &lo, &hi]).at(db)? {
            let mut stats = [None; 9];
            for (i, s) in stats.iter_mut().enumerate() {
                *s = col(&r, 4 + i, db)?;
            }
            a.histogram(RawHistogram {
                seq: col32(&r, 0, db, "a seq")?,
                name: col(&r, 1, db)?,
                unit: col(&r, 2, db)?,
                count: col(&r, 3, db)?,
                stats,
                encoded: col(&r, 13, db)?,
                above: (col(&r, 14, db)?, col(&r, 15, db)?),
            })?;
        }
        Ok(())
    }

    /// The threads of the measurements in `lo..=hi`, into the assembler.
    fn read_threads(
        &self,
        tx: &mut Transaction<'_>,
        (id, lo, hi): (RunId, i64, i64),
        a: &mut Assembler,
    ) -> Result<(), StoreError> {
        let db = &self.location;
        let st = self.stmt(
            tx,
            "SELECT seq, role, tid, pinned_cpu, cpu_samples, migrations, voluntary_switches, \
             involuntary_switches, start_ns, end_ns, bytes, counters, cpu_path FROM threads \
             WHERE run_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id, &lo, &hi]).at(db)? {
            let tid: i64 = col(&r, 2, db)?;
            let pinned: Option<i64> = col(&r, 3, db)?;
            a.thread(RawThread {
                seq: col32(&r, 0, db, "a seq")?,
                role: col(&r, 1, db)?,
                tid: i32::try_from(tid)
                    .map_err(|_| corrupt(db, format!("run {id}: thread id {tid} out of range")))?,
                pinned_cpu: pinned.map(|c| small(db, "a pinned CPU", c)).transpose()?,
                cpu_samples: col(&r, 4, db)?,
                migrations: col(&r, 5, db)?,
                voluntary_switches: col(&r, 6, db)?,
                involuntary_switches: col(&r, 7, db)?,
                start_ns: col(&r, 8, db)?,
                end_ns: col(&r, 9, db)?,
                bytes: col(&r, 10, db)?,
                counters: col(&r, 11, db)?,
                cpu_path: col(&r, 12, db)?,
            })?;
        }
        Ok(())
    }

    /// The telemetry rows the assembler wants of the measurements in `lo..=hi`.
    fn read_telemetry(
        &self,
        tx: &mut Transaction<'_>,
        (id, lo, hi): (RunId, i64, i64),
        a: &mut Assembler,
    ) -> Result<(), StoreError> {
        let db = &self.location;
        let st = self.stmt(
            tx,
            "SELECT seq, source, key, label, cpu, value, unit FROM telemetry \
             WHERE run_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id, &lo, &hi]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            if !a.wants_telemetry(seq) {
                continue;
            }
            let cpu: Option<i64> = col(&r, 4, db)?;
            a.telemetry(RawTelemetry {
                seq,
                source: col(&r, 1, db)?,
                key: col(&r, 2, db)?,
                label: col(&r, 3, db)?,
                cpu: cpu.map(|c| small(db, "a CPU", c)).transpose()?,
                value: col(&r, 5, db)?,
                unit: col(&r, 6, db)?,
            })?;
        }
        Ok(())
    }

    /// The measurement rows of a run, with their plan columns and empty outputs.
    fn load_measurements(
        &self,
        tx: &mut Transaction<'_>,
        id: RunId,
        (lo, hi): (i64, i64),
        seen: &mut Decoded,
    ) -> Result<Vec<MeasurementRecord>, StoreError> {
        let db = &self.location;
        let st = self.stmt(tx, measurements_select!("$1", "$2", "$3"))?;
        let mut out = Vec::new();
        for r in tx.query(&st, &[&id, &lo, &hi]).at(db)? {
            let raw = RawMeasurement {
                seq: col32(&r, 0, db, "a seq")?,
                point: col32(&r, 1, db, "a point")?,
                params: col(&r, 2, db)?,
                variant: col(&r, 3, db)?,
                rep: col32(&r, 4, db, "a rep")?,
                status: col(&r, 5, db)?,
                error: col(&r, 6, db)?,
                started_at: col(&r, 7, db)?,
                elapsed_s: col(&r, 8, db)?,
                notes: col(&r, 9, db)?,
                ineffective: col(&r, 10, db)?,
                role: col(&r, 11, db)?,
                monitors: col(&r, 12, db)?,
            };
            out.push(raw.decode(db, id, seen)?);
        }
        Ok(out)
    }

    pub(crate) fn require_run(
        &self,
        c: &mut impl postgres::GenericClient,
        id: RunId,
    ) -> Result<(), StoreError> {
        let st = self.stmt(c, "SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)")?;
        let exists: bool = c.query_one(&st, &[&id]).at(&self.location)?.get(0);
        if exists {
            Ok(())
        } else {
            Err(self.no_run(id))
        }
    }
}
