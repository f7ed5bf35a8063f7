//! The SQLite backend: one file holds every run (the embedded default).

mod claim;
mod health;

pub use claim::claims_path;
pub use open::check_file_path;
mod inspect;
mod open;
mod read;
mod tx;

use std::path::{Path, PathBuf};

use crate::write;
use crate::{
    Backend, Claim, Location, MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunInfo,
    RunStatus, StoreError,
};

pub(crate) struct SqliteBackend {
    conn: rusqlite::Connection,
    path: PathBuf,
    location: Location,
}

impl SqliteBackend {
    pub(crate) fn new(conn: rusqlite::Connection, path: &Path) -> SqliteBackend {
        SqliteBackend {
            conn,
            path: path.to_path_buf(),
            location: Location::Sqlite(path.to_path_buf()),
        }
    }
}

// Reads are the inherent methods of read.rs; writes are the shared writer's, in a
// transaction of tx.rs.
impl Backend for SqliteBackend {
    fn location(&self) -> &Location {
        &self.location
    }
    fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        SqliteBackend::runs(self)
    }
    fn run(&self, id: RunId) -> Result<RunInfo, StoreError> {
        SqliteBackend::run(self, id)
    }
    fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError> {
        SqliteBackend::run_by_uid(self, uid)
    }
    fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        SqliteBackend::plan(self, id)
    }
    fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        SqliteBackend::pending(self, id)
    }
    fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError> {
        SqliteBackend::measurements(self, id)
    }
    fn visit_measurements(
        &self,
        id: RunId,
        telemetry: crate::TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        SqliteBackend::visit_measurements(self, id, telemetry, visit)
    }
    fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        SqliteBackend::recorded(self, id)
    }
    fn create_run(&mut self, run: &NewRun, created_at: f64) -> Result<RunId, StoreError> {
        write::create_run(self.begin()?, run, created_at)
    }
    fn append_plan(&mut self, run: RunId, more: &[PlannedMeasurement]) -> Result<u32, StoreError> {
        write::append_plan(self.begin()?, run, more)
    }
    fn record(&mut self, run: RunId, rec: &MeasurementRecord) -> Result<(), StoreError> {
        write::record(self.begin()?, run, rec)
    }
    fn set_status(&mut self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        write::set_status(self.begin()?, run, status)
    }
    fn set_label(&mut self, run: RunId, label: Option<&str>) -> Result<(), StoreError> {
        write::set_label(self.begin()?, run, label)
    }
    fn delete_run(&mut self, run: RunId) -> Result<(), StoreError> {
        write::delete_run(self.begin()?, run)
    }
    fn claim(&self, run: RunId) -> Result<Claim, StoreError> {
        claim::take(&self.path, run)
    }
    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError> {
        claim::held(&self.path, run)
    }
}
