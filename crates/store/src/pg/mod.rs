//! The PostgreSQL backend: a store a team or a fleet of hosts shares (`--db
//! postgres://…`). Same schema versions, rules and per-measurement commits as SQLite.

mod claim;
mod open;
mod statements;
mod tx;

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::{Client, Config};

use crate::engine::Engine;
use crate::migrate::{bring_up_to_date, DbState};
use crate::schema::MIGRATIONS;
use crate::{Location, StoreError};

/// A session on the server. The store's one `Backend` (`crate::engine`) runs on it
/// through its `Engine` (tx.rs).
pub(crate) struct PgEngine {
    /// Reads take `&self` (as SQLite's do) but a session needs `&mut`: one store is used
    /// by one thread at a time, so a RefCell is enough.
    client: RefCell<Client>,
    /// Statements prepared on this session (see `statements`).
    prepared: statements::Prepared,
    config: Config,
    location: Location,
    /// What the health check found when the database was opened (`crate::health`).
    pub(crate) health: crate::health::Health,
}

impl PgEngine {
    /// Connects, refuses a database that is not perflab's or is newer, then creates or
    /// migrates the schema.
    pub(crate) fn open(location: Location) -> Result<PgEngine, StoreError> {
        let config = open::config(&location)?;
        let mut client = open::connect(&location, &config)?;
        let state = open::check(&mut client, &location)?;
        let mut engine = PgEngine::new(client, config, location);
        engine.check_health(state)?;
        engine.health.refuse_writes(&engine.location)?;
        engine.migrated()
    }

    /// As [`PgEngine::open`], but a database without perflab's schema is refused, not
    /// created: reading commands do not build tables on a server.
    pub(crate) fn open_existing(location: Location) -> Result<PgEngine, StoreError> {
        let config = open::config(&location)?;
        let mut client = open::connect(&location, &config)?;
        let state = open::check(&mut client, &location)?;
        if state == DbState::Empty {
            return Err(StoreError::NotPerflab {
                db: location,
                reason: "it holds no perflab results yet (a `perflab run` with this --db \
                         creates them)"
                    .into(),
            });
        }
        let mut engine = PgEngine::new(client, config, location);
        engine.check_health(state)?;
        if !engine.health.is_sound() {
            // A reader reads a damaged database as it is, without migrating it.
            return Ok(engine);
        }
        engine.migrated()
    }

    /// The health check every backend shares (`crate::health`), before anything is
    /// written.
    fn check_health(&mut self, state: DbState) -> Result<(), StoreError> {
        if let DbState::Perflab { version } = state {
            let mut health = crate::health::Health::default();
            self.snapshot(|q| crate::health::check_schema_and_runs(q, version, &mut health))?;
            self.health = health;
        }
        Ok(())
    }

    /// This store with its schema created or brought up to date.
    fn migrated(mut self) -> Result<PgEngine, StoreError> {
        bring_up_to_date(self.begin_schema_change()?, MIGRATIONS)?;
        Ok(self)
    }

    fn new(client: Client, config: Config, location: Location) -> PgEngine {
        PgEngine {
            client: RefCell::new(client),
            prepared: RefCell::new(HashMap::new()),
            config,
            location,
            health: Default::default(),
        }
    }
}
