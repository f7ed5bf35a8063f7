//! Creating runs and recording measurements, each in one transaction.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};

use super::SqliteBackend;
use crate::codec::{json, name, status_columns, u64_to_sql, OK};
use crate::error::At;
use crate::rules::{check_append, check_matches_plan, check_new_plan, PlanRow, RepKey};
use crate::{MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunStatus, StoreError};

impl SqliteBackend {
    /// Stores a new run with status `running`, its whole plan and its unavailable variants.
    pub fn create_run(&mut self, run: &NewRun, created_at: f64) -> Result<RunId, StoreError> {
        check_new_plan(&run.plan)?;
        let spec = json("the experiment spec", &run.spec)?;
        let fingerprint = json("the host fingerprint", &run.fingerprint)?;
        let path = &self.path;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .at(path)?;
        let uid = crate::uid::uid_for(run.uid.as_deref());
        // Checked in the write transaction, so no other writer slips one in between.
        if let Some(existing) = tx
            .query_row("SELECT id FROM runs WHERE uid = ?1", [&uid], |r| r.get(0))
            .optional()
            .at(path)?
        {
            return Err(StoreError::DuplicateUid {
                db: path.into(),
                uid,
                existing,
            });
        }
        tx.execute(
            "INSERT INTO runs (created_at, study, workload, label, status, spec, fingerprint, \
             uid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                created_at,
                run.study,
                run.workload,
                run.label,
                RunStatus::Running.as_str(),
                spec,
                fingerprint,
                uid
            ],
        )
        .at(path)?;
        let id = tx.last_insert_rowid();
        insert_plan(&tx, path, id, &run.plan)?;
        {
            let mut ins = tx
                .prepare_cached(
                    "INSERT INTO unavailable (run_id, idx, variant, reason) VALUES (?1, ?2, ?3, ?4)",
                )
                .at(path)?;
            for (idx, u) in run.unavailable.iter().enumerate() {
                ins.execute(params![id, idx as i64, u.variant, u.reason])
                    .at(path)?;
            }
        }
        tx.commit().at(path)?;
        Ok(id)
    }

    /// Adds measurements to the end of a run's plan (adaptive repetitions decide them only
    /// after the planned ones are measured) and returns the run's new planned count.
    ///
    /// Every seq must be unique and come after the run's last planned seq, so the
    /// execution order of what is already planned never changes; a (point, variant, rep)
    /// already planned is refused, so repetition numbers stay unique per point and variant.
    pub fn append_plan(
        &mut self,
        run: RunId,
        more: &[PlannedMeasurement],
    ) -> Result<u32, StoreError> {
        let path = &self.path;
        let tx = run_transaction(&mut self.conn, path, run)?;
        let last: Option<u32> = tx
            .query_row("SELECT max(seq) FROM plan WHERE run_id = ?1", [run], |r| {
                r.get(0)
            })
            .at(path)?;
        // One scan of the run's plan rather than one query per appended row.
        // Headline and telemetry repetitions are numbered apart.
        let planned_reps: HashSet<RepKey> = tx
            .prepare_cached("SELECT point, variant, rep, role FROM plan WHERE run_id = ?1")
            .at(path)?
            .query_map([run], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .at(path)?
            .collect::<rusqlite::Result<_>>()
            .at(path)?;
        check_append(run, last, planned_reps, more)?;
        insert_plan(&tx, path, run, more)?;
        let planned: u32 = tx
            .query_row("SELECT count(*) FROM plan WHERE run_id = ?1", [run], |r| {
                r.get(0)
            })
            .at(path)?;
        tx.commit().at(path)?;
        Ok(planned)
    }

    /// Commits one measurement of `run`. Its seq must be planned and match the plan row;
    /// a seq already recorded `Ok` is refused, one recorded `Failed` is replaced.
    pub fn record(&mut self, run: RunId, rec: &MeasurementRecord) -> Result<(), StoreError> {
        let params_text = json("parameters", &rec.params)?;
        let notes = json("notes", &rec.output.notes)?;
        let path = &self.path;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .at(path)?;

        let planned: Option<(u32, String, String, u32, String)> = tx
            .prepare_cached(
                "SELECT point, params, variant, rep, role FROM plan WHERE run_id = ?1 AND seq = ?2",
            )
            .at(path)?
            .query_row(params![run, rec.seq], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()
            .at(path)?;
        let Some((point, planned_params, variant, rep, role)) = planned else {
            return Err(if run_exists(&tx, run).at(path)? {
                StoreError::NotPlanned {
                    db: path.into(),
                    run,
                    seq: rec.seq,
                }
            } else {
                StoreError::NoRun {
                    db: path.into(),
                    id: run,
                }
            });
        };
        check_matches_plan(
            run,
            rec,
            &params_text,
            &PlanRow {
                point,
                params: planned_params,
                variant,
                rep,
                role,
            },
        )?;

        let prior: Option<String> = tx
            .prepare_cached("SELECT status FROM measurements WHERE run_id = ?1 AND seq = ?2")
            .at(path)?
            .query_row(params![run, rec.seq], |r| r.get(0))
            .optional()
            .at(path)?;
        match prior.as_deref() {
            Some(OK) => {
                return Err(StoreError::AlreadyRecorded {
                    db: path.into(),
                    run,
                    seq: rec.seq,
                })
            }
            Some(_) => delete_measurement(&tx, run, rec.seq).at(path)?,
            None => {}
        }

        let (status, error, ineffective) = status_columns(&rec.status);
        let monitors = json("monitors", &rec.monitors)?;
        tx.prepare_cached(
            "INSERT INTO measurements (run_id, seq, status, error, started_at, elapsed_s, notes, \
             ineffective, monitors) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .at(path)?
        .execute(params![
            run,
            rec.seq,
            status,
            error,
            rec.started_at,
            rec.elapsed_s,
            notes,
            ineffective,
            monitors
        ])
        .at(path)?;
        insert_children(&tx, path, run, rec)?;
        tx.commit().at(path)
    }

    /// Marks a run running, interrupted or complete.
    pub fn set_status(&mut self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = ?1 WHERE id = ?2",
                params![status.as_str(), run],
            )
            .at(&self.path)?;
        self.changed_one(n, run)
    }

    /// Sets or clears a run's label.
    pub fn set_label(&mut self, run: RunId, label: Option<&str>) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET label = ?1 WHERE id = ?2",
                params![label, run],
            )
            .at(&self.path)?;
        self.changed_one(n, run)
    }

    /// Removes a run with everything recorded for it.
    pub fn delete_run(&mut self, run: RunId) -> Result<(), StoreError> {
        let path = &self.path;
        let tx = run_transaction(&mut self.conn, path, run)?;
        // Children first, table by table: a handful of range deletes instead of a cascade
        // that visits the children of each measurement in turn.
        for table in [
            "telemetry",
            "threads",
            "histograms",
            "metrics",
            "measurements",
            "plan",
            "unavailable",
        ] {
            tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [run])
                .at(path)?;
        }
        tx.execute("DELETE FROM runs WHERE id = ?1", [run])
            .at(path)?;
        tx.commit().at(path)
    }

    fn changed_one(&self, n: usize, run: RunId) -> Result<(), StoreError> {
        if n == 0 {
            return Err(StoreError::NoRun {
                db: self.path.clone().into(),
                id: run,
            });
        }
        Ok(())
    }
}

/// An immediate (write-locked) transaction on an existing run; `NoRun` otherwise.
fn run_transaction<'c>(
    conn: &'c mut rusqlite::Connection,
    path: &std::path::Path,
    run: RunId,
) -> Result<rusqlite::Transaction<'c>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .at(path)?;
    if !run_exists(&tx, run).at(path)? {
        return Err(StoreError::NoRun {
            db: path.into(),
            id: run,
        });
    }
    Ok(tx)
}

pub(crate) fn run_exists(conn: &rusqlite::Connection, run: RunId) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)")?
        .query_row([run], |r| r.get(0))
}

/// Removes a failed measurement before its retry is stored; its child rows go with it.
fn delete_measurement(tx: &Transaction<'_>, run: RunId, seq: u32) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM measurements WHERE run_id = ?1 AND seq = ?2")?
        .execute(params![run, seq])?;
    Ok(())
}

fn insert_children(
    tx: &Transaction<'_>,
    path: &Path,
    run: RunId,
    rec: &MeasurementRecord,
) -> Result<(), StoreError> {
    let seq = rec.seq;
    let out = &rec.output;

    let mut ins = tx
        .prepare_cached(
            "INSERT INTO metrics (run_id, seq, idx, name, value, unit, better) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .at(path)?;
    for (idx, m) in out.metrics.iter().enumerate() {
        ins.execute(params![
            run,
            seq,
            idx as i64,
            m.name,
            m.value,
            name(&m.unit)?,
            name(&m.better)?
        ])
        .at(path)?;
    }

    let mut ins = tx
        .prepare_cached(
            "INSERT INTO histograms (run_id, seq, idx, name, unit, count, min, mean, max, \
             stddev, p50, p90, p99, p999, p9999, encoded, above, above_count) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18)",
        )
        .at(path)?;
    for (idx, h) in out.histograms.iter().enumerate() {
        ins.execute(params![
            run,
            seq,
            idx as i64,
            h.name,
            name(&h.unit)?,
            u64_to_sql(h.count),
            h.min,
            h.mean,
            h.max,
            h.stddev,
            h.p50,
            h.p90,
            h.p99,
            h.p999,
            h.p9999,
            h.encoded,
            h.above.map(|a| a.limit),
            h.above.map(|a| u64_to_sql(a.count))
        ])
        .at(path)?;
    }

    let mut ins = tx
        .prepare_cached(
            "INSERT INTO threads (run_id, seq, idx, role, tid, pinned_cpu, cpu_samples, \
             migrations, voluntary_switches, involuntary_switches, start_ns, end_ns, bytes, \
             counters, cpu_path) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        )
        .at(path)?;
    for (idx, t) in out.threads.iter().enumerate() {
        ins.execute(params![
            run,
            seq,
            idx as i64,
            t.role,
            t.tid,
            t.pinned_cpu,
            json("thread CPU samples", &t.cpu_samples)?,
            t.migrations.map(u64_to_sql),
            t.voluntary_switches.map(u64_to_sql),
            t.involuntary_switches.map(u64_to_sql),
            u64_to_sql(t.start_ns),
            u64_to_sql(t.end_ns),
            t.bytes.map(u64_to_sql),
            if t.counters.is_empty() {
                None
            } else {
                Some(json("thread counters", &t.counters)?)
            },
            if t.cpu_path.is_empty() {
                None
            } else {
                Some(json("thread CPU path", &t.cpu_path)?)
            }
        ])
        .at(path)?;
    }

    let mut ins = tx
        .prepare_cached(
            "INSERT INTO telemetry (run_id, seq, idx, source, key, label, cpu, value, unit) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .at(path)?;
    for (idx, t) in rec.telemetry.iter().enumerate() {
        ins.execute(params![
            run,
            seq,
            idx as i64,
            t.source,
            t.key,
            t.label,
            t.cpu,
            t.value,
            name(&t.unit)?
        ])
        .at(path)?;
    }
    Ok(())
}

/// Adds planned measurements to `run`'s plan, inside the caller's transaction.
fn insert_plan(
    tx: &Transaction<'_>,
    path: &Path,
    run: RunId,
    plan: &[PlannedMeasurement],
) -> Result<(), StoreError> {
    let mut ins = tx
        .prepare_cached(
            "INSERT INTO plan (run_id, seq, point, params, variant, rep, role) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .at(path)?;
    for p in plan {
        let params_text = json("parameters", &p.params)?;
        ins.execute(params![
            run,
            p.seq,
            p.point,
            params_text,
            p.variant,
            p.rep,
            p.role.as_str()
        ])
        .at(path)?;
    }
    Ok(())
}
