//! The handle every command holds: a results database behind a [`Backend`], with the
//! rules that are the store's and not a backend's (a run nobody claims is not running).

use std::path::Path;

use crate::assemble::TelemetryFilter;
use crate::backend::{Backend, Claim};
use crate::engine::{Engine, SqlBackend};
use crate::{
    pg, sqlite, Location, MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunInfo, RunStatus,
    StoreError,
};

/// An open results database: a thin handle over a [`Backend`].
pub struct Store {
    backend: Box<dyn Backend>,
    /// What the health check found on opening (`crate::health`): a store opened for
    /// writing is sound, one opened for reading may not be.
    health: crate::Health,
}

impl Store {
    /// Opens the SQLite database at `path`, creating it and its directories if missing,
    /// and migrating an older schema. A file that is not a perflab database, or one from a
    /// newer perflab, is refused and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let engine = sqlite::SqliteEngine::open(path.as_ref())?;
        let health = engine.health.clone();
        Ok(Store::over(engine).with_health(health))
    }

    /// Opens an SQLite database that must already exist, for commands that only look at
    /// results (and `run --resume`). A file this process cannot write is opened read-only.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let engine = sqlite::SqliteEngine::open_existing(path.as_ref())?;
        let health = engine.health.clone();
        Ok(Store::over(engine).with_health(health))
    }

    /// [`Store::open`] for any location: a PostgreSQL server gets the schema created or
    /// migrated the same way (the database itself must exist).
    pub fn open_location(loc: &Location) -> Result<Store, StoreError> {
        match loc {
            Location::Sqlite(p) => Store::open(p),
            Location::Postgres(_) => {
                let engine = pg::PgEngine::open(loc.clone())?;
                let health = engine.health.clone();
                Ok(Store::over(engine).with_health(health))
            }
        }
    }

    /// [`Store::open_existing`] for any location. On PostgreSQL "existing" means a database
    /// that holds perflab's schema: an empty one is [`StoreError::Missing`]-like
    /// ([`StoreError::NotPerflab`] names why) and left as it is.
    pub fn open_existing_location(loc: &Location) -> Result<Store, StoreError> {
        match loc {
            Location::Sqlite(p) => Store::open_existing(p),
            Location::Postgres(_) => {
                let engine = pg::PgEngine::open_existing(loc.clone())?;
                let health = engine.health.clone();
                Ok(Store::over(engine).with_health(health))
            }
        }
    }

    /// The store over one of perflab's SQL engines.
    fn over(engine: impl Engine + 'static) -> Store {
        Store::from_backend(Box::new(SqlBackend(engine)))
    }

    /// A store over any backend (a wrapper that also streams what is recorded, a test
    /// double).
    pub fn from_backend(backend: Box<dyn Backend>) -> Store {
        Store {
            backend,
            health: crate::Health::default(),
        }
    }

    fn with_health(mut self, health: crate::Health) -> Store {
        self.health = health;
        self
    }

    /// What the health check found when this store was opened: nothing for a sound
    /// database (a store opened for writing always is); for one opened for reading, the
    /// damage a reader should be told of, and the runs that do not read back.
    pub fn health(&self) -> &crate::Health {
        &self.health
    }

    /// [`StoreError::Damaged`] when the health check found anything: for a command that
    /// is about to write into a database it opened for reading (`run --resume`).
    pub fn refuse_if_damaged(&self) -> Result<(), StoreError> {
        self.health.refuse_writes(self.location())
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

    /// [`Store::runs`], but a run whose row does not read back is left out and returned
    /// apart with why, so a damaged row does not hide the others (`perflab ls`).
    pub fn readable_runs(&self) -> Result<crate::ReadableRuns, StoreError> {
        let (mut runs, bad) = self.backend.readable_runs()?;
        for info in &mut runs {
            self.settle(info);
        }
        Ok((runs, bad))
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

    /// [`Store::pending`] a chunk at a time: at most `limit` of its measurements, those
    /// after seq `after` (from the start with `None`), so a runner never holds a plan of
    /// millions. A caller that records as it goes passes the last seq it was given.
    pub fn pending_after(
        &self,
        id: RunId,
        after: Option<u32>,
        limit: u32,
    ) -> Result<Vec<PlannedMeasurement>, StoreError> {
        self.backend.pending_after(id, after, limit)
    }

    /// How many of [`Store::pending`]'s measurements each variant has, by variant name.
    pub fn pending_variants(&self, id: RunId) -> Result<Vec<(String, u64)>, StoreError> {
        self.backend.pending_variants(id)
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

    /// How many of the run's measurements other work disturbed (see
    /// [`crate::MeasurementStatus::Disturbed`]); an ineffective one counts as that only.
    pub fn disturbed(&self, id: RunId) -> Result<u32, StoreError> {
        self.backend.disturbed(id)
    }

    /// Stores a new run with status `running`, its whole plan and its unavailable variants.
    pub fn create_run(&mut self, run: &NewRun, created_at: f64) -> Result<RunId, StoreError> {
        crate::rules::check_new_plan(&run.plan)?;
        let mut plan = run.plan.iter().cloned().map(Ok);
        self.backend.create_run(run, &mut plan, created_at)
    }

    /// [`Store::create_run`] with the plan read from `plan` as it is written, in batches,
    /// so a plan of millions of measurements is never held whole; `run.plan` must be
    /// empty. The seqs must rise strictly (execution order), which is checked as they come.
    /// An error from `plan` (a file that cannot be read further) stores nothing.
    pub fn create_run_streamed(
        &mut self,
        run: &NewRun,
        plan: impl Iterator<Item = Result<PlannedMeasurement, StoreError>>,
        created_at: f64,
    ) -> Result<RunId, StoreError> {
        if !run.plan.is_empty() {
            return Err(StoreError::InvalidPlan(
                "a streamed plan comes from its iterator, yet the run holds one too".into(),
            ));
        }
        let mut plan = crate::rules::rising_seqs(plan);
        self.backend.create_run(run, &mut plan, created_at)
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
