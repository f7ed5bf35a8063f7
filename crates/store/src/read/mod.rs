//! Reading runs, plans and measurements back, for every backend, over the seam
//! (`crate::sql`). Each function runs in one read transaction the backend began (a
//! snapshot: it sees one state of the database even while another process records into
//! the same run) and loads each table with one query per run, or per chunk of a run,
//! rather than one per measurement.

mod rows;

use std::collections::HashMap;

use crate::assemble::{chunks, TelemetryFilter};
use crate::codec::{parse_params, parse_role, RawRun};
use crate::decoded::Decoded;
use crate::error::corrupt;
use crate::sql::{Cells, Query, QueryExt};
use crate::{
    MeasurementRecord, PlannedMeasurement, RunId, RunInfo, StoreError, UnavailableVariant,
};

const RUN_SELECT: &str = "SELECT r.id, r.created_at, r.study, r.workload, r.label, r.status, \
     r.spec, r.fingerprint, \
     (SELECT count(*) FROM plan p WHERE p.run_id = r.id), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'ok'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.status = 'failed'), \
     (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.ineffective IS NOT NULL), \
     r.uid \
     FROM runs r";

fn raw_run(r: &dyn Cells) -> Result<RawRun, StoreError> {
    Ok(RawRun {
        id: r.int(0)?,
        created_at: r.real(1)?,
        study: r.text(2)?,
        workload: r.text(3)?,
        label: r.opt_text(4)?,
        status: r.text(5)?,
        spec: r.text(6)?,
        fingerprint: r.text(7)?,
        planned: r.u32(8, "a planned count")?,
        done: r.u32(9, "a done count")?,
        failed: r.u32(10, "a failed count")?,
        ineffective: r.u32(11, "an ineffective count")?,
        uid: r.opt_text(12)?,
    })
}

fn unavailable(r: &dyn Cells, at: usize) -> Result<UnavailableVariant, StoreError> {
    Ok(UnavailableVariant {
        variant: r.text(at)?,
        reason: r.text(at + 1)?,
    })
}

/// All runs, newest first; a run whose row does not read back is an error naming it.
pub(crate) fn runs(q: &mut dyn Query) -> Result<Vec<RunInfo>, StoreError> {
    let (runs, bad) = readable_runs(q)?;
    match bad.into_iter().next() {
        Some((id, why)) => Err(corrupt(q.db(), format!("run {id}: {why}"))),
        None => Ok(runs),
    }
}

/// Every run whose row reads back, newest first, and every run whose row does not, each
/// with why: one bad row does not hide the others (`perflab ls` of a damaged database).
pub(crate) fn readable_runs(q: &mut dyn Query) -> Result<ReadableRuns, StoreError> {
    let mut raw = Vec::new();
    let mut bad: Vec<(RunId, String)> = Vec::new();
    q.query(&format!("{RUN_SELECT} ORDER BY r.id DESC"), &[], &mut |r| {
        match raw_run(r) {
            Ok(run) => raw.push(run),
            Err(e) => bad.push((r.int(0)?, why(&e))),
        }
        Ok(())
    })?;
    let mut unavailable_of: HashMap<RunId, Vec<UnavailableVariant>> = HashMap::new();
    q.query(
        "SELECT run_id, variant, reason FROM unavailable ORDER BY run_id, idx",
        &[],
        &mut |r| {
            let id = r.int(0)?;
            match unavailable(r, 1) {
                Ok(u) => unavailable_of.entry(id).or_default().push(u),
                Err(e) => bad.push((id, format!("an unavailable variant: {}", why(&e)))),
            }
            Ok(())
        },
    )?;
    let mut runs = Vec::with_capacity(raw.len());
    for r in raw {
        let id = r.id;
        if bad.iter().any(|(b, _)| *b == id) {
            continue;
        }
        let u = unavailable_of.remove(&id).unwrap_or_default();
        match r.decode(q.db(), u) {
            Ok(info) => runs.push(info),
            Err(e) => bad.push((id, why(&e))),
        }
    }
    bad.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
    bad.dedup_by_key(|(id, _)| *id);
    Ok((runs, bad))
}

/// The runs that read back, and those that do not with why.
pub type ReadableRuns = (Vec<RunInfo>, Vec<(RunId, String)>);

/// Why a row does not read back, without the database and run the caller names.
fn why(e: &StoreError) -> String {
    match e {
        StoreError::Corrupt { what, .. } => match what.split_once(": ") {
            Some((run, rest)) if run.starts_with("run ") => rest.to_string(),
            _ => what.clone(),
        },
        e => e.to_string(),
    }
}

/// One run; [`StoreError::NoRun`] when there is none.
pub(crate) fn run(q: &mut dyn Query, id: RunId) -> Result<RunInfo, StoreError> {
    let raw = q
        .query_opt(
            &format!("{RUN_SELECT} WHERE r.id = $1"),
            &[id.into()],
            raw_run,
        )?
        .ok_or_else(|| no_run(q, id))?;
    let unavailable = q.query_all(
        "SELECT variant, reason FROM unavailable WHERE run_id = $1 ORDER BY idx",
        &[id.into()],
        |r| unavailable(r, 0),
    )?;
    raw.decode(q.db(), unavailable)
}

pub(crate) fn run_by_uid(
    q: &mut (impl Query + ?Sized),
    uid: &str,
) -> Result<Option<RunId>, StoreError> {
    q.query_opt("SELECT id FROM runs WHERE uid = $1", &[uid.into()], |r| {
        r.int(0)
    })
}

/// Each recorded seq with whether it is `Ok`, ordered by seq.
pub(crate) fn recorded(q: &mut dyn Query, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
    require_run(q, id)?;
    q.query_all(
        "SELECT seq, status = 'ok' FROM measurements WHERE run_id = $1 ORDER BY seq",
        &[id.into()],
        |r| Ok((r.u32(0, "a seq")?, r.flag(1)?)),
    )
}

/// How many of the run's measurements are disturbed (and not ineffective).
pub(crate) fn disturbed(q: &mut dyn Query, id: RunId) -> Result<u32, StoreError> {
    require_run(q, id)?;
    let counts = q.query_all(
        "SELECT count(*) FROM measurements WHERE run_id = $1 AND disturbed IS NOT NULL \
         AND ineffective IS NULL",
        &[id.into()],
        |r| r.u32(0, "a disturbed count"),
    )?;
    Ok(counts.into_iter().next().unwrap_or(0))
}

/// The run's whole plan, in execution order.
pub(crate) fn plan(q: &mut dyn Query, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
    planned(
        q,
        id,
        "SELECT seq, point, params, variant, rep, role FROM plan WHERE run_id = $1 \
         ORDER BY seq",
    )
}

/// What a resume still has to do: planned measurements not recorded `Ok` (never
/// recorded, or failed), in execution order.
pub(crate) fn pending(q: &mut dyn Query, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
    planned(
        q,
        id,
        "SELECT p.seq, p.point, p.params, p.variant, p.rep, p.role FROM plan p \
         LEFT JOIN measurements m ON m.run_id = p.run_id AND m.seq = p.seq \
         WHERE p.run_id = $1 AND (m.status IS NULL OR m.status <> 'ok') ORDER BY p.seq",
    )
}

const PENDING_CHUNK: &str =
    "SELECT p.seq, p.point, p.params, p.variant, p.rep, p.role FROM plan p \
     LEFT JOIN measurements m ON m.run_id = p.run_id AND m.seq = p.seq \
     WHERE p.run_id = $1 AND (m.status IS NULL OR m.status <> 'ok') AND p.seq > $2 \
     ORDER BY p.seq LIMIT $3";

/// At most `limit` of [`pending`]'s measurements, those after seq `after` (from the
/// start when `None`): a runner reads a plan of millions a chunk at a time.
pub(crate) fn pending_after(
    q: &mut dyn Query,
    id: RunId,
    after: Option<u32>,
    limit: u32,
) -> Result<Vec<PlannedMeasurement>, StoreError> {
    let after = after.map_or(-1, i64::from);
    planned_with(
        q,
        id,
        PENDING_CHUNK,
        &[id.into(), after.into(), limit.into()],
    )
}

/// How many measurements [`pending`] holds of each variant, by variant name.
pub(crate) fn pending_variants(
    q: &mut dyn Query,
    id: RunId,
) -> Result<Vec<(String, u64)>, StoreError> {
    require_run(q, id)?;
    q.query_all(
        "SELECT p.variant, count(*) FROM plan p \
         LEFT JOIN measurements m ON m.run_id = p.run_id AND m.seq = p.seq \
         WHERE p.run_id = $1 AND (m.status IS NULL OR m.status <> 'ok') \
         GROUP BY p.variant ORDER BY p.variant",
        &[id.into()],
        |r| Ok((r.text(0)?, r.int(1)?.max(0) as u64)),
    )
}

fn planned(q: &mut dyn Query, id: RunId, sql: &str) -> Result<Vec<PlannedMeasurement>, StoreError> {
    planned_with(q, id, sql, &[id.into()])
}

fn planned_with(
    q: &mut dyn Query,
    id: RunId,
    sql: &str,
    params: &[crate::sql::Value<'_>],
) -> Result<Vec<PlannedMeasurement>, StoreError> {
    require_run(q, id)?;
    let db = q.db().clone();
    q.query_all(sql, params, |r| {
        let seq = r.u32(0, "a seq")?;
        Ok(PlannedMeasurement {
            seq,
            point: r.u32(1, "a point")?,
            params: parse_params(&db, id, seq, r.str(2)?)?,
            variant: r.text(3)?,
            rep: r.u32(4, "a rep")?,
            role: parse_role(&db, id, seq, r.str(5)?)?,
        })
    })
}

/// Every recorded measurement of the run (Ok and failed), ordered by seq, with all it
/// produced and its telemetry.
pub(crate) fn measurements(
    q: &mut dyn Query,
    id: RunId,
) -> Result<Vec<MeasurementRecord>, StoreError> {
    require_run(q, id)?;
    rows::seq_range(q, id, (0, u32::MAX), &mut |_| true, &mut Decoded::default())
}

/// The run's measurements handed to `visit` one at a time, in seq order, read a chunk of
/// seqs at a time: one snapshot, as [`measurements`], without the whole run in memory at
/// once.
pub(crate) fn visit_measurements(
    q: &mut dyn Query,
    id: RunId,
    telemetry: TelemetryFilter,
    visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    require_run(q, id)?;
    let seqs = q.query_all(
        "SELECT seq FROM measurements WHERE run_id = $1 ORDER BY seq",
        &[id.into()],
        |r| r.u32(0, "a seq"),
    )?;
    let mut seen = Decoded::default();
    for range in chunks(&seqs) {
        for m in rows::seq_range(q, id, range, &mut *telemetry, &mut seen)? {
            visit(m)?;
        }
    }
    Ok(())
}

pub(crate) fn run_exists(q: &mut (impl Query + ?Sized), id: RunId) -> Result<bool, StoreError> {
    let exists = q.query_opt(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)",
        &[id.into()],
        |r| r.flag(0),
    )?;
    Ok(exists == Some(true))
}

fn require_run(q: &mut dyn Query, id: RunId) -> Result<(), StoreError> {
    if run_exists(q, id)? {
        Ok(())
    } else {
        Err(no_run(q, id))
    }
}

pub(crate) fn no_run(q: &(impl Query + ?Sized), id: RunId) -> StoreError {
    StoreError::NoRun {
        db: q.db().clone(),
        id,
    }
}
