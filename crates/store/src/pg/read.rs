//! Reading runs, plans and measurements back (PostgreSQL).
//!
//! Each read runs in one REPEATABLE READ, READ ONLY transaction: one snapshot even while
//! another process records into the run, as SQLite's read transactions give.

use std::collections::HashMap;

use postgres::types::FromSql;
use postgres::{Client, IsolationLevel, Row, Transaction};

use super::{small, PgBackend};
use crate::codec::{
    parse_params, parse_role, real, status_from_columns, u64_from_sql, NameCache, RawRun,
};
use crate::error::{corrupt, PgAt};
use crate::{
    Location, MeasurementRecord, PlannedMeasurement, RunId, RunInfo, StoreError, UnavailableVariant,
};
use perflab_core::{
    Better, HistogramData, Metric, TelemetryRow, ThreadRecord, Unit, WorkloadOutput,
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
        let mut recs = self.load_measurements(&mut tx, id)?;
        let index: HashMap<u32, usize> = recs.iter().enumerate().map(|(i, r)| (r.seq, i)).collect();
        let slot = |seq: u32| -> Result<usize, StoreError> {
            index.get(&seq).copied().ok_or_else(|| {
                corrupt(
                    db,
                    format!("run {id}: rows for unrecorded measurement {seq}"),
                )
            })
        };
        let mut units = NameCache::<Unit>::new();
        let mut betters = NameCache::<Better>::new();
        let mut unit = |s: &str| {
            units
                .get(s)
                .ok_or_else(|| corrupt(db, format!("unknown unit {s:?}")))
        };

        let st = self.stmt(
            &mut tx,
            "SELECT seq, name, value, unit, better FROM metrics WHERE run_id = $1 \
             ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            let better: String = col(&r, 4, db)?;
            let m = Metric {
                name: col(&r, 1, db)?,
                value: real(col(&r, 2, db)?),
                unit: unit(col(&r, 3, db)?)?,
                better: betters
                    .get(&better)
                    .ok_or_else(|| corrupt(db, format!("unknown direction {better:?}")))?,
            };
            recs[slot(seq)?].output.metrics.push(m);
        }

        let st = self.stmt(
            &mut tx,
            "SELECT seq, name, unit, count, min, mean, max, stddev, p50, p90, p99, p999, \
             p9999, encoded FROM histograms WHERE run_id = $1 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            let f = |i: usize| col::<Option<f64>>(&r, i, db).map(real);
            let h = HistogramData {
                name: col(&r, 1, db)?,
                unit: unit(col(&r, 2, db)?)?,
                count: u64_from_sql(col(&r, 3, db)?),
                min: f(4)?,
                mean: f(5)?,
                max: f(6)?,
                stddev: f(7)?,
                p50: f(8)?,
                p90: f(9)?,
                p99: f(10)?,
                p999: f(11)?,
                p9999: f(12)?,
                encoded: col(&r, 13, db)?,
            };
            recs[slot(seq)?].output.histograms.push(h);
        }

        let st = self.stmt(
            &mut tx,
            "SELECT seq, role, tid, pinned_cpu, cpu_samples, migrations, voluntary_switches, \
             involuntary_switches, start_ns, end_ns, bytes, counters, cpu_path FROM threads \
             WHERE run_id = $1 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            let bad = |what: String| corrupt(db, format!("run {id} measurement {seq}: {what}"));
            let counter = |i: usize| col::<Option<i64>>(&r, i, db).map(|v| v.map(u64_from_sql));
            let samples: String = col(&r, 4, db)?;
            let tid: i64 = col(&r, 2, db)?;
            let pinned: Option<i64> = col(&r, 3, db)?;
            let t = ThreadRecord {
                role: col(&r, 1, db)?,
                tid: i32::try_from(tid)
                    .map_err(|_| bad(format!("thread id {tid} out of range")))?,
                pinned_cpu: pinned.map(|c| small(db, "a pinned CPU", c)).transpose()?,
                cpu_samples: serde_json::from_str(&samples)
                    .map_err(|e| bad(format!("thread CPU samples: {e}")))?,
                cpu_path: match col::<Option<String>>(&r, 12, db)? {
                    None => Default::default(),
                    Some(text) => serde_json::from_str(&text)
                        .map_err(|e| bad(format!("thread CPU path: {e}")))?,
                },
                migrations: counter(5)?,
                voluntary_switches: counter(6)?,
                involuntary_switches: counter(7)?,
                start_ns: u64_from_sql(col(&r, 8, db)?),
                end_ns: u64_from_sql(col(&r, 9, db)?),
                bytes: counter(10)?,
                counters: match col::<Option<String>>(&r, 11, db)? {
                    None => Vec::new(),
                    Some(text) => serde_json::from_str(&text)
                        .map_err(|e| bad(format!("thread counters: {e}")))?,
                },
            };
            recs[slot(seq)?].output.threads.push(t);
        }

        let st = self.stmt(
            &mut tx,
            "SELECT seq, source, key, label, cpu, value, unit FROM telemetry \
             WHERE run_id = $1 ORDER BY seq, idx",
        )?;
        for r in tx.query(&st, &[&id]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            let cpu: Option<i64> = col(&r, 4, db)?;
            let t = TelemetryRow {
                source: col(&r, 1, db)?,
                key: col(&r, 2, db)?,
                label: col(&r, 3, db)?,
                cpu: cpu.map(|c| small(db, "a CPU", c)).transpose()?,
                value: real(col(&r, 5, db)?),
                unit: unit(col(&r, 6, db)?)?,
            };
            recs[slot(seq)?].telemetry.push(t);
        }
        tx.commit().at(db)?;
        Ok(recs)
    }

    /// The measurement rows of a run, with their plan columns and empty outputs.
    fn load_measurements(
        &self,
        tx: &mut Transaction<'_>,
        id: RunId,
    ) -> Result<Vec<MeasurementRecord>, StoreError> {
        let db = &self.location;
        let st = self.stmt(
            tx,
            "SELECT m.seq, p.point, p.params, p.variant, p.rep, m.status, m.error, \
             m.started_at, m.elapsed_s, m.notes, m.ineffective, p.role, m.monitors \
             FROM measurements m \
             JOIN plan p ON p.run_id = m.run_id AND p.seq = m.seq \
             WHERE m.run_id = $1 ORDER BY m.seq",
        )?;
        let mut out = Vec::new();
        for r in tx.query(&st, &[&id]).at(db)? {
            let seq = col32(&r, 0, db, "a seq")?;
            let params: String = col(&r, 2, db)?;
            let status: String = col(&r, 5, db)?;
            let notes: String = col(&r, 9, db)?;
            let role: String = col(&r, 11, db)?;
            let monitors: Option<String> = col(&r, 12, db)?;
            let bad = |what: String| corrupt(db, format!("run {id} measurement {seq}: {what}"));
            out.push(MeasurementRecord {
                seq,
                point: col32(&r, 1, db, "a point")?,
                params: parse_params(db, id, seq, &params)?,
                variant: col(&r, 3, db)?,
                rep: col32(&r, 4, db, "a rep")?,
                status: status_from_columns(&status, col(&r, 6, db)?, col(&r, 10, db)?)
                    .ok_or_else(|| bad(format!("unknown status {status:?}")))?,
                started_at: real(col(&r, 7, db)?),
                elapsed_s: real(col(&r, 8, db)?),
                output: WorkloadOutput {
                    notes: serde_json::from_str(&notes).map_err(|e| bad(format!("notes: {e}")))?,
                    ..WorkloadOutput::default()
                },
                telemetry: Vec::new(),
                role: parse_role(db, id, seq, &role)?,
                monitors: match monitors {
                    Some(m) => {
                        serde_json::from_str(&m).map_err(|e| bad(format!("monitors: {e}")))?
                    }
                    None => Vec::new(),
                },
            });
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
