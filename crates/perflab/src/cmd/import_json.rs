//! `perflab import --parser perflab-json FILE`: a `perflab export --format json` document
//! becomes a stored run again — the same uid, plan, figures and status — so a run can be
//! moved between databases as a file, and importing it twice adds nothing the second time.

use std::collections::{HashMap, HashSet};

use perflab_core::plausible::{check_record, Nan};
use perflab_store::{copy_parts, MeasurementRecord, PlannedMeasurement, RunInfo};
use serde::Deserialize;

use crate::cli::{Global, ImportArgs};
use crate::cmd::common;
use crate::exit::input;

/// The parser name `import --parser` takes for an export document.
pub const NAME: &str = "perflab-json";

/// What `perflab export --format json` writes. `plan`, `format` and `format_version`
/// came later: an export without a plan is planned as what it recorded, one without a
/// format is taken as version 1. Keys this perflab does not know are ignored, as
/// docs/export.md promises: a version keeps its meaning when a field is added.
#[derive(Deserialize)]
struct Export {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    format_version: Option<u32>,
    run: RunInfo,
    #[serde(default)]
    plan: Option<Vec<PlannedMeasurement>>,
    /// Version 2: the fields each telemetry row (an array) lists, in order.
    #[serde(default)]
    telemetry_columns: Option<Vec<String>>,
    measurements: Vec<MeasurementRecord>,
}

pub fn run(g: &Global, a: &ImportArgs) -> anyhow::Result<i32> {
    let file = a.file.display().to_string();
    let text = super::common::read_input(&a.file)?;
    let doc: Export = serde_json::from_str(&text)
        .map_err(|e| input(format!("{file}: not a perflab JSON export: {e}")))?;
    match (doc.format.as_deref(), doc.format_version) {
        (Some(f), _) if f != super::export::FORMAT => {
            return Err(input(format!(
                "{file}: its format is {f:?}, not {:?}",
                super::export::FORMAT
            )))
        }
        (_, Some(v)) if v > super::export::FORMAT_VERSION => {
            return Err(input(format!(
                "{file}: export format version {v} is newer than this perflab reads ({}); \
                 upgrade perflab to import it",
                super::export::FORMAT_VERSION
            )))
        }
        _ => {}
    }
    // serde reads a row written as an array by `TelemetryRow`'s field order, which is the
    // order the export names; a document naming another was not written by perflab.
    let ours = super::export_record::TELEMETRY_COLUMNS;
    if let Some(columns) = doc.telemetry_columns.as_deref().filter(|c| *c != ours) {
        return Err(input(format!(
            "{file}: its telemetry rows list {columns:?}, not {ours:?} as perflab writes them"
        )));
    }
    let mut info = doc.run;
    if let Some(label) = &a.label {
        info.label = Some(label.clone());
    }
    if let Some(study) = &a.study {
        info.study = study.clone();
    }
    let plan = doc
        .plan
        .unwrap_or_else(|| doc.measurements.iter().map(planned).collect());
    // Everything is checked before the database is opened: a bad document changes nothing.
    check(&plan, &doc.measurements).map_err(|e| input(format!("{file}: {e}")))?;
    // The fingerprint's timing probe is a reading like any figure (issue 31 item 11).
    if let Some(probe) = &info.fingerprint.probe {
        perflab_core::plausible::check_probe(probe)
            .map_err(|e| input(format!("{file}: run fingerprint, {e}")))?;
    }
    let mut store = common::open_store(g)?;
    let r = copy_parts(&mut store, &info, &plan, &doc.measurements)?;
    eprintln!(
        "run {}: {} from {file}: {} new measurement(s), {} there already",
        r.run,
        if r.created {
            "imported"
        } else {
            "imported before"
        },
        r.copied,
        r.skipped
    );
    if info.uid.is_empty() {
        eprintln!(
            "note: the export has no run uid (made by an older perflab): importing it again \
             makes another run"
        );
    }
    Ok(0)
}

fn planned(m: &MeasurementRecord) -> PlannedMeasurement {
    PlannedMeasurement {
        seq: m.seq,
        point: m.point,
        params: m.params.clone(),
        variant: m.variant.clone(),
        rep: m.rep,
        role: m.role,
    }
}

/// The document holds one run: unique seqs, and every measurement as its plan row says.
fn check(plan: &[PlannedMeasurement], ms: &[MeasurementRecord]) -> Result<(), String> {
    let mut rows: HashMap<u32, &PlannedMeasurement> = HashMap::new();
    for p in plan {
        if rows.insert(p.seq, p).is_some() {
            return Err(format!("the plan lists seq {} twice", p.seq));
        }
    }
    let mut seen = HashSet::new();
    for (i, m) in ms.iter().enumerate() {
        // `null` is how the export writes an undefined figure, so NaN passes here.
        check_record(m, Nan::Undefined)
            .map_err(|e| format!("measurements[{i}] (seq {}), {e}", m.seq))?;
        if !seen.insert(m.seq) {
            return Err(format!("measurement {} appears twice", m.seq));
        }
        match rows.get(&m.seq) {
            None => return Err(format!("measurement {} is not in the plan", m.seq)),
            Some(p) if **p != planned(m) => {
                return Err(format!("measurement {} does not match its plan row", m.seq))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_store::MeasurementStatus;

    fn rec(seq: u32, variant: &str) -> MeasurementRecord {
        MeasurementRecord {
            seq,
            point: 0,
            params: Default::default(),
            variant: variant.into(),
            rep: seq,
            status: MeasurementStatus::Ok,
            started_at: 1.0,
            elapsed_s: 1.0,
            output: Default::default(),
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    #[test]
    fn a_document_must_hold_one_consistent_run() {
        let ms = vec![rec(0, "a"), rec(1, "a")];
        let plan: Vec<_> = ms.iter().map(planned).collect();
        assert!(check(&plan, &ms).is_ok());
        assert!(check(&plan[..1], &ms)
            .unwrap_err()
            .contains("not in the plan"));
        let twice = vec![rec(0, "a"), rec(0, "a")];
        assert!(check(&plan, &twice).unwrap_err().contains("twice"));
        let other = vec![rec(0, "b")];
        assert!(check(&plan, &other).unwrap_err().contains("does not match"));
        let mut negative = vec![rec(0, "a")];
        negative[0].elapsed_s = -1e308;
        assert_eq!(
            check(&plan, &negative).unwrap_err(),
            "measurements[0] (seq 0), field elapsed_s: -1e308 is negative, and a duration \
             cannot be"
        );
        let dup_plan = vec![plan[0].clone(), plan[0].clone()];
        assert!(check(&dup_plan, &[]).unwrap_err().contains("seq 0 twice"));
    }
}
