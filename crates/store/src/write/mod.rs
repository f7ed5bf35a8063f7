//! Creating runs and recording measurements, each in one transaction, for every backend.
//! The statements and the store's rules (`crate::rules`) are written once, over the seam
//! (`crate::sql`); a backend only begins the transaction each function takes, and commits
//! nothing itself: a function that returns an error drops its transaction, rolling back.

mod rows;

use std::collections::HashSet;

use crate::codec::{json, status_columns, OK};
use crate::error::corrupt;
use crate::read::{no_run, run_by_uid, run_exists};
use crate::rules::{check_append, check_matches_plan, PlanRow, RepKey};
use crate::sql::{QueryExt, WriteTx};
use crate::{MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunStatus, StoreError};

/// Planned measurements inserted per batch: a plan of millions is written without ever
/// being held whole.
const PLAN_BATCH: usize = 4096;

/// Stores a new run with status `running`, the plan `plan` yields (the rules on it
/// checked by the caller as it goes) and its unavailable variants; `run.plan` is not read.
pub(crate) fn create_run(
    mut tx: impl WriteTx,
    run: &NewRun,
    plan: &mut dyn Iterator<Item = Result<PlannedMeasurement, StoreError>>,
    created_at: f64,
) -> Result<RunId, StoreError> {
    let spec = json("the experiment spec", &run.spec)?;
    let fingerprint = json("the host fingerprint", &run.fingerprint)?;
    let uid = crate::uid::uid_for(run.uid.as_deref());
    // Looked up inside the write transaction: in SQLite no other writer slips one in
    // before the insert; in PostgreSQL one that does (two pushes of one run at once)
    // makes the insert do nothing, and is looked up then.
    if let Some(existing) = run_by_uid(&mut tx, &uid)? {
        return Err(duplicate_uid(&tx, uid, existing));
    }
    let inserted = tx.query_opt(
        "INSERT INTO runs (created_at, study, workload, label, status, spec, fingerprint, \
         uid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (uid) DO NOTHING \
         RETURNING id",
        &[
            created_at.into(),
            run.study.as_str().into(),
            run.workload.as_str().into(),
            run.label.as_deref().into(),
            RunStatus::Running.as_str().into(),
            spec.as_str().into(),
            fingerprint.as_str().into(),
            uid.as_str().into(),
        ],
        |r| r.int(0),
    )?;
    let Some(id) = inserted else {
        return Err(match run_by_uid(&mut tx, &uid)? {
            Some(existing) => duplicate_uid(&tx, uid, existing),
            None => corrupt(
                tx.db(),
                format!("run uid {uid} is taken, yet no run has it"),
            ),
        });
    };
    let mut batch = Vec::with_capacity(PLAN_BATCH);
    loop {
        batch.clear();
        for p in (&mut *plan).take(PLAN_BATCH) {
            batch.push(p?);
        }
        if batch.is_empty() {
            break;
        }
        rows::insert(&mut tx, rows::plan(id, &batch)?)?;
    }
    rows::insert(&mut tx, rows::unavailable(id, &run.unavailable))?;
    tx.commit()?;
    Ok(id)
}

/// Adds measurements to the end of a run's plan; returns the run's new planned count.
pub(crate) fn append_plan(
    mut tx: impl WriteTx,
    run: RunId,
    more: &[PlannedMeasurement],
) -> Result<u32, StoreError> {
    // The run's row, locked: appends to one run from two sessions take turns, so both
    // check against the plan as the other left it.
    lock_run(&mut tx, run)?;
    let (last, planned_reps) = planned_reps(&mut tx, run)?;
    check_append(run, last, planned_reps, more)?;
    rows::insert(&mut tx, rows::plan(run, more)?)?;
    let planned = tx.query_opt(
        "SELECT count(*) FROM plan WHERE run_id = $1",
        &[run.into()],
        |r| r.u32(0, "a planned count"),
    )?;
    tx.commit()?;
    Ok(planned.unwrap_or(0))
}

/// Commits one measurement of `run`. Its seq must be planned and match the plan row;
/// a seq already recorded `Ok` is refused, one recorded `Failed` is replaced.
pub(crate) fn record(
    mut tx: impl WriteTx,
    run: RunId,
    rec: &MeasurementRecord,
) -> Result<(), StoreError> {
    let params_text = json("parameters", &rec.params)?;
    let planned = plan_row(&mut tx, run, rec.seq)?;
    check_matches_plan(run, rec, &params_text, &planned)?;
    replace_failed(&mut tx, run, rec.seq)?;
    insert_measurement(&mut tx, run, rec)?;
    rows::insert_outputs(&mut tx, run, rec)?;
    tx.commit()
}

pub(crate) fn set_status(
    tx: impl WriteTx,
    run: RunId,
    status: RunStatus,
) -> Result<(), StoreError> {
    update_run(
        tx,
        "UPDATE runs SET status = $1 WHERE id = $2",
        Some(status.as_str()),
        run,
    )
}

pub(crate) fn set_label(
    tx: impl WriteTx,
    run: RunId,
    label: Option<&str>,
) -> Result<(), StoreError> {
    update_run(tx, "UPDATE runs SET label = $1 WHERE id = $2", label, run)
}

/// Removes a run with everything recorded for it.
pub(crate) fn delete_run(mut tx: impl WriteTx, run: RunId) -> Result<(), StoreError> {
    lock_run(&mut tx, run)?;
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
        tx.execute(
            &format!("DELETE FROM {table} WHERE run_id = $1"),
            &[run.into()],
        )?;
    }
    tx.execute("DELETE FROM runs WHERE id = $1", &[run.into()])?;
    tx.commit()
}

fn update_run(
    mut tx: impl WriteTx,
    sql: &str,
    value: Option<&str>,
    run: RunId,
) -> Result<(), StoreError> {
    if tx.execute(sql, &[value.into(), run.into()])? == 0 {
        return Err(no_run(&tx, run));
    }
    tx.commit()
}

fn duplicate_uid(tx: &impl WriteTx, uid: String, existing: RunId) -> StoreError {
    StoreError::DuplicateUid {
        db: tx.db().clone(),
        uid,
        existing,
    }
}

/// Locks the run's row for the rest of the transaction; `NoRun` when there is none.
fn lock_run(tx: &mut impl WriteTx, run: RunId) -> Result<(), StoreError> {
    let sql = format!(
        "SELECT id FROM runs WHERE id = $1{}",
        tx.dialect().row_lock()
    );
    match tx.query_opt(&sql, &[run.into()], |r| r.int(0))? {
        Some(_) => Ok(()),
        None => Err(no_run(tx, run)),
    }
}

/// The run's last planned seq and every repetition it plans, read in one scan rather
/// than a query per appended row.
fn planned_reps(
    tx: &mut impl WriteTx,
    run: RunId,
) -> Result<(Option<u32>, HashSet<RepKey>), StoreError> {
    let mut last: Option<u32> = None;
    let mut reps = HashSet::new();
    tx.query(
        "SELECT point, variant, rep, role, seq FROM plan WHERE run_id = $1",
        &[run.into()],
        &mut |r| {
            let seq = r.u32(4, "a seq")?;
            last = Some(last.map_or(seq, |l| l.max(seq)));
            reps.insert((
                r.u32(0, "a point")?,
                r.text(1)?,
                r.u32(2, "a rep")?,
                r.text(3)?,
            ));
            Ok(())
        },
    )?;
    Ok((last, reps))
}

/// The plan row of `seq`, locked: two sessions recording the same seq take turns, and
/// the second sees what the first committed (in SQLite the write lock does this).
fn plan_row(tx: &mut impl WriteTx, run: RunId, seq: u32) -> Result<PlanRow, StoreError> {
    let sql = format!(
        "SELECT point, params, variant, rep, role FROM plan WHERE run_id = $1 AND seq = $2{}",
        tx.dialect().row_lock()
    );
    let row = tx.query_opt(&sql, &[run.into(), seq.into()], |r| {
        Ok(PlanRow {
            point: r.u32(0, "a point")?,
            params: r.text(1)?,
            variant: r.text(2)?,
            rep: r.u32(3, "a rep")?,
            role: r.text(4)?,
        })
    })?;
    match row {
        Some(row) => Ok(row),
        None if run_exists(tx, run)? => Err(StoreError::NotPlanned {
            db: tx.db().clone(),
            run,
            seq,
        }),
        None => Err(no_run(tx, run)),
    }
}

/// A seq recorded `Ok` is final; one recorded failed is deleted, its child rows with it
/// (ON DELETE CASCADE), for its retry to take its place.
fn replace_failed(tx: &mut impl WriteTx, run: RunId, seq: u32) -> Result<(), StoreError> {
    let key = [run.into(), seq.into()];
    let prior = tx.query_opt(
        "SELECT status FROM measurements WHERE run_id = $1 AND seq = $2",
        &key,
        |r| r.text(0),
    )?;
    match prior.as_deref() {
        Some(OK) => Err(StoreError::AlreadyRecorded {
            db: tx.db().clone(),
            run,
            seq,
        }),
        Some(_) => {
            tx.execute(
                "DELETE FROM measurements WHERE run_id = $1 AND seq = $2",
                &key,
            )?;
            Ok(())
        }
        None => Ok(()),
    }
}

/// The `measurements` row itself; its outputs go in after it.
fn insert_measurement(
    tx: &mut impl WriteTx,
    run: RunId,
    rec: &MeasurementRecord,
) -> Result<(), StoreError> {
    let notes = json("notes", &rec.output.notes)?;
    let monitors = json("monitors", &rec.monitors)?;
    let cols = status_columns(&rec.status);
    tx.execute(
        "INSERT INTO measurements (run_id, seq, status, error, started_at, elapsed_s, notes, \
         ineffective, monitors, disturbed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            run.into(),
            rec.seq.into(),
            cols.status.into(),
            cols.error.into(),
            rec.started_at.into(),
            rec.elapsed_s.into(),
            notes.as_str().into(),
            cols.ineffective.into(),
            monitors.as_str().into(),
            cols.disturbed.into(),
        ],
    )?;
    Ok(())
}
