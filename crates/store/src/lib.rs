//! The results database: versioned schema, runs, plans, measurements — in an SQLite file
//! (the embedded default) or on a PostgreSQL server (a store a team shares).
//!
//! Each measurement is committed on its own as soon as it is recorded, so an interrupted
//! run keeps everything it finished and readers (`perflab show`) can look at a run while
//! it is being written. In SQLite (WAL, `synchronous=NORMAL`) a crash of the machine may
//! lose the last few commits, never corrupt the file.
//!
//! Resume policy: a measurement recorded `Ok` is final and recording its `seq` again is an
//! error; a `Failed` one may be recorded again (a resumed run retries failures) and the new
//! record replaces it. [`Store::pending`] lists what a resume still has to do.
//!
//! Every run has a `uid` as well as its number: the number is this database's, the uid
//! goes with the run when [`copy_run`] (`perflab push`) or an import copies it elsewhere.

mod assemble;
mod backend;
mod codec;
mod copy;
mod decoded;
mod error;
mod location;
mod path;
mod pg;
mod rules;
pub mod schema;
mod sqlite;
mod uid;

use std::path::Path;

pub use assemble::TelemetryFilter;
pub use backend::{Backend, Claim};
pub use copy::{copy_parts, copy_records, copy_run, ensure_run, CopyReport};
pub use error::StoreError;
pub use location::Location;
pub use path::{default_path, default_path_from, sudo_user_from, PasswdEntry, SudoUser};
pub use perflab_core::record::*;
pub use sqlite::{check_file_path, claims_path};
pub use uid::new_uid;

/// An open results database: a thin handle over a [`Backend`].
pub struct Store {
    backend: Box<dyn Backend>,
}

impl Store {
    /// Opens the SQLite database at `path`, creating it and its directories if missing,
    /// and migrating an older schema. A file that is not a perflab database, or one from a
    /// newer perflab, is refused and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        Ok(Store::from_backend(Box::new(sqlite::SqliteBackend::open(
            path.as_ref(),
        )?)))
    }

    /// Opens an SQLite database that must already exist, for commands that only look at
    /// results (and `run --resume`). A file this process cannot write is opened read-only.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        Ok(Store::from_backend(Box::new(
            sqlite::SqliteBackend::open_existing(path.as_ref())?,
        )))
    }

    /// [`Store::open`] for any location: a PostgreSQL server gets the schema created or
    /// migrated the same way (the database itself must exist).
    pub fn open_location(loc: &Location) -> Result<Store, StoreError> {
        match loc {
            Location::Sqlite(p) => Store::open(p),
            Location::Postgres(_) => Ok(Store::from_backend(Box::new(pg::PgBackend::open(
                loc.clone(),
            )?))),
        }
    }

    /// [`Store::open_existing`] for any location. On PostgreSQL "existing" means a database
    /// that holds perflab's schema: an empty one is [`StoreError::Missing`]-like
    /// ([`StoreError::NotPerflab`] names why) and left as it is.
    pub fn open_existing_location(loc: &Location) -> Result<Store, StoreError> {
        match loc {
            Location::Sqlite(p) => Store::open_existing(p),
            Location::Postgres(_) => Ok(Store::from_backend(Box::new(
                pg::PgBackend::open_existing(loc.clone())?,
            ))),
        }
    }

    /// A store over any backend (a wrapper that also streams what is recorded, a test
    /// double).
    pub fn from_backend(backend: Box<dyn Backend>) -> Store {
        Store { backend }
    }

    /// The backend, to wrap it.
    pub fn into_backend(self) -> Box<dyn Backend> {
        self.backend
    }

    /// Where this store is; its `Display` never shows a password.
    pub fn location(&self) -> &Location {
        self.backend.location()
    }

    /// The file this store reads and writes, for an SQLite store.
    pub fn path(&self) -> Option<&Path> {
        self.location().path()
    }

    /// All runs, newest first. A run stored as running whose claim nobody holds is
    /// shown interrupted (see [`Store::run`]).
    pub fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        let mut runs = self.backend.runs()?;
        for info in &mut runs {
            self.settle(info);
        }
        Ok(runs)
    }

    /// One run; an error naming the id and the database when there is none.
    ///
    /// A run is stored as running while it is measured; a process killed with SIGKILL
    /// never gets to mark it otherwise. Its claim, though, goes with the process, so a
    /// run stored as running that nobody claims is interrupted, and is shown so.
    pub fn run(&self, id: RunId) -> Result<RunInfo, StoreError> {
        let mut info = self.backend.run(id)?;
        self.settle(&mut info);
        Ok(info)
    }

    /// Running without a claim is interrupted. Where the claim cannot be looked at, the
    /// stored status stands: "running" is then the best this reader knows.
    fn settle(&self, info: &mut RunInfo) {
        if info.status == RunStatus::Running
            && matches!(self.backend.is_claimed(info.id), Ok(false))
        {
            info.status = RunStatus::Interrupted;
        }
    }

    /// The run with this uid, if this database has it.
    pub fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError> {
        self.backend.run_by_uid(uid)
    }

    /// The run's whole plan, in execution order.
    pub fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.backend.plan(id)
    }

    /// What a resume still has to do: planned measurements not recorded `Ok` (never
    /// recorded, or failed), in execution order.
    pub fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.backend.pending(id)
    }

    /// Every recorded measurement of the run (Ok and failed), ordered by seq, with all it
    /// produced and its telemetry.
    pub fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError> {
        self.backend.measurements(id)
    }

    /// [`Store::measurements`] one record at a time, in seq order, from one snapshot,
    /// without holding the run: for readers that fold records into aggregates (reports
    /// over 100,000 measurements) or write them out as they come (`export`). `telemetry`
    /// is asked about each record (in seq order, before it is visited) whether to read
    /// its telemetry rows, which are most of a record: a record it refuses comes with
    /// none, and where it refuses a whole chunk they are not read at all. An error
    /// `visit` returns stops the read and is returned.
    pub fn visit_measurements(
        &self,
        id: RunId,
        telemetry: TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.backend.visit_measurements(id, telemetry, visit)
    }

    /// Each recorded seq with whether it is `Ok` (ineffective counts as `Ok`: it ran).
    pub fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        self.backend.recorded(id)
    }

    /// Stores a new run with status `running`, its whole plan and its unavailable variants.
    pub fn create_run(&mut self, run: &NewRun, created_at: f64) -> Result<RunId, StoreError> {
        self.backend.create_run(run, created_at)
    }

    /// Adds measurements to the end of a run's plan (adaptive repetitions decide them only
    /// after the planned ones are measured) and returns the run's new planned count.
    ///
    /// Every seq must be unique and come after the run's last planned seq, so the
    /// execution order of what is already planned never changes; a (point, variant, rep)
    /// already planned is refused, so repetition numbers stay unique per point and variant.
    pub fn append_plan(
        &mut self,
        run: RunId,
        more: &[PlannedMeasurement],
    ) -> Result<u32, StoreError> {
        self.backend.append_plan(run, more)
    }

    /// Commits one measurement of `run`. Its seq must be planned and match the plan row;
    /// a seq already recorded `Ok` is refused, one recorded `Failed` is replaced.
    pub fn record(&mut self, run: RunId, rec: &MeasurementRecord) -> Result<(), StoreError> {
        self.backend.record(run, rec)
    }

    /// Marks a run running, interrupted or complete.
    pub fn set_status(&mut self, run: RunId, status: RunStatus) -> Result<(), StoreError> {
        self.backend.set_status(run, status)
    }

    /// Sets or clears a run's label.
    pub fn set_label(&mut self, run: RunId, label: Option<&str>) -> Result<(), StoreError> {
        self.backend.set_label(run, label)
    }

    /// Removes a run with everything recorded for it.
    pub fn delete_run(&mut self, run: RunId) -> Result<(), StoreError> {
        self.backend.delete_run(run)
    }

    /// Claims `run` for measuring; another claim of it, from any process, is refused with
    /// [`StoreError::Claimed`] until the returned [`Claim`] is dropped or its process ends.
    pub fn claim(&self, run: RunId) -> Result<Claim, StoreError> {
        self.backend.claim(run)
    }

    /// Whether some process holds the claim on `run` now; nothing is taken.
    pub fn is_claimed(&self, run: RunId) -> Result<bool, StoreError> {
        self.backend.is_claimed(run)
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", self.location())
            .finish()
    }
}
