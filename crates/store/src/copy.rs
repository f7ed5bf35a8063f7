//! Copying runs between stores (`perflab push`, imports, a fleet's stream), idempotently.
//!
//! A run is found in the destination by its uid, never by its number (numbers are each
//! database's own). Copying again adds only what the destination lacks: plan rows it has
//! not got, measurements it has not recorded, and an `Ok` measurement where it holds only
//! a failed one. A measurement the destination holds `Ok` is final there, as everywhere,
//! and is never touched.

use std::collections::HashMap;

use crate::{
    MeasurementRecord, MeasurementStatus, NewRun, PlannedMeasurement, RunId, RunInfo, Store,
    StoreError,
};

/// What one copy did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// The run's number in the destination.
    pub run: RunId,
    /// Whether the destination did not have the run before.
    pub created: bool,
    /// Plan rows added to a run the destination already had.
    pub appended: u32,
    /// Measurements recorded in the destination (new ones, and `Ok` ones that replaced a
    /// failed one there).
    pub copied: u32,
    /// Measurements the destination already had (or had `Ok` where the source failed).
    pub skipped: u32,
}

/// Copies run `id` of `src` into `dst`: the run (same uid, plan, unavailable variants,
/// label, status, creation time, spec and fingerprint) and every measurement `dst` lacks.
pub fn copy_run(src: &Store, id: RunId, dst: &mut Store) -> Result<CopyReport, StoreError> {
    let info = src.run(id)?;
    let plan = src.plan(id)?;
    let recs = src.measurements(id)?;
    copy_parts(dst, &info, &plan, &recs)
}

/// [`copy_run`] from a run already in memory (an export read back): the run `info`
/// describes with its `plan` and recorded measurements `recs`.
pub fn copy_parts(
    dst: &mut Store,
    info: &RunInfo,
    plan: &[PlannedMeasurement],
    recs: &[MeasurementRecord],
) -> Result<CopyReport, StoreError> {
    let mut report = ensure(dst, info, plan)?;
    let more = copy_records(dst, report.run, recs)?;
    report.copied = more.copied;
    report.skipped = more.skipped;
    settle_run(dst, info, &report)?;
    Ok(report)
}

/// The last step of a copy: the destination's run takes `info`'s label and status.
pub fn settle_run(dst: &mut Store, info: &RunInfo, report: &CopyReport) -> Result<(), StoreError> {
    let now = dst.run(report.run)?;
    if now.label != info.label {
        dst.set_label(report.run, info.label.as_deref())?;
    }
    if now.status != info.status {
        dst.set_status(report.run, info.status)?;
    }
    Ok(())
}

/// [`ensure_run`] with the plan read as it is written, for a run too large to hold
/// (an import of millions of measurements): a new run takes the rows straight into the
/// store ([`Store::create_run_streamed`], so their seqs must rise); a run the destination
/// has already is compared row by row as [`ensure_run`] does, which holds the plan.
pub fn ensure_run_streamed(
    dst: &mut Store,
    info: &RunInfo,
    plan: impl Iterator<Item = Result<PlannedMeasurement, StoreError>>,
) -> Result<CopyReport, StoreError> {
    let existing = if info.uid.is_empty() {
        None
    } else {
        dst.run_by_uid(&info.uid)?
    };
    if existing.is_some() {
        let plan = plan.collect::<Result<Vec<_>, _>>()?;
        return ensure(dst, info, &plan);
    }
    let run = dst.create_run_streamed(&new_run(info, Vec::new()), plan, info.created_at)?;
    if info.status != crate::RunStatus::Running {
        dst.set_status(run, info.status)?;
    }
    Ok(CopyReport {
        run,
        created: true,
        ..CopyReport::default()
    })
}

/// The destination's number for the run `info` describes, creating the run (with `plan`)
/// when `dst` has no run of that uid, or appending the rows of `plan` it lacks when it
/// has. A created run gets `info.status`; an existing one keeps its own. A run without a
/// uid (an export from before uids) cannot be recognised and is created anew each time.
pub fn ensure_run(
    dst: &mut Store,
    info: &RunInfo,
    plan: &[PlannedMeasurement],
) -> Result<RunId, StoreError> {
    Ok(ensure(dst, info, plan)?.run)
}

fn ensure(
    dst: &mut Store,
    info: &RunInfo,
    plan: &[PlannedMeasurement],
) -> Result<CopyReport, StoreError> {
    let existing = if info.uid.is_empty() {
        None
    } else {
        dst.run_by_uid(&info.uid)?
    };
    let run = match existing {
        Some(run) => run,
        None => match create(dst, info, plan) {
            Ok(run) => {
                return Ok(CopyReport {
                    run,
                    created: true,
                    ..CopyReport::default()
                })
            }
            // Another copy of the same run (a second push, a second host's stream)
            // created it between the look-up and here: add to that one.
            Err(StoreError::DuplicateUid { existing, .. }) => existing,
            Err(e) => return Err(e),
        },
    };
    // A concurrent copy may append the same rows between the look-up and the append
    // (which then refuses them as out of order): look again, a few times at most.
    let mut tries = 0;
    let missing = loop {
        let missing = missing_rows(dst, run, info, plan)?;
        if missing.is_empty() {
            break missing;
        }
        match dst.append_plan(run, &missing) {
            Ok(_) => break missing,
            Err(StoreError::InvalidPlan(_)) if tries < 3 => tries += 1,
            Err(e) => return Err(e),
        }
    };
    Ok(CopyReport {
        run,
        created: false,
        appended: missing.len() as u32,
        ..CopyReport::default()
    })
}

/// The rows of `plan` the run `run` of `dst` lacks; an error when a row it has differs.
fn missing_rows(
    dst: &Store,
    run: RunId,
    info: &RunInfo,
    plan: &[PlannedMeasurement],
) -> Result<Vec<PlannedMeasurement>, StoreError> {
    let have: HashMap<u32, PlannedMeasurement> =
        dst.plan(run)?.into_iter().map(|p| (p.seq, p)).collect();
    let mut missing = Vec::new();
    for p in plan {
        match have.get(&p.seq) {
            Some(q) if q == p => {}
            Some(q) => {
                return Err(StoreError::InvalidPlan(format!(
                    "run {} (uid {}) in {} plans measurement {} differently \
                     ({} {:?} rep {} there, {} {:?} rep {} here): not the same run",
                    run,
                    info.uid,
                    dst.location(),
                    p.seq,
                    q.params.describe(),
                    q.variant,
                    q.rep,
                    p.params.describe(),
                    p.variant,
                    p.rep
                )))
            }
            None => missing.push(p.clone()),
        }
    }
    Ok(missing)
}

fn create(
    dst: &mut Store,
    info: &RunInfo,
    plan: &[PlannedMeasurement],
) -> Result<RunId, StoreError> {
    let run = dst.create_run(&new_run(info, plan.to_vec()), info.created_at)?;
    if info.status != crate::RunStatus::Running {
        dst.set_status(run, info.status)?;
    }
    Ok(run)
}

/// The run `info` describes, as a new run of a destination.
fn new_run(info: &RunInfo, plan: Vec<PlannedMeasurement>) -> NewRun {
    NewRun {
        uid: (!info.uid.is_empty()).then(|| info.uid.clone()),
        study: info.study.clone(),
        workload: info.workload.clone(),
        label: info.label.clone(),
        spec: info.spec.clone(),
        fingerprint: info.fingerprint.clone(),
        plan,
        unavailable: info.unavailable.clone(),
    }
}

/// Records in run `run` of `dst` every record it lacks: one it has not recorded, or an
/// `Ok` one where it holds a failed one. Each is committed on its own, as a measurement
/// is; the plan rows must be there already ([`ensure_run`]).
pub fn copy_records(
    dst: &mut Store,
    run: RunId,
    recs: &[MeasurementRecord],
) -> Result<CopyReport, StoreError> {
    let mut copier = RecordCopier::new(dst, run)?;
    for rec in recs {
        copier.push(dst, rec)?;
    }
    Ok(copier.report)
}

/// [`copy_records`] one record at a time, for records read as they come (an import).
pub struct RecordCopier {
    /// seq -> recorded Ok, kept up to date as records go in, so a batch holding a seq
    /// twice (failed, then retried) ends as the destination would have.
    recorded: HashMap<u32, bool>,
    pub report: CopyReport,
}

impl RecordCopier {
    /// Starts copying into run `run` of `dst`, whose plan rows must be there already.
    pub fn new(dst: &Store, run: RunId) -> Result<RecordCopier, StoreError> {
        Ok(RecordCopier {
            recorded: dst.recorded(run)?.into_iter().collect(),
            report: CopyReport {
                run,
                ..CopyReport::default()
            },
        })
    }

    /// Records `rec` unless the destination has it (or has it `Ok`); committed on its
    /// own, as a measurement is.
    pub fn push(&mut self, dst: &mut Store, rec: &MeasurementRecord) -> Result<(), StoreError> {
        let (run, report) = (self.report.run, &mut self.report);
        let failed = matches!(rec.status, MeasurementStatus::Failed(_));
        let take = match self.recorded.get(&rec.seq) {
            None => true,
            Some(&ok) => !ok && !failed,
        };
        if !take {
            report.skipped += 1;
            return Ok(());
        }
        match dst.record(run, rec) {
            Ok(()) => {
                self.recorded.insert(rec.seq, !failed);
                report.copied += 1;
            }
            // Another copy (a second push, the host's own stream) recorded it `Ok`
            // since the look-up: the destination has it, and an Ok one stays.
            Err(StoreError::AlreadyRecorded { .. }) => {
                self.recorded.insert(rec.seq, true);
                report.skipped += 1;
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }
}
