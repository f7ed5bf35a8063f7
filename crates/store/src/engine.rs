//! One [`Backend`] for every SQL database: what a backend must supply is an [`Engine`]
//! (how to begin a write transaction and a read snapshot, and how to claim a run); the
//! reads (`crate::read`) and writes (`crate::write`) are the same for all.

use crate::backend::{Backend, Claim};
use crate::sql::{Query, WriteTx};
use crate::{
    read, write, Location, MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunInfo,
    RunStatus, StoreError, TelemetryFilter,
};

/// A connection to one SQL database, in one dialect.
pub(crate) trait Engine: Send {
    type Tx<'a>: WriteTx
    where
        Self: 'a;

    fn location(&self) -> &Location;
    /// Begins a write transaction.
    fn begin(&mut self) -> Result<Self::Tx<'_>, StoreError>;
    /// Runs `read` in one read snapshot.
    fn snapshot<T>(
        &self,
        read: impl FnOnce(&mut dyn Query) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;
    /// Claims `run` for measuring (see [`Backend::claim`]).
    fn claim(&self, run: RunId) -> Result<Claim, StoreError>;
    /// Whether some process holds the claim on `run` now.
    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError>;
}

/// The store's [`Backend`] over an engine.
pub(crate) struct SqlBackend<E>(pub(crate) E);

impl<E: Engine> Backend for SqlBackend<E> {
    fn location(&self) -> &Location {
        self.0.location()
    }
    fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        self.0.snapshot(read::runs)
    }
    fn readable_runs(&self) -> Result<read::ReadableRuns, StoreError> {
        self.0.snapshot(read::readable_runs)
    }
    fn run(&self, id: RunId) -> Result<RunInfo, StoreError> {
        self.0.snapshot(|q| read::run(q, id))
    }
    fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError> {
        self.0.snapshot(|q| read::run_by_uid(q, uid))
    }
    fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.0.snapshot(|q| read::plan(q, id))
    }
    fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.0.snapshot(|q| read::pending(q, id))
    }
    fn pending_after(
        &self,
        id: RunId,
        after: Option<u32>,
        limit: u32,
    ) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.0
            .snapshot(|q| read::pending_after(q, id, after, limit))
    }
    fn pending_variants(&self, id: RunId) -> Result<Vec<(String, u64)>, StoreError> {
        self.0.snapshot(|q| read::pending_variants(q, id))
    }
    fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError> {
        self.0.snapshot(|q| read::measurements(q, id))
    }
    fn visit_measurements(
        &self,
        id: RunId,
        telemetry: TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.0
            .snapshot(|q| read::visit_measurements(q, id, telemetry, visit))
    }
    fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        self.0.snapshot(|q| read::recorded(q, id))
    }
    fn disturbed(&self, id: RunId) -> Result<u32, StoreError> {
        self.0.snapshot(|q| read::disturbed(q, id))
    }
    fn create_run(
        &mut self,
        run: &NewRun,
        plan: &mut dyn Iterator<Item = Result<PlannedMeasurement, StoreError>>,
        created_at: f64,
    ) -> Result<RunId, StoreError> {
        write::create_run(self.0.begin()?, run, plan, created_at)
    }
    fn append_plan(&mut self, run: RunId, more: &[PlannedMeasurement]) -> Result<u32, StoreError> {
        write::append_plan(self.0.begin()?, run, more)
    }
    fn record(&mut self, run: RunId, rec: &MeasurementRecord) -> Result<(), StoreError> {
        write::record(self.0.begin()?, run, rec)
    }
    fn set_status(&mut self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        write::set_status(self.0.begin()?, run, status)
    }
    fn set_label(&mut self, run: RunId, label: Option<&str>) -> Result<(), StoreError> {
        write::set_label(self.0.begin()?, run, label)
    }
    fn delete_run(&mut self, run: RunId) -> Result<(), StoreError> {
        write::delete_run(self.0.begin()?, run)
    }
    fn claim(&self, run: RunId) -> Result<Claim, StoreError> {
        self.0.claim(run)
    }
    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError> {
        self.0.is_claimed(run)
    }
}
