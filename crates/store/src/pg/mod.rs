//! The PostgreSQL backend: a store a team or a fleet of hosts shares (`--db
//! postgres://…`). Same schema versions, rules and per-measurement commits as SQLite.

mod claim;
mod open;
mod read;
mod statements;
mod tx;

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::{Client, Config, GenericClient, Statement};

use crate::migrate::{bring_up_to_date, DbState};
use crate::schema::MIGRATIONS;
use crate::write;
use crate::{
    Backend, Claim, Location, MeasurementRecord, NewRun, PlannedMeasurement, RunId, RunInfo,
    RunStatus, StoreError,
};

pub(crate) struct PgBackend {
    /// Reads take `&self` (as SQLite's do) but a session needs `&mut`: one store is used
    /// by one thread at a time, so a RefCell is enough.
    client: RefCell<Client>,
    /// Statements prepared on this session (see `statements`).
    prepared: statements::Prepared,
    config: Config,
    location: Location,
}

impl PgBackend {
    /// Connects, refuses a database that is not perflab's or is newer, then creates or
    /// migrates the schema.
    pub(crate) fn open(location: Location) -> Result<PgBackend, StoreError> {
        let config = open::config(&location)?;
        let mut client = open::connect(&location, &config)?;
        open::check(&mut client, &location)?;
        PgBackend::new(client, config, location).migrated()
    }

    /// As [`PgBackend::open`], but a database without perflab's schema is refused, not
    /// created: reading commands do not build tables on a server.
    pub(crate) fn open_existing(location: Location) -> Result<PgBackend, StoreError> {
        let config = open::config(&location)?;
        let mut client = open::connect(&location, &config)?;
        if open::check(&mut client, &location)? == DbState::Empty {
            return Err(StoreError::NotPerflab {
                db: location,
                reason: "it holds no perflab results yet (a `perflab run` with this --db \
                         creates them)"
                    .into(),
            });
        }
        PgBackend::new(client, config, location).migrated()
    }

    /// This store with its schema created or brought up to date.
    fn migrated(mut self) -> Result<PgBackend, StoreError> {
        bring_up_to_date(self.begin_schema_change()?, MIGRATIONS)?;
        Ok(self)
    }

    fn new(client: Client, config: Config, location: Location) -> PgBackend {
        PgBackend {
            client: RefCell::new(client),
            prepared: RefCell::new(HashMap::new()),
            config,
            location,
        }
    }

    /// The statement for `sql`, prepared once per session.
    fn stmt(&self, c: &mut impl GenericClient, sql: &str) -> Result<Statement, StoreError> {
        statements::prepare(c, &self.prepared, &self.location, sql)
    }

    fn no_run(&self, id: RunId) -> StoreError {
        StoreError::NoRun {
            db: self.location.clone(),
            id,
        }
    }
}

// Reads are the inherent methods of read.rs; writes are the shared writer's, in a
// transaction of tx.rs.
impl Backend for PgBackend {
    fn location(&self) -> &Location {
        &self.location
    }
    fn runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        PgBackend::runs(self)
    }
    fn run(&self, id: RunId) -> Result<RunInfo, StoreError> {
        PgBackend::run(self, id)
    }
    fn run_by_uid(&self, uid: &str) -> Result<Option<RunId>, StoreError> {
        PgBackend::run_by_uid(self, uid)
    }
    fn plan(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        PgBackend::plan(self, id)
    }
    fn pending(&self, id: RunId) -> Result<Vec<PlannedMeasurement>, StoreError> {
        PgBackend::pending(self, id)
    }
    fn measurements(&self, id: RunId) -> Result<Vec<MeasurementRecord>, StoreError> {
        PgBackend::measurements(self, id)
    }
    fn visit_measurements(
        &self,
        id: RunId,
        telemetry: crate::TelemetryFilter,
        visit: &mut dyn FnMut(MeasurementRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        PgBackend::visit_measurements(self, id, telemetry, visit)
    }
    fn recorded(&self, id: RunId) -> Result<Vec<(u32, bool)>, StoreError> {
        PgBackend::recorded(self, id)
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
        claim::take(&self.config, &self.location, run)
    }
    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError> {
        claim::held(&self.config, &self.location, run)
    }
}

/// A BIGINT read back into a u32 field; out of range means the row was not written by
/// perflab.
pub(crate) fn small(db: &Location, what: &str, v: i64) -> Result<u32, StoreError> {
    u32::try_from(v)
        .map_err(|_| crate::error::corrupt(db.clone(), format!("{what} {v} is out of range")))
}
