//! Connecting, and recognising a perflab database: as with SQLite, recognition only
//! reads, so a database holding someone else's tables, or perflab's from a newer
//! version, is left exactly as it was.

use std::time::Duration;

use postgres::{Client, Config, GenericClient, NoTls};

use crate::error::{pg_text, PgAt};
use crate::migrate::{foreign_meta, not_perflab, recognise, refuse_newer, DbState};
use crate::schema::MIGRATIONS;
use crate::sql::Dialect;
use crate::{Location, StoreError};

/// How long connecting may take before it is given up (unless the URL says otherwise).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection settings of a `postgres://` location; a malformed URL is the user's
/// to fix.
pub(crate) fn config(db: &Location) -> Result<Config, StoreError> {
    let Location::Postgres(url) = db else {
        unreachable!("a PostgreSQL backend for an SQLite location");
    };
    let mut config: Config = url
        .parse()
        .map_err(|e: postgres::Error| StoreError::Connect {
            db: db.clone(),
            reason: format!("not a usable PostgreSQL URL: {}", pg_text(&e)),
        })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("perflab");
    }
    Ok(config)
}

/// A session: every failure to get one (refused, unknown host, authentication, no such
/// database) is [`StoreError::Connect`].
pub(crate) fn connect(db: &Location, config: &Config) -> Result<Client, StoreError> {
    config.connect(NoTls).map_err(|e| StoreError::Connect {
        db: db.clone(),
        reason: pg_text(&e),
    })
}

/// Reads what the database is, without writing anything: [`DbState::Empty`] when the
/// schema perflab would use holds no tables.
pub(crate) fn inspect(c: &mut impl GenericClient, db: &Location) -> Result<DbState, StoreError> {
    // The schema unqualified names resolve to (normally `public`); NULL when the
    // search_path names no existing schema, where perflab could not create tables anyway.
    let row = c
        .query_one(
            "SELECT current_schema(), \
             (SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()), \
             EXISTS (SELECT 1 FROM information_schema.tables \
                     WHERE table_schema = current_schema() AND table_name = 'meta')",
            &[],
        )
        .at(db)?;
    let schema: Option<String> = row.get(0);
    if schema.is_none() {
        return Err(not_perflab(
            db,
            "its search_path names no schema that exists",
        ));
    }
    // Someone else's `meta` may have other columns or types: any failure to read ours
    // from it means the database is not ours. The read runs in a savepoint, so a failed
    // statement does not abort a surrounding transaction.
    let mut read = |key: &str| -> Result<Option<String>, StoreError> {
        let mut tx = c.transaction().at(db)?;
        let got = tx
            .query_opt("SELECT value::text FROM meta WHERE key::text = $1", &[&key])
            .map_err(|e| foreign_meta(db, pg_text(&e)))?;
        tx.commit().at(db)?;
        Ok(got.map(|r| r.get(0)))
    };
    recognise(db, Dialect::Postgres, (row.get(1), row.get(2)), &mut read)
}

/// Refuses a database that is not perflab's or is newer, before anything is written.
pub(crate) fn check(c: &mut Client, db: &Location) -> Result<DbState, StoreError> {
    refuse_newer(db, inspect(c, db)?, MIGRATIONS)
}
