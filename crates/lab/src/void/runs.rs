//! Two runs compared row by row (`perflab compare RUN_A RUN_B`, issue 32 item 4): a row
//! pairs one variant's measurements at one parameter point of each run. Where that
//! variant's settings differ between the runs (`v:cpuidle=poll-only` in one,
//! `v:cpuidle=all` in the other), what they are meant to move is checked from both runs'
//! telemetry exactly as within one run; a row where nothing moved tested nothing and
//! reads `void`. Runs whose variants set the same things (two kernels or commits, which no
//! setting declares) are not judged: nothing says what should have moved.

use std::collections::{BTreeMap, HashMap};

use perflab_core::catalog::{RunSide, RunsVoid};
use perflab_store::{MeasurementRecord, MeasurementStatus};

use super::{intents_between, void_reason};

/// Every row of run `b` against run `a` that tested nothing: its point in run A, its
/// variant and why. Sides are named `VARIANT in RUN` (the tables' names of the runs).
pub fn judge_runs(a: RunSide<'_>, b: RunSide<'_>) -> Vec<RunsVoid> {
    let (label_a, spec_a, ms_a) = a;
    let (label_b, spec_b, ms_b) = b;
    // A workload's parameters declare its intents; two workloads' rows share none.
    let workload = match spec_a.workload == spec_b.workload {
        true => spec_a.workload.as_str(),
        false => "",
    };
    let mut out = Vec::new();
    for va in &spec_a.variants {
        let Some(vb) = spec_b.variants.iter().find(|v| v.name == va.name) else {
            continue;
        };
        let intents = intents_between(workload, va, vb);
        if intents.is_empty() {
            continue;
        }
        let (run_a, run_b) = (ran(ms_a, &va.name), ran(ms_b, &va.name));
        let mut at_a: BTreeMap<u32, Vec<&MeasurementRecord>> = BTreeMap::new();
        for r in &run_a {
            at_a.entry(r.point).or_default().push(r);
        }
        // Rows match by identical parameters, as the comparison table matches them.
        let mut by_params_b: HashMap<String, Vec<&MeasurementRecord>> = HashMap::new();
        for r in &run_b {
            by_params_b.entry(r.params.describe()).or_default().push(r);
        }
        let names = (
            format!("{} in {label_a}", va.name),
            format!("{} in {label_b}", va.name),
        );
        for (point, side_a) in at_a {
            let Some(side_b) = by_params_b.get(&side_a[0].params.describe()) else {
                continue;
            };
            let a = (names.0.as_str(), side_a.as_slice(), run_a.as_slice());
            let b = (names.1.as_str(), side_b.as_slice(), run_b.as_slice());
            if let Some(reason) = void_reason(&intents, a, b) {
                out.push((point, va.name.clone(), reason));
            }
        }
    }
    out
}

/// The measurements of `variant` that ran (ok or ineffective, any role).
fn ran<'r>(ms: &'r [MeasurementRecord], variant: &str) -> Vec<&'r MeasurementRecord> {
    ms.iter()
        .filter(|r| r.variant == variant && !matches!(r.status, MeasurementStatus::Failed(_)))
        .collect()
}

#[cfg(test)]
mod tests;
