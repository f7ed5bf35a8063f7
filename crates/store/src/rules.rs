//! The store's rules on plans and records, shared by every backend so they refuse the same
//! things with the same words.

use std::collections::HashSet;

use crate::{MeasurementRecord, PlannedMeasurement, RunId, StoreError};

/// A new run's plan may not repeat a seq.
pub(crate) fn check_new_plan(plan: &[PlannedMeasurement]) -> Result<(), StoreError> {
    let mut seen = HashSet::new();
    if let Some(p) = plan.iter().find(|p| !seen.insert(p.seq)) {
        return Err(StoreError::InvalidPlan(format!(
            "seq {} appears twice",
            p.seq
        )));
    }
    Ok(())
}

/// `plan` with every seq checked to come after the one before it: unique without a set of
/// them all, for a plan read as it is written.
pub(crate) fn rising_seqs(
    plan: impl Iterator<Item = Result<PlannedMeasurement, StoreError>>,
) -> impl Iterator<Item = Result<PlannedMeasurement, StoreError>> {
    let mut last: Option<u32> = None;
    plan.map(move |p| {
        let p = p?;
        if last.is_some_and(|l| p.seq <= l) {
            return Err(StoreError::InvalidPlan(format!(
                "seq {} comes after seq {} in a streamed plan, whose seqs must rise",
                p.seq,
                last.unwrap_or_default()
            )));
        }
        last = Some(p.seq);
        Ok(p)
    })
}

/// A planned repetition: (point, variant, rep, role). Headline and telemetry repetitions
/// are numbered apart.
pub(crate) type RepKey = (u32, String, u32, String);

/// Appended rows must come after the last planned seq (`last`), not repeat a seq, and not
/// plan a repetition already in `planned_reps` (the run's plan).
pub(crate) fn check_append(
    run: RunId,
    last: Option<u32>,
    mut planned_reps: HashSet<RepKey>,
    more: &[PlannedMeasurement],
) -> Result<(), StoreError> {
    let mut seen = HashSet::new();
    for p in more {
        if last.is_some_and(|l| p.seq <= l) || !seen.insert(p.seq) {
            return Err(StoreError::InvalidPlan(format!(
                "run {run}: appended seq {} is not after the last planned seq {} or \
                 appears twice",
                p.seq,
                last.map_or("(none)".to_string(), |l| l.to_string())
            )));
        }
        let key = (
            p.point,
            p.variant.clone(),
            p.rep,
            p.role.as_str().to_string(),
        );
        if !planned_reps.insert(key) {
            return Err(StoreError::InvalidPlan(format!(
                "run {run}: point {} variant {:?} {} rep {} is already planned",
                p.point,
                p.variant,
                p.role.as_str(),
                p.rep
            )));
        }
    }
    Ok(())
}

/// A plan row as stored: point, params (JSON text), variant, rep, role.
pub(crate) struct PlanRow {
    pub point: u32,
    pub params: String,
    pub variant: String,
    pub rep: u32,
    pub role: String,
}

/// A record must say what its plan row says; `params_text` is the record's parameters
/// encoded as the plan's are.
pub(crate) fn check_matches_plan(
    run: RunId,
    rec: &MeasurementRecord,
    params_text: &str,
    planned: &PlanRow,
) -> Result<(), StoreError> {
    let PlanRow {
        point,
        params,
        variant,
        rep,
        role,
    } = planned;
    let mismatch = if *point != rec.point {
        Some(format!("point {} recorded, {point} planned", rec.point))
    } else if *variant != rec.variant {
        Some(format!(
            "variant {:?} recorded, {variant:?} planned",
            rec.variant
        ))
    } else if *rep != rec.rep {
        Some(format!("rep {} recorded, {rep} planned", rec.rep))
    } else if role != rec.role.as_str() {
        Some(format!(
            "a {} repetition recorded, a {role} one planned",
            rec.role.as_str()
        ))
    } else if params != params_text {
        Some(format!(
            "parameters {params_text} recorded, {params} planned"
        ))
    } else {
        None
    };
    match mismatch {
        Some(what) => Err(StoreError::PlanMismatch {
            run,
            seq: rec.seq,
            what,
        }),
        None => Ok(()),
    }
}
