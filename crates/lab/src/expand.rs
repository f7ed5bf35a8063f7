//! Expansion of a spec into the explicit grid a run stores: partner CPUs resolved from the
//! topology, size ranges and list parameters crossed into points. `prepare` then
//! resolves the grid once against the workload's declared parameters.

use std::collections::BTreeMap;

use perflab_core::{RunSpec, Workload};
use perflab_sys::{format_cpu_list, Topology};

use crate::adaptive::target_of;
use crate::error::{LabError, Result};
use crate::plan_size::PlanShape;
use crate::spec::{ExperimentSpec, ParamInput, PartnersSpec, Scalar, VariantSpec};

/// Expands `spec` for `workload` on a machine with topology `topo`.
pub fn expand(
    spec: &ExperimentSpec,
    workload: &dyn Workload,
    topo: &Topology,
    default_monitors: &[&str],
) -> Result<RunSpec> {
    let info = workload.info();
    if spec.workload != info.name {
        return Err(LabError::Input(format!(
            "spec names workload {:?} but {:?} was given",
            spec.workload, info.name
        )));
    }
    // Secrets (a peer's token) become their fingerprints before anything is kept.
    let sealed = crate::secrets::seal_spec(spec, info.params)?;
    let spec = &sealed;
    let axes = axes(spec, info.params, topo)?;
    // Counted before crossing: a refused grid must cost nothing to refuse.
    crate::grid_size::check(&axes)?;
    let adaptive = target_of(spec.target_ci, spec.max_reps, spec.repetitions);
    let until_decided = perflab_core::adaptive_target::until_decided_of(
        spec.until_decided,
        spec.max_reps,
        spec.repetitions,
    );
    // So is the plan: points × variants × repetitions is refused before a point is built.
    plan_shape(spec, &axes, adaptive.as_ref(), until_decided.as_ref()).check()?;
    let points = cross(&axes);
    check_variant_params(spec, &axes)?;
    let monitors = match &spec.monitors {
        Some(m) => perflab_core::spec::monitor_names(m).map_err(LabError::Input)?,
        None => default_monitors.iter().map(|s| s.to_string()).collect(),
    };
    let expanded = RunSpec {
        name: spec.name.clone(),
        description: spec.description.clone(),
        workload: info.name.to_string(),
        primary_metric: info.primary_metric().to_string(),
        repetitions: spec.repetitions,
        warmup: spec.warmup,
        monitors,
        points,
        variants: spec.effective_variants(),
        compare: spec.compare.clone(),
        unavailable_monitors: BTreeMap::new(),
        skipped: Vec::new(),
        adaptive,
        until_decided,
        // Settled by `prepare`, which knows which monitors disturb and which are here.
        telemetry_reps: 0,
        quiet_machine_s: spec.quiet_machine_s().map_err(LabError::Input)?,
        disturbed_above_pct: spec.disturbed_above,
        source: Some(spec.clone()),
        imported: None,
        // The workload declares its parameters' roles in the registry, where the report
        // reads them; only an importer stores its own.
        param_roles: Default::default(),
    };
    if let Some(base) = &expanded.compare.baseline {
        if !expanded.variants.iter().any(|v| &v.name == base) {
            return Err(LabError::Input(format!(
                "compare.baseline {base:?} is not one of the variants ({})",
                variant_names(&expanded.variants)
            )));
        }
    }
    Ok(expanded)
}

/// The plan the spec asks for at most: every variant, the repetitions up to the adaptive
/// cap, and the telemetry repetitions when given (their default applies only where a
/// monitor disturbs, which `prepare` settles; the plan is counted again then).
fn plan_shape(
    spec: &ExperimentSpec,
    axes: &[(String, Vec<String>)],
    adaptive: Option<&perflab_core::adaptive_target::AdaptiveTarget>,
    until: Option<&perflab_core::adaptive_target::UntilDecided>,
) -> PlanShape {
    let cap = [adaptive.map(|a| a.max_reps), until.map(|u| u.cap)]
        .into_iter()
        .flatten()
        .fold(spec.repetitions, u32::max);
    PlanShape {
        points: crate::grid_size::count_points(axes.iter().map(|(_, v)| v.len()))
            .unwrap_or(u64::MAX),
        variants: spec.effective_variants().len() as u64,
        repetitions: u64::from(cap),
        capped: cap > spec.repetitions,
        telemetry: u64::from(spec.telemetry_reps.unwrap_or(0)),
    }
}

/// One axis per parameter, in parameter-name order (so point numbering is stable across
/// runs): size ranges and partner CPUs spelled out, lists as given.
fn axes(
    spec: &ExperimentSpec,
    params: &[perflab_core::ParamSpec],
    topo: &Topology,
) -> Result<Vec<(String, Vec<String>)>> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for (name, input) in &spec.params {
        let values = match input {
            ParamInput::One(s) => match size_range(name, &s.text(), params)? {
                Some(sizes) => sizes,
                None => vec![s.text()],
            },
            ParamInput::List(l) => l.iter().map(Scalar::text).collect(),
            ParamInput::Partners(p) => partners(name, p, spec, topo)?
                .into_iter()
                .map(|c| c.to_string())
                .collect(),
        };
        axes.push((name.clone(), values));
    }
    Ok(axes)
}

/// Every combination of the axes' values, the last axis varying fastest.
fn cross(axes: &[(String, Vec<String>)]) -> Vec<BTreeMap<String, String>> {
    let mut points: Vec<BTreeMap<String, String>> = vec![BTreeMap::new()];
    for (name, values) in axes {
        let mut next = Vec::with_capacity(points.len() * values.len());
        for p in &points {
            for v in values {
                let mut q = p.clone();
                q.insert(name.clone(), v.clone());
                next.push(q);
            }
        }
        points = next;
    }
    points
}

/// A variant may set only parameters that have one value in the grid, and a parameter of
/// the grid must be left to at least one variant.
fn check_variant_params(spec: &ExperimentSpec, axes: &[(String, Vec<String>)]) -> Result<()> {
    let variants = spec.effective_variants();
    for v in &variants {
        for name in v.params.keys() {
            if axes
                .iter()
                .any(|(axis, values)| axis == name && values.len() > 1)
            {
                return Err(LabError::Input(format!(
                    "variant {:?} sets parameter {name}, which is a grid axis; \
                     a variant may only set parameters with one value",
                    v.name
                )));
            }
        }
    }
    // A parameter every variant sets is never run with the grid's value: `-p backing=2m`
    // on a study whose variants are the backings would silently run all of them.
    for (name, values) in axes {
        let setters: Vec<&str> = variants
            .iter()
            .filter(|v| v.params.contains_key(name))
            .map(|v| v.name.as_str())
            .collect();
        if !variants.is_empty() && setters.len() == variants.len() {
            return Err(LabError::Input(format!(
                "parameter {name} = {} is set by every variant ({}), so that value would \
                 never be used: drop it (--variant NAME keeps only the variants named)",
                values.join(","),
                setters.join(", ")
            )));
        }
    }
    Ok(())
}

/// `32K..1G` for a size parameter: every power-of-two multiple of the lower bound up to
/// the upper bound, as the seed's scans go. `None` when the text is not a range or the
/// parameter is not a size.
fn size_range(
    name: &str,
    text: &str,
    specs: &[perflab_core::ParamSpec],
) -> Result<Option<Vec<String>>> {
    let is_size = specs
        .iter()
        .any(|s| s.name == name && matches!(s.kind, perflab_core::ParamKind::Size { .. }));
    let Some((lo, hi)) = text.split_once("..") else {
        return Ok(None);
    };
    if !is_size {
        return Ok(None);
    }
    let bad = |why: String| LabError::Input(format!("{name} = {text:?}: {why}"));
    let lo = perflab_core::parse_size(lo).map_err(bad)?;
    let hi = perflab_core::parse_size(hi).map_err(bad)?;
    if lo == 0 || lo > hi {
        return Err(bad(
            "the range must go from a smaller non-zero size to a larger one".into(),
        ));
    }
    let mut out = Vec::new();
    let mut s = lo;
    while s <= hi {
        out.push(s.to_string());
        if out.len() > 64 {
            return Err(bad("more than 64 sizes".into()));
        }
        s = match s.checked_mul(2) {
            Some(next) => next,
            None => break,
        };
    }
    Ok(Some(out))
}

pub fn variant_names(v: &[VariantSpec]) -> String {
    v.iter()
        .map(|v| v.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn partners(
    name: &str,
    p: &PartnersSpec,
    spec: &ExperimentSpec,
    topo: &Topology,
) -> Result<Vec<u32>> {
    let anchor_text = match spec.params.get(&p.partners_of) {
        Some(ParamInput::One(s)) => s.text(),
        _ => {
            return Err(LabError::Input(format!(
                "parameter {name}: partners_of = {:?} must name a parameter with one CPU",
                p.partners_of
            )))
        }
    };
    let anchor: u32 = anchor_text.parse().map_err(|_| {
        LabError::Input(format!(
            "{} = {anchor_text:?} is not a CPU number",
            p.partners_of
        ))
    })?;
    if !topo.is_online(anchor) {
        return Err(LabError::Input(format!(
            "CPU {anchor} is not online on this machine (online: {})",
            format_cpu_list(&topo.online)
        )));
    }
    let all = match p.mode.as_str() {
        "per-core" => topo.partners_one_per_core(anchor),
        "all" => topo.online.clone(),
        other => {
            return Err(LabError::Input(format!(
                "parameter {name}: partners mode {other:?} (use per-core or all)"
            )))
        }
    };
    Ok(match p.limit {
        Some(limit) if limit > 0 && all.len() > limit => spread(&all, limit),
        _ => all,
    })
}

/// Picks `k` entries evenly spread over `list`, always keeping the first and the last.
fn spread(list: &[u32], k: usize) -> Vec<u32> {
    if k == 1 {
        return vec![list[0]];
    }
    let n = list.len();
    let mut out: Vec<u32> = (0..k).map(|i| list[i * (n - 1) / (k - 1)]).collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_ranges_double_from_the_lower_bound() {
        let specs = [perflab_core::ParamSpec {
            name: "size",
            role: perflab_core::ParamRole::Plain,
            help: "",
            kind: perflab_core::ParamKind::Size {
                min: 1,
                max: u64::MAX,
            },
            default: None,
        }];
        let r = size_range("size", "32K..256K", &specs).unwrap().unwrap();
        assert_eq!(r, vec!["32768", "65536", "131072", "262144"]);
        assert_eq!(
            size_range("size", "32K..1G", &specs)
                .unwrap()
                .unwrap()
                .len(),
            16
        );
        assert!(size_range("size", "1G..32K", &specs).is_err());
        assert!(size_range("size", "x..1G", &specs).is_err());
        assert_eq!(
            size_range("size", "1..1T", &specs).unwrap().unwrap().len(),
            41
        );
        assert_eq!(size_range("size", "64K", &specs).unwrap(), None);
        assert_eq!(size_range("other", "1..2", &specs).unwrap(), None);
    }

    #[test]
    fn spread_keeps_ends() {
        assert_eq!(
            spread(&[0, 4, 8, 12, 16, 20, 24, 28], 4),
            vec![0, 8, 16, 28]
        );
        assert_eq!(spread(&[1, 2, 3], 1), vec![1]);
    }
}
