//! Creating runs and recording measurements (PostgreSQL), each in one transaction, with
//! the same checks as SQLite (`crate::rules`).
//!
//! Child rows go in with one statement per table (`INSERT … SELECT FROM unnest(arrays)`),
//! not one per row: a measurement with hundreds of telemetry rows is a handful of round
//! trips to the server.

use std::collections::HashSet;

use postgres::Transaction;

use super::{big, small, PgBackend};
use crate::codec::{json, name, status_columns, u64_to_sql, OK};
use crate::error::PgAt;
use crate::rules::{check_append, check_matches_plan, check_new_plan, PlanRow, RepKey};
use crate::{
    Location, MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunStatus, StoreError,
};

impl PgBackend {
    pub(crate) fn create_run(
        &mut self,
        run: &NewRun,
        created_at: f64,
    ) -> Result<RunId, StoreError> {
        check_new_plan(&run.plan)?;
        let spec = json("the experiment spec", &run.spec)?;
        let fingerprint = json("the host fingerprint", &run.fingerprint)?;
        let uid = crate::uid::uid_for(run.uid.as_deref());
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().at(db)?;
        let st = self.stmt(
            &mut tx,
            "INSERT INTO runs (created_at, study, workload, label, status, spec, fingerprint, \
             uid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )?;
        let inserted = tx.query_one(
            &st,
            &[
                &created_at,
                &run.study,
                &run.workload,
                &run.label,
                &RunStatus::Running.as_str(),
                &spec,
                &fingerprint,
                &uid,
            ],
        );
        let id: RunId = match inserted {
            Ok(row) => row.get(0),
            // Another session created a run of this uid first (two pushes of one run).
            Err(e) if e.as_db_error().and_then(|d| d.constraint()) == Some("runs_uid_key") => {
                drop(tx);
                let existing: RunId = client
                    .query_one("SELECT id FROM runs WHERE uid = $1", &[&uid])
                    .at(db)?
                    .get(0);
                return Err(StoreError::DuplicateUid {
                    db: db.clone(),
                    uid,
                    existing,
                });
            }
            Err(e) => return Err(e).at(db),
        };
        self.insert_plan(&mut tx, id, &run.plan)?;
        if !run.unavailable.is_empty() {
            let idx: Vec<i64> = (0..run.unavailable.len() as i64).collect();
            let variants: Vec<&str> = run.unavailable.iter().map(|u| u.variant.as_str()).collect();
            let reasons: Vec<&str> = run.unavailable.iter().map(|u| u.reason.as_str()).collect();
            let st = self.stmt(
                &mut tx,
                "INSERT INTO unavailable (run_id, idx, variant, reason) \
                 SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[])",
            )?;
            tx.execute(&st, &[&id, &idx, &variants, &reasons]).at(db)?;
        }
        tx.commit().at(db)?;
        Ok(id)
    }

    pub(crate) fn append_plan(
        &mut self,
        run: RunId,
        more: &[PlannedMeasurement],
    ) -> Result<u32, StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().at(db)?;
        // The run's row, locked: appends to one run from two sessions take turns, so both
        // check against the plan as the other left it.
        self.lock_run(&mut tx, run)?;
        let st = self.stmt(
            &mut tx,
            "SELECT point, variant, rep, role, seq FROM plan WHERE run_id = $1",
        )?;
        let mut last: Option<u32> = None;
        let mut planned_reps: HashSet<RepKey> = HashSet::new();
        for r in tx.query(&st, &[&run]).at(db)? {
            let seq = small(db, "a seq", r.try_get(4).at(db)?)?;
            last = Some(last.map_or(seq, |l: u32| l.max(seq)));
            planned_reps.insert((
                small(db, "a point", r.try_get(0).at(db)?)?,
                r.try_get(1).at(db)?,
                small(db, "a rep", r.try_get(2).at(db)?)?,
                r.try_get(3).at(db)?,
            ));
        }
        check_append(run, last, planned_reps, more)?;
        self.insert_plan(&mut tx, run, more)?;
        let st = self.stmt(&mut tx, "SELECT count(*) FROM plan WHERE run_id = $1")?;
        let planned: i64 = tx.query_one(&st, &[&run]).at(db)?.get(0);
        tx.commit().at(db)?;
        small(db, "a planned count", planned)
    }

    pub(crate) fn record(&mut self, run: RunId, rec: &MeasurementRecord) -> Result<(), StoreError> {
        let params_text = json("parameters", &rec.params)?;
        let notes = json("notes", &rec.output.notes)?;
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().at(db)?;
        let seq = big(rec.seq);

        // FOR UPDATE: two sessions recording the same seq take turns, and the second sees
        // what the first committed (AlreadyRecorded, as SQLite's write lock gives).
        let st = self.stmt(
            &mut tx,
            "SELECT point, params, variant, rep, role FROM plan WHERE run_id = $1 AND seq = $2 \
             FOR UPDATE",
        )?;
        let Some(row) = tx.query_opt(&st, &[&run, &seq]).at(db)? else {
            return Err(if self.run_exists(&mut tx, run)? {
                StoreError::NotPlanned {
                    db: db.clone(),
                    run,
                    seq: rec.seq,
                }
            } else {
                self.no_run(run)
            });
        };
        let planned = PlanRow {
            point: small(db, "a point", row.try_get(0).at(db)?)?,
            params: row.try_get(1).at(db)?,
            variant: row.try_get(2).at(db)?,
            rep: small(db, "a rep", row.try_get(3).at(db)?)?,
            role: row.try_get(4).at(db)?,
        };
        check_matches_plan(run, rec, &params_text, &planned)?;

        let st = self.stmt(
            &mut tx,
            "SELECT status FROM measurements WHERE run_id = $1 AND seq = $2",
        )?;
        let prior: Option<String> = match tx.query_opt(&st, &[&run, &seq]).at(db)? {
            Some(r) => Some(r.try_get(0).at(db)?),
            None => None,
        };
        match prior.as_deref() {
            Some(OK) => {
                return Err(StoreError::AlreadyRecorded {
                    db: db.clone(),
                    run,
                    seq: rec.seq,
                })
            }
            // A failed one is replaced; its child rows go with it (ON DELETE CASCADE).
            Some(_) => {
                let st = self.stmt(
                    &mut tx,
                    "DELETE FROM measurements WHERE run_id = $1 AND seq = $2",
                )?;
                tx.execute(&st, &[&run, &seq]).at(db)?;
            }
            None => {}
        }

        let (status, error, ineffective) = status_columns(&rec.status);
        let monitors = json("monitors", &rec.monitors)?;
        let st = self.stmt(
            &mut tx,
            "INSERT INTO measurements (run_id, seq, status, error, started_at, elapsed_s, notes, \
             ineffective, monitors) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )?;
        tx.execute(
            &st,
            &[
                &run,
                &seq,
                &status,
                &error,
                &rec.started_at,
                &rec.elapsed_s,
                &notes,
                &ineffective,
                &monitors,
            ],
        )
        .at(db)?;
        self.insert_children(&mut tx, run, rec)?;
        tx.commit().at(db)
    }

    pub(crate) fn set_status(&mut self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        self.update_run(
            "UPDATE runs SET status = $1 WHERE id = $2",
            Some(status.as_str()),
            run,
        )
    }

    pub(crate) fn set_label(&mut self, run: RunId, label: Option<&str>) -> Result<(), StoreError> {
        self.update_run("UPDATE runs SET label = $1 WHERE id = $2", label, run)
    }

    fn update_run(
        &mut self,
        sql: &'static str,
        value: Option<&str>,
        run: RunId,
    ) -> Result<(), StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let st = self.stmt(&mut *client, sql)?;
        let n = client.execute(&st, &[&value, &run]).at(db)?;
        if n == 0 {
            return Err(self.no_run(run));
        }
        Ok(())
    }

    pub(crate) fn delete_run(&mut self, run: RunId) -> Result<(), StoreError> {
        let db = &self.location;
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().at(db)?;
        self.lock_run(&mut tx, run)?;
        // Children first, table by table, as in SQLite: a few range deletes rather than a
        // cascade visiting each measurement's children in turn.
        for table in [
            "telemetry",
            "threads",
            "histograms",
            "metrics",
            "measurements",
            "plan",
            "unavailable",
        ] {
            tx.execute(&format!("DELETE FROM {table} WHERE run_id = $1"), &[&run])
                .at(db)?;
        }
        tx.execute("DELETE FROM runs WHERE id = $1", &[&run])
            .at(db)?;
        tx.commit().at(db)
    }

    fn run_exists(&self, tx: &mut Transaction<'_>, run: RunId) -> Result<bool, StoreError> {
        let st = self.stmt(tx, "SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)")?;
        Ok(tx.query_one(&st, &[&run]).at(&self.location)?.get(0))
    }

    /// Locks the run's row for the rest of the transaction; `NoRun` when there is none.
    fn lock_run(&self, tx: &mut Transaction<'_>, run: RunId) -> Result<(), StoreError> {
        let st = self.stmt(tx, "SELECT id FROM runs WHERE id = $1 FOR UPDATE")?;
        match tx.query_opt(&st, &[&run]).at(&self.location)? {
            Some(_) => Ok(()),
            None => Err(self.no_run(run)),
        }
    }

    fn insert_plan(
        &self,
        tx: &mut Transaction<'_>,
        run: RunId,
        plan: &[PlannedMeasurement],
    ) -> Result<(), StoreError> {
        if plan.is_empty() {
            return Ok(());
        }
        let mut seq = Vec::with_capacity(plan.len());
        let mut point = Vec::with_capacity(plan.len());
        let mut params = Vec::with_capacity(plan.len());
        let mut variant = Vec::with_capacity(plan.len());
        let mut rep = Vec::with_capacity(plan.len());
        let mut role = Vec::with_capacity(plan.len());
        for p in plan {
            seq.push(big(p.seq));
            point.push(big(p.point));
            params.push(json("parameters", &p.params)?);
            variant.push(p.variant.as_str());
            rep.push(big(p.rep));
            role.push(p.role.as_str());
        }
        let st = self.stmt(
            tx,
            "INSERT INTO plan (run_id, seq, point, params, variant, rep, role) \
             SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], \
             $6::bigint[], $7::text[])",
        )?;
        tx.execute(&st, &[&run, &seq, &point, &params, &variant, &rep, &role])
            .at(&self.location)?;
        Ok(())
    }

    fn insert_children(
        &self,
        tx: &mut Transaction<'_>,
        run: RunId,
        rec: &MeasurementRecord,
    ) -> Result<(), StoreError> {
        let db: &Location = &self.location;
        let seq = big(rec.seq);
        let out = &rec.output;
        let idx = |n: usize| -> Vec<i64> { (0..n as i64).collect() };

        if !out.metrics.is_empty() {
            let m = &out.metrics;
            let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
            let values: Vec<f64> = m.iter().map(|m| m.value).collect();
            let units = m
                .iter()
                .map(|m| name(&m.unit))
                .collect::<Result<Vec<_>, _>>()?;
            let betters = m
                .iter()
                .map(|m| name(&m.better))
                .collect::<Result<Vec<_>, _>>()?;
            let st = self.stmt(
                tx,
                "INSERT INTO metrics (run_id, seq, idx, name, value, unit, better) \
                 SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::float8[], \
                 $6::text[], $7::text[])",
            )?;
            tx.execute(
                &st,
                &[&run, &seq, &idx(m.len()), &names, &values, &units, &betters],
            )
            .at(db)?;
        }

        if !out.histograms.is_empty() {
            let h = &out.histograms;
            let f = |g: fn(&perflab_core::HistogramData) -> f64| -> Vec<f64> {
                h.iter().map(g).collect()
            };
            let names: Vec<&str> = h.iter().map(|h| h.name.as_str()).collect();
            let units = h
                .iter()
                .map(|h| name(&h.unit))
                .collect::<Result<Vec<_>, _>>()?;
            let counts: Vec<i64> = h.iter().map(|h| u64_to_sql(h.count)).collect();
            let encoded: Vec<&[u8]> = h.iter().map(|h| h.encoded.as_slice()).collect();
            let above: Vec<Option<f64>> = h.iter().map(|h| h.above.map(|a| a.limit)).collect();
            let above_count: Vec<Option<i64>> = h
                .iter()
                .map(|h| h.above.map(|a| u64_to_sql(a.count)))
                .collect();
            let st = self.stmt(
                tx,
                "INSERT INTO histograms (run_id, seq, idx, name, unit, count, min, mean, max, \
                 stddev, p50, p90, p99, p999, p9999, encoded, above, above_count) \
                 SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::text[], \
                 $6::bigint[], $7::float8[], $8::float8[], $9::float8[], $10::float8[], \
                 $11::float8[], $12::float8[], $13::float8[], $14::float8[], $15::float8[], \
                 $16::bytea[], $17::float8[], $18::bigint[])",
            )?;
            tx.execute(
                &st,
                &[
                    &run,
                    &seq,
                    &idx(h.len()),
                    &names,
                    &units,
                    &counts,
                    &f(|h| h.min),
                    &f(|h| h.mean),
                    &f(|h| h.max),
                    &f(|h| h.stddev),
                    &f(|h| h.p50),
                    &f(|h| h.p90),
                    &f(|h| h.p99),
                    &f(|h| h.p999),
                    &f(|h| h.p9999),
                    &encoded,
                    &above,
                    &above_count,
                ],
            )
            .at(db)?;
        }

        if !out.threads.is_empty() {
            let t = &out.threads;
            let opt = |g: fn(&perflab_core::ThreadRecord) -> Option<u64>| -> Vec<Option<i64>> {
                t.iter().map(|t| g(t).map(u64_to_sql)).collect()
            };
            let roles: Vec<&str> = t.iter().map(|t| t.role.as_str()).collect();
            let tids: Vec<i64> = t.iter().map(|t| i64::from(t.tid)).collect();
            let pinned: Vec<Option<i64>> = t.iter().map(|t| t.pinned_cpu.map(big)).collect();
            let samples = t
                .iter()
                .map(|t| json("thread CPU samples", &t.cpu_samples))
                .collect::<Result<Vec<_>, _>>()?;
            let starts: Vec<i64> = t.iter().map(|t| u64_to_sql(t.start_ns)).collect();
            let ends: Vec<i64> = t.iter().map(|t| u64_to_sql(t.end_ns)).collect();
            let counters = t
                .iter()
                .map(|t| {
                    (!t.counters.is_empty())
                        .then(|| json("thread counters", &t.counters))
                        .transpose()
                })
                .collect::<Result<Vec<_>, _>>()?;
            let paths = t
                .iter()
                .map(|t| {
                    (!t.cpu_path.is_empty())
                        .then(|| json("thread CPU path", &t.cpu_path))
                        .transpose()
                })
                .collect::<Result<Vec<_>, _>>()?;
            let st = self.stmt(
                tx,
                "INSERT INTO threads (run_id, seq, idx, role, tid, pinned_cpu, cpu_samples, \
                 migrations, voluntary_switches, involuntary_switches, start_ns, end_ns, bytes, \
                 counters, cpu_path) \
                 SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::bigint[], \
                 $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], \
                 $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::text[])",
            )?;
            tx.execute(
                &st,
                &[
                    &run,
                    &seq,
                    &idx(t.len()),
                    &roles,
                    &tids,
                    &pinned,
                    &samples,
                    &opt(|t| t.migrations),
                    &opt(|t| t.voluntary_switches),
                    &opt(|t| t.involuntary_switches),
                    &starts,
                    &ends,
                    &opt(|t| t.bytes),
                    &counters,
                    &paths,
                ],
            )
            .at(db)?;
        }

        if !rec.telemetry.is_empty() {
            let t = &rec.telemetry;
            let sources: Vec<&str> = t.iter().map(|t| t.source.as_str()).collect();
            let keys: Vec<&str> = t.iter().map(|t| t.key.as_str()).collect();
            let labels: Vec<&str> = t.iter().map(|t| t.label.as_str()).collect();
            let cpus: Vec<Option<i64>> = t.iter().map(|t| t.cpu.map(big)).collect();
            let values: Vec<f64> = t.iter().map(|t| t.value).collect();
            let units = t
                .iter()
                .map(|t| name(&t.unit))
                .collect::<Result<Vec<_>, _>>()?;
            let st = self.stmt(
                tx,
                "INSERT INTO telemetry (run_id, seq, idx, source, key, label, cpu, value, unit) \
                 SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], \
                 $7::bigint[], $8::float8[], $9::text[])",
            )?;
            tx.execute(
                &st,
                &[
                    &run,
                    &seq,
                    &idx(t.len()),
                    &sources,
                    &keys,
                    &labels,
                    &cpus,
                    &values,
                    &units,
                ],
            )
            .at(db)?;
        }
        Ok(())
    }
}
