//! The PostgreSQL backend: a store a team or a fleet of hosts shares (`--db
//! postgres://…`). Same schema versions, rules and per-measurement commits as SQLite.

mod claim;
mod open;
mod statements;
mod tx;

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::{Client, Config};

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
}

impl PgEngine {
    /// Connects, refuses a database that is not perflab's or is newer, then creates or
    /// migrates the schema.
    pub(crate) fn open(location: Location) -> Result<PgEngine, StoreError> {
        let config = open::config(&location)?;
        let mut client = open::connect(&location, &config)?;
        open::check(&mut client, &location)?;
        PgEngine::new(client, config, location).migrated()
    }

    /// As [`PgEngine::open`], but a database without perflab's schema is refused, not
    /// created: reading commands do not build tables on a server.
    pub(crate) fn open_existing(location: Location) -> Result<PgEngine, StoreError> {
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
        PgEngine::new(client, config, location).migrated()
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
        }
    }
}
