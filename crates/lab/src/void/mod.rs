//! Comparisons that tested nothing (issue 32 item 4): a variant whose settings were meant
//! to move some telemetry ([`perflab_core::Intent`], declared by its knobs and by the
//! workload for its parameters) compared with the baseline at a point where that telemetry
//! did not move on either side. Its verdict is `void`, with the reason; the run lists it
//! at its end and exits with its own code.
//!
//! Judged from both sides' recorded telemetry, ineffective measurements included (they are
//! the evidence that a setting did not hold). A variant with several intents is void only
//! when none of them moved; an intent whose telemetry was not recorded (its monitor off or
//! unavailable) cannot be judged and keeps the comparison as it is.

mod checks;
mod runs;

use std::collections::BTreeMap;

use perflab_core::spec::VariantSpec;
use perflab_core::{Intent, RunSpec, VoidComparison};
use perflab_store::{MeasurementRecord, MeasurementStatus};

pub use checks::{judge_intent, Judged};
pub use runs::judge_runs;

/// Makes [`judge`] the one the report asks (`perflab_core::catalog::void_comparisons`),
/// which does not link the knobs and workloads that declare intents.
pub fn install_catalog() {
    perflab_core::catalog::install_void_judge(judge);
    perflab_core::catalog::install_runs_void_judge(judge_runs);
}

/// Every void comparison of the run (each variant against the baseline, at each point).
pub fn judge(spec: &RunSpec, records: &[MeasurementRecord]) -> Vec<VoidComparison> {
    if spec.variants.len() < 2 {
        return Vec::new();
    }
    let Some(baseline) = spec
        .compare
        .baseline
        .clone()
        .or_else(|| spec.variants.first().map(|v| v.name.clone()))
    else {
        return Vec::new();
    };
    let varying = spec.varying_params();
    let roles = perflab_core::catalog::param_roles(&spec.workload, spec);
    let mut out = Vec::new();
    for variant in spec.variants.iter().filter(|v| v.name != baseline) {
        let intents = intents(spec, &baseline, &variant.name);
        if intents.is_empty() {
            continue;
        }
        let all = |name: &str| -> Vec<&MeasurementRecord> {
            records
                .iter()
                .filter(|r| r.variant == name && !matches!(r.status, MeasurementStatus::Failed(_)))
                .collect()
        };
        let (run_a, run_b) = (all(&baseline), all(&variant.name));
        for (point, (a, b)) in sides(records, &baseline, &variant.name) {
            let side_a = (baseline.as_str(), a.as_slice(), run_a.as_slice());
            let side_b = (variant.name.as_str(), b.as_slice(), run_b.as_slice());
            if let Some(reason) = void_reason(&intents, side_a, side_b) {
                out.push(VoidComparison {
                    point,
                    point_label: point_label(&roles, &varying, a.first().or(b.first())),
                    baseline: baseline.clone(),
                    variant: variant.name.clone(),
                    reason,
                });
            }
        }
    }
    out
}

/// Why the comparison of `a` with `b` tested nothing: every intent's telemetry says it did
/// not move (the reasons, joined); `None` when one moved or could not be judged, or there
/// is no intent.
fn void_reason(intents: &[(Intent, bool)], a: checks::Side, b: checks::Side) -> Option<String> {
    let mut reasons = Vec::new();
    for (intent, with_b) in intents {
        let (with, without) = match with_b {
            true => (b, a),
            false => (a, b),
        };
        match judge_intent(intent, with, without) {
            Judged::Void(why) => reasons.push(why),
            Judged::Moved | Judged::Unknown => return None,
        }
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// What the variant's settings that differ from the baseline's are meant to move, each
/// with whether the variant (true) or the baseline (false) holds the setting.
fn intents(spec: &RunSpec, a: &str, b: &str) -> Vec<(Intent, bool)> {
    let find = |n: &str| spec.variants.iter().find(|v| v.name == n);
    match (find(a), find(b)) {
        (Some(va), Some(vb)) => intents_between(&spec.workload, va, vb),
        _ => Vec::new(),
    }
}

/// What the settings that differ between `va` and `vb` (variants of `workload`) are meant
/// to move, each with whether `vb` (true) or `va` (false) holds the setting: the knobs one
/// sets and the other does not, and the workload's parameters they set differently.
fn intents_between(workload: &str, va: &VariantSpec, vb: &VariantSpec) -> Vec<(Intent, bool)> {
    let mut out: Vec<(Intent, bool)> = Vec::new();
    let mut add = |i: Intent, with_b: bool| {
        if !out.iter().any(|(o, _)| *o == i) {
            out.push((i, with_b));
        }
    };
    let knobs = |v: &VariantSpec| -> Vec<(String, String)> {
        v.knobs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (ka, kb) = (knobs(va), knobs(vb));
    for (with_b, mine, theirs) in [(true, &kb, &ka), (false, &ka, &kb)] {
        for setting in mine.iter().filter(|s| !theirs.contains(s)) {
            if let Some(i) = perflab_knobs::registry::parse_knob(&setting.0, &setting.1)
                .ok()
                .and_then(|k| k.intent())
            {
                add(i, with_b);
            }
        }
    }
    if let Some(w) = perflab_workloads::by_name(workload) {
        let names: std::collections::BTreeSet<&String> =
            va.params.keys().chain(vb.params.keys()).collect();
        for name in names
            .into_iter()
            .filter(|n| va.params.get(*n) != vb.params.get(*n))
        {
            if let Some(i) = w.intent(name) {
                add(i, true);
            }
        }
    }
    out
}

type Side<'a> = Vec<&'a MeasurementRecord>;

/// The measurements that ran (ok or ineffective, any role) of each side, by point.
fn sides<'a>(
    records: &'a [MeasurementRecord],
    a: &str,
    b: &str,
) -> BTreeMap<u32, (Side<'a>, Side<'a>)> {
    let mut out: BTreeMap<u32, (Side, Side)> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| !matches!(r.status, MeasurementStatus::Failed(_)))
    {
        let e = out.entry(r.point).or_default();
        if r.variant == a {
            e.0.push(r);
        } else if r.variant == b {
            e.1.push(r);
        }
    }
    out.retain(|_, (a, b)| !a.is_empty() && !b.is_empty());
    out
}

/// `cpu_b=1`: the point's parameters that vary across the grid, each in its role's unit
/// (`size=64 KiB`), as the report's rows name the point.
fn point_label(
    roles: &perflab_core::ParamRoles,
    varying: &[String],
    r: Option<&&MeasurementRecord>,
) -> String {
    let Some(r) = r else {
        return String::new();
    };
    varying
        .iter()
        .filter_map(|k| r.params.get(k).map(|v| roles.named_value(k, v)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
