//! What a results database does, whatever holds it: the operations every backend
//! (SQLite, PostgreSQL, or a wrapper around one) provides, with the same rules.
//!
//! The rules are the store's, not a backend's: a measurement is committed on its own;
//! its seq must be planned and match its plan row; an `Ok` one is final
//! ([`StoreError::AlreadyRecorded`]) and a `Failed` one is replaced by the next record of
//! its seq; plan appends come after the last planned seq and never repeat a (point,
//! variant, rep, role); an unknown run is [`StoreError::NoRun`]. The shared test suite
//! (`crates/store/tests`) holds every backend to them.

use crate::{
    Location, MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunInfo, RunStatus, StoreError,
};

/// One results database. `Send`, so a store can be handed to the thread that writes it.
pub trait Backend: Send {
    /// Where this database is (shown in messages; a URL's password is never displayed).
    fn location(&self) -> &Location;

    /// All runs, newest first.
    fn runs(&self) -> Result<Vec<RunInfo>, StoreError>;
    /// All runs whose row reads back, newest first, and those whose row does not, with
    /// why; this default (for a wrapper or a test double) reads them as [`Backend::runs`].
    fn readable_runs(&self) -> Result<crate::ReadableRuns, StoreError> {
        Ok((self.runs()?, Vec::new()))
    }
    /// One run; [`StoreError::NoRun`] when there is none.
    fn run(&self, id: RunId) -> Result<RunInfo, StoreError>;
    /// The run with this uid, if this database has it.
    fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError>;
    /// The run's whole plan, in execution order.
    fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError>;
    /// Planned measurements not recorded `Ok`, in execution order.
    fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError>;
    /// At most `limit` of [`Backend::pending`]'s measurements, those after seq `after`.
    fn pending_after(
        &self,
        id: RunId,
        after: Option<u32>,
        limit: u32,
    ) -> Result<Vec<PlannedMeasurement>, StoreError>;
    /// How many measurements [`Backend::pending`] holds of each variant.
    fn pending_variants(&self, id: RunId) -> Result<Vec<(String, u64)>, StoreError>;
    /// Every recorded measurement of the run, ordered by seq.
    fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError>;
    /// Every recorded measurement of the run handed to `visit` in seq order, from one
    /// snapshot, with telemetry rows where `telemetry` says. The backends read a chunk at
    /// a time, so a reader that folds records never holds the whole run; this default
    /// (for a test double) reads it whole.
    fn visit_measurements(
        &self,
        id: RunId,
        telemetry: crate::TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut ms = self.measurements(id)?;
        for m in &mut ms {
            if !telemetry(m) {
                m.telemetry = Vec::new();
            }
        }
        ms.into_iter().try_for_each(visit)
    }
    /// The seq of every recorded measurement with whether it is `Ok` (a failed one is
    /// `false`), ordered by seq: what a copy needs to know without loading the figures.
    fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        Ok(self
            .measurements(id)?
            .iter()
            .map(|m| {
                (
                    m.seq,
                    !matches!(m.status, crate::MeasurementStatus::Failed(_)),
                )
            })
            .collect())
    }
    /// How many recorded measurements other work disturbed (an ineffective one is counted
    /// as ineffective only).
    fn disturbed(&self, id: RunId) -> Result<u32, StoreError> {
        let ms = self.measurements(id)?;
        let n = ms
            .iter()
            .filter(|m| matches!(m.status, crate::MeasurementStatus::Disturbed(_)))
            .count();
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Stores a new run with status `running`, the plan `plan` yields (checked as it is
    /// read; an error stores nothing) and its unavailable variants; its uid is `run.uid`,
    /// or a fresh one. `run.plan` is not read.
    fn create_run(
        &mut self,
        run: &NewRun,
        plan: &mut dyn Iterator<Item = Result<PlannedMeasurement, StoreError>>,
        created_at: f64,
    ) -> Result<RunId, StoreError>;
    /// Adds measurements at the end of the plan; returns the new planned count.
    fn append_plan(&mut self, run: RunId, more: &[PlannedMeasurement]) -> Result<u32, StoreError>;
    /// Commits one measurement.
    fn record(&mut self, run: RunId, rec: &MeasurementRecord) -> Result<(), StoreError>;
    fn set_status(&mut self, run: RunId, status: RunStatus) -> Result<(), StoreError>;
    fn set_label(&mut self, run: RunId, label: Option<&str>) -> Result<(), StoreError>;
    /// Removes a run with everything recorded for it.
    fn delete_run(&mut self, run: RunId) -> Result<(), StoreError>;

    /// Claims `run` for measuring: while the returned [`Claim`] lives, another claim of
    /// the same run in the same database (from any process) is refused with
    /// [`StoreError::Claimed`]. The claim goes when the process does, however it exits.
    fn claim(&self, run: RunId) -> Result<Claim, StoreError>;

    /// Whether some process holds the claim on `run` now; nothing is taken.
    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError>;
}

/// A held claim on a run; dropping it releases the claim.
pub struct Claim {
    _held: Box<dyn Send>,
}

impl Claim {
    /// A claim that lasts as long as `held` does (a locked file, a database session).
    pub fn holding(held: impl Send + 'static) -> Claim {
        Claim {
            _held: Box::new(held),
        }
    }
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Claim")
    }
}
