//! Everything checked before a run touches the system: the workload and its parameters,
//! the CPUs, the monitors, and which variants' knobs this machine can apply.

use perflab_core::{Grid, MeasureCtx, RunSpec, Workload};
use perflab_knobs::{parse_knob, Knob};
use perflab_store::UnavailableVariant;
use perflab_sys::{SysRoot, Topology};

use crate::error::{LabError, Result};
use crate::expand::expand;
use crate::fingerprint::fingerprint;
use crate::hugetlb_pool;
use crate::memlock::fit_locked;
use crate::spec::{ExperimentSpec, VariantSpec};
use perflab_core::Fingerprint;

/// A variant with its parsed knobs.
pub struct Variant {
    pub spec: VariantSpec,
    pub knobs: Vec<Box<dyn Knob>>,
}

/// An experiment ready to plan and run on this machine.
pub struct Prepared {
    pub spec: RunSpec,
    /// Every point under every variant, resolved once (`[point][variant]`).
    pub grid: Grid,
    pub workload: &'static dyn Workload,
    pub available: Vec<Variant>,
    pub unavailable: Vec<UnavailableVariant>,
    pub fingerprint: Fingerprint,
    /// What the person running should know before it starts (points left out, …).
    pub notes: Vec<String>,
}

pub fn find_workload(name: &str) -> Result<&'static dyn Workload> {
    perflab_workloads::by_name(name).ok_or_else(|| {
        LabError::Input(format!(
            "unknown workload {name:?} (known: {})",
            perflab_workloads::names().join(", ")
        ))
    })
}

/// Parses a variant's knobs; an unknown knob or value is an input error.
pub fn parse_variant(v: &VariantSpec) -> Result<Variant> {
    let knobs = v
        .knobs
        .iter()
        .map(|(k, val)| {
            parse_knob(k, val).map_err(|e| LabError::Input(format!("variant {:?}: {e}", v.name)))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Variant {
        spec: v.clone(),
        knobs,
    })
}

/// Expands and checks `spec` against the machine behind `sys`.
pub fn prepare(spec: &ExperimentSpec, sys: &SysRoot) -> Result<Prepared> {
    let workload = find_workload(&spec.workload)?;
    // Before anything is expanded or stored: a run of nothing but failures is no run.
    workload.available(sys).map_err(|u| {
        LabError::Input(format!(
            "workload {} cannot run on this machine: {}{}",
            workload.info().name,
            u.reason,
            u.hint.map(|h| format!("; {h}")).unwrap_or_default()
        ))
    })?;
    let topo = Topology::read(sys)?;
    let mut expanded = expand(spec, workload, &topo, perflab_monitors::default_names())?;
    let info = workload.info();
    let mut grid = expanded.resolve_grid(info.name, info.params)?;
    validate_points(&expanded, &grid, workload, &topo, sys)?;
    check_monitors(&mut expanded, workload, sys)?;
    let mut notes = telemetry_plan(&mut expanded, spec.telemetry_reps);
    notes.extend(crate::fit::fit_memory(
        &mut expanded,
        &mut grid,
        workload,
        sys,
    )?);
    notes.extend(fit_locked(&mut expanded, &mut grid, workload, sys)?);
    crate::fit::resolve_auto_pools(&mut expanded, &grid, workload)?;
    let (available, unavailable) = check_variants(&expanded.variants, sys)?;
    // A setting known not to take effect here is said before the plan is measured.
    for v in &available {
        for k in &v.knobs {
            if let Some(why) = k.forecast(sys) {
                notes.push(format!("variant {}: {}: {why}", v.spec.name, k.name()));
            }
        }
    }
    if available.is_empty() {
        let why: Vec<String> = unavailable
            .iter()
            .map(|u| format!("{}: {}", u.variant, u.reason))
            .collect();
        return Err(LabError::Input(format!(
            "no variant of {} can run on this machine ({})",
            expanded.name,
            why.join("; ")
        )));
    }
    Ok(Prepared {
        fingerprint: fingerprint(sys, &topo),
        notes,
        spec: expanded,
        grid,
        workload,
        available,
        unavailable,
    })
}

/// Refuses an unknown monitor or a bad span file, and notes each monitor this machine
/// lacks the source of, so the run can say why a section of its report is empty.
fn check_monitors(expanded: &mut RunSpec, workload: &dyn Workload, sys: &SysRoot) -> Result<()> {
    let mut lacking = Vec::new();
    for name in &expanded.monitors {
        // A span file that does not parse or names an event the kernel lacks is bad
        // input: one line, before anything is stored.
        perflab_monitors::check(name, sys).map_err(LabError::Input)?;
        let Some(mut m) = perflab_monitors::by_name(name) else {
            return Err(LabError::Input(format!(
                "unknown monitor {name:?} (known: {})",
                perflab_monitors::names().join(", ")
            )));
        };
        // Which sources this machine lacks, so the run can say why a section of its
        // report is empty (a check, not a measurement: nothing is left running).
        if let Err(u) = m.available(
            &MeasureCtx::new(sys.clone(), Vec::new()).with_workload(workload.info().name),
        ) {
            let reason = match u.hint {
                Some(h) => format!("{} ({h})", u.reason),
                None => u.reason,
            };
            lacking.push((name.clone(), reason));
        }
    }
    expanded.unavailable_monitors.extend(lacking);
    Ok(())
}

/// Telemetry repetitions taken when no number is given and a disturbing monitor runs.
pub const DEFAULT_TELEMETRY_REPS: u32 = 1;

/// Settles how many telemetry repetitions the run plans: the monitors that would disturb
/// a headline figure run only there. Returns the note that tells the user.
fn telemetry_plan(expanded: &mut RunSpec, asked: Option<u32>) -> Vec<String> {
    let disturbing: Vec<&str> = expanded
        .monitors
        .iter()
        .filter(|n| !expanded.unavailable_monitors.contains_key(n.as_str()))
        .filter(|n| perflab_monitors::by_name(n).is_some_and(|m| m.disturbs()))
        .map(String::as_str)
        .collect();
    if disturbing.is_empty() {
        expanded.telemetry_reps = 0;
        return Vec::new();
    }
    let reps = asked.unwrap_or(DEFAULT_TELEMETRY_REPS);
    expanded.telemetry_reps = reps;
    let list = disturbing.join(", ");
    vec![if reps == 0 {
        format!(
            "monitors {list} change what they observe and telemetry_reps is 0: they are not \
             taken"
        )
    } else {
        format!(
            "monitors {list} change what they observe: they run only in {reps} telemetry \
             repetition(s) per point and variant, whose figures are not results"
        )
    }]
}

/// Checks every point under every variant: its CPUs must be online, and the workload
/// checks its parameters together (a grid point that does not divide a total), so a bad
/// point is one error before anything on the system is touched.
fn validate_points(
    expanded: &RunSpec,
    grid: &Grid,
    workload: &dyn Workload,
    topo: &Topology,
    sys: &SysRoot,
) -> Result<()> {
    for point in 0..grid.points() {
        for (variant, params) in expanded.variants.iter().zip(grid.point(point)) {
            for cpu in workload.cpus(params)? {
                if !topo.is_online(cpu) {
                    return Err(LabError::Input(format!(
                        "CPU {cpu} is not online on this machine (online: {})",
                        perflab_sys::format_cpu_list(&topo.online)
                    )));
                }
            }
            workload
                .validate(params)
                .and_then(|()| hugetlb_pool::check(workload, params, variant, sys))
                .map_err(|e| {
                    LabError::Input(format!(
                        "grid point {} (variant {}): {e}",
                        crate::point_fit::describe(&expanded.points[point]),
                        variant.name
                    ))
                })?;
        }
    }
    Ok(())
}

/// Splits variants into those whose knobs this machine can apply and those it cannot,
/// with the reason. Nothing is changed on the system.
pub fn check_variants(
    variants: &[VariantSpec],
    sys: &SysRoot,
) -> Result<(Vec<Variant>, Vec<UnavailableVariant>)> {
    let mut available = Vec::new();
    let mut unavailable = Vec::new();
    for v in variants {
        let parsed = parse_variant(v)?;
        let problem = parsed.knobs.iter().find_map(|k| {
            k.check(sys).err().map(|u| match u.hint {
                Some(h) => format!("{}: {} ({h})", k.name(), u.reason),
                None => format!("{}: {}", k.name(), u.reason),
            })
        });
        match problem {
            Some(reason) => unavailable.push(UnavailableVariant {
                variant: v.name.clone(),
                reason,
            }),
            None => available.push(parsed),
        }
    }
    Ok((available, unavailable))
}
