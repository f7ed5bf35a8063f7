//! A run of the `null` workload through the lab runner, into a store the caller gives:
//! what the runner and report cost checks measure over.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use perflab_lab::{ExperimentSpec, LabError, Outcome, Progress, RunOptions};
use perflab_store::{RunId, Store};

use crate::error::Result;

/// Runs the `null` workload into `store`: variants a (value 100) and b (101), the
/// parameters `noise_pct` (one value or a list: a grid axis), `reps` alternating
/// repetitions, all default monitors. Returns the prepared experiment too, so that more
/// runs of the same plan can be created.
pub(crate) fn run_null(
    store: &mut Store,
    dir: &std::path::Path,
    name: &str,
    noise_pct: &[f64],
    reps: u32,
    progress: &mut dyn Progress,
) -> Result<(RunId, Outcome, perflab_lab::Prepared)> {
    let prepared = prepare_null(name, noise_pct, reps)?;
    let sys = perflab_sys::SysRoot::host();
    let id = perflab_lab::create(store, &prepared, None)?;
    let opts = RunOptions {
        sys,
        journal: dir.join("journal.json"),
        stop: Arc::new(AtomicBool::new(false)),
        label: None,
    };
    let outcome = perflab_lab::execute(store, id, &opts, progress)?;
    Ok((id, outcome, prepared))
}

/// The experiment [`run_null`] runs, prepared but not stored: its plan for runs the
/// caller fills itself.
pub(crate) fn prepare_null(
    name: &str,
    noise_pct: &[f64],
    reps: u32,
) -> Result<perflab_lab::Prepared> {
    let noise: Vec<String> = noise_pct.iter().map(|x| format!("{x:?}")).collect();
    // One value is one value, not a grid axis of one.
    let noise = match noise.as_slice() {
        [one] => one.clone(),
        all => format!("[{}]", all.join(", ")),
    };
    // Written as a person writes an experiment file, so this check reads specs the way
    // `perflab run FILE` does. The count of measurements is the point of these checks:
    // no telemetry repetitions.
    let text = format!(
        "name = {name:?}\nworkload = \"null\"\nrepetitions = {reps}\nwarmup = 0\n\
         telemetry_reps = 0\n\n[params]\nnoise_pct = {noise}\n\n\
         [[variants]]\nname = \"a\"\nparams = {{ value = 100.0 }}\n\n\
         [[variants]]\nname = \"b\"\nparams = {{ value = 101.0 }}\n"
    );
    let spec = ExperimentSpec::from_toml("(cross-check)", &text).map_err(LabError::from)?;
    Ok(perflab_lab::prepare(&spec, &perflab_sys::SysRoot::host())?)
}
