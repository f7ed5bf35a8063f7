//! perflab's side of a peer-tool cross-check, measured the way `perflab run` measures it:
//! each measurement is a one-repetition run of the workload (no monitors, no knobs) created
//! in a throwaway store and executed by the lab runner with a progress sink that keeps its
//! notes. So the number compared with the peer comes out of the same plan, parameter
//! resolution and measurement path as a stored result, not a direct call of the workload.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use perflab_core::WorkloadOutput;
use perflab_lab::{ExperimentSpec, LabError, Progress, RunOptions};
use perflab_store::{MeasurementRecord, RunId, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum LabSideError {
    #[error(transparent)]
    Lab(#[from] LabError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot make a scratch directory for the cross-check's runs: {0}")]
    Scratch(std::io::Error),
    #[error("{0}")]
    Failed(String),
}

/// A throwaway store the cross-check's runs go into, removed when dropped.
pub struct LabSide {
    dir: PathBuf,
    store: Store,
    opts: RunOptions,
    /// What the runner said (a note per distinct message), for the caller to show.
    pub notes: Vec<String>,
}

impl LabSide {
    pub fn new() -> Result<Self, LabSideError> {
        let dir = std::env::temp_dir().join(format!(
            "perflab-crosscheck-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).map_err(LabSideError::Scratch)?;
        let store = Store::open(dir.join("crosscheck.db"))?;
        let opts = RunOptions {
            sys: perflab_sys::SysRoot::host(),
            // No knob is applied; the runner wants a journal all the same.
            journal: dir.join("journal.json"),
            stop: Arc::new(AtomicBool::new(false)),
            label: None,
        };
        Ok(Self {
            dir,
            store,
            opts,
            notes: Vec::new(),
        })
    }

    /// One measurement of `workload` with `params` (name, value as written on the
    /// command line), through the runner; its output, or why it failed.
    pub fn measure(
        &mut self,
        workload: &str,
        params: &[(&str, String)],
    ) -> Result<WorkloadOutput, LabSideError> {
        let spec = ExperimentSpec::from_toml("(cross-check)", &spec_toml(workload, params))
            .map_err(LabError::from)?;
        let prepared = perflab_lab::prepare(&spec, &self.opts.sys)?;
        let id = perflab_lab::create(&mut self.store, &prepared, None)?;
        let mut sink = Notes(&mut self.notes);
        let outcome = perflab_lab::execute(&mut self.store, id, &self.opts, &mut sink)?;
        let ms = self.store.measurements(id)?;
        let rec = ms.into_iter().next().ok_or_else(|| {
            LabSideError::Failed(format!(
                "{workload}: the run recorded no measurement ({:?})",
                outcome.status
            ))
        })?;
        if let Some(why) = rec.status.message() {
            return Err(LabSideError::Failed(why.to_string()));
        }
        // Each measurement is its own run; nothing is kept.
        self.store.delete_run(id)?;
        Ok(rec.output)
    }
}

impl Drop for LabSide {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The experiment as a person would write it: one repetition, no monitors (the peer runs
/// without any), no telemetry repetitions, and no measurement marked disturbed: the peer
/// tool's side cannot be, and pairs interleaved in time share whatever else runs, which
/// the check's own interval judges.
fn spec_toml(workload: &str, params: &[(&str, String)]) -> String {
    let mut text = format!(
        "name = \"crosscheck-{workload}\"\nworkload = {workload:?}\nrepetitions = 1\n\
         monitors = []\ntelemetry_reps = 0\ndisturbed_above = 100\n\n[params]\n"
    );
    for (k, v) in params {
        text.push_str(&format!("{k} = {v:?}\n"));
    }
    text
}

/// Keeps the runner's notes (a distinct message once), says nothing else.
struct Notes<'a>(&'a mut Vec<String>);

impl Progress for Notes<'_> {
    fn begin(&mut self, _: RunId, _: u64, _: u64) {}
    fn measured(&mut self, _: &MeasurementRecord) {}
    fn note(&mut self, message: &str) {
        if !self.0.iter().any(|n| n == message) {
            self.0.push(message.to_string());
        }
    }
    fn end(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_reads_back_with_every_parameter_as_written() {
        let text = spec_toml("null", &[("value", "5".into()), ("noise_pct", "0".into())]);
        let spec = ExperimentSpec::from_toml("t", &text).expect("valid spec");
        assert_eq!(spec.workload, "null");
        assert_eq!(spec.repetitions, 1);
        assert_eq!(spec.monitors, Some(vec![]));
        assert_eq!(spec.params.len(), 2);
    }

    /// The null workload through the runner: its figure is the value asked for.
    #[test]
    fn null_measured_through_the_runner_reports_its_value() {
        let mut lab = LabSide::new().expect("scratch store");
        let out = lab
            .measure("null", &[("value", "42".into()), ("noise_pct", "0".into())])
            .expect("null measures");
        let v = out.metrics.first().map(|m| m.value);
        assert_eq!(v, Some(42.0), "{out:?}");
        let e = lab
            .measure("null", &[("no_such_param", "1".into())])
            .unwrap_err();
        assert!(e.to_string().contains("no_such_param"), "{e}");
    }
}
