//! Connecting, recognising a perflab database and bringing its schema up to date.
//!
//! As with SQLite, recognition only reads: a database holding someone else's tables, or
//! perflab's from a newer version, is left exactly as it was. Creation and migration run
//! in one transaction under a transaction-level advisory lock, so perflab processes
//! opening a new database together create the schema once, and a failure half way leaves
//! the previous version.

use std::time::Duration;

use postgres::{Client, Config, GenericClient, NoTls};

use super::schema::{META, MIGRATIONS};
use crate::error::{pg_text, PgAt};
use crate::schema::{Migration, APPLICATION};
use crate::{Location, StoreError};

/// The advisory lock that serialises schema changes (any bigint: perflab's own number).
const SCHEMA_LOCK: i64 = 0x7065_7266_6c61_6231; // "perflab1"

/// How long connecting may take before it is given up (unless the URL says otherwise).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a database holds, as far as perflab is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DbState {
    /// No tables in the schema perflab would use: a new database.
    Empty,
    Perflab {
        version: u32,
    },
}

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

/// Reads what the database is, without writing anything.
pub(crate) fn inspect(c: &mut impl GenericClient, db: &Location) -> Result<DbState, StoreError> {
    let not_ours = |reason: String| StoreError::NotPerflab {
        db: db.clone(),
        reason,
    };
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
        return Err(not_ours(
            "its search_path names no schema that exists".into(),
        ));
    }
    let tables: i64 = row.get(1);
    let has_meta: bool = row.get(2);
    if tables == 0 {
        return Ok(DbState::Empty);
    }
    if !has_meta {
        return Err(not_ours(
            "a PostgreSQL database without perflab's meta table".into(),
        ));
    }
    // Someone else's `meta` may have other columns or types: any failure to read ours
    // from it means the database is not ours. The read runs in a savepoint, so a failed
    // statement does not abort a surrounding transaction.
    let mut read = |key: &str| -> Result<Option<String>, StoreError> {
        let mut tx = c.transaction().at(db)?;
        let got = tx
            .query_opt("SELECT value::text FROM meta WHERE key::text = $1", &[&key])
            .map_err(|e| not_ours(format!("its meta table is not perflab's: {}", pg_text(&e))))?;
        tx.commit().at(db)?;
        Ok(got.map(|r| r.get(0)))
    };
    match read("application")? {
        Some(app) if app == APPLICATION => {}
        Some(app) => return Err(not_ours(format!("it belongs to the application {app:?}"))),
        None => return Err(not_ours("its meta table names no application".into())),
    }
    let text = read("schema_version")?
        .ok_or_else(|| not_ours("its meta table has no schema_version".into()))?;
    let version = text
        .trim()
        .parse::<u32>()
        .map_err(|_| not_ours(format!("its schema_version {text:?} is not a number")))?;
    Ok(DbState::Perflab { version })
}

/// The newest version `migrations` reach.
pub(crate) fn supported(migrations: &[Migration]) -> u32 {
    migrations.last().map_or(0, |m| m.to)
}

/// Refuses a database that is not perflab's or is newer, before anything is written.
pub(crate) fn check(c: &mut Client, db: &Location) -> Result<DbState, StoreError> {
    let state = inspect(c, db)?;
    if let DbState::Perflab { version } = state {
        let target = supported(MIGRATIONS);
        if version > target {
            return Err(StoreError::NewerSchema {
                db: db.clone(),
                found: version,
                supported: target,
            });
        }
    }
    Ok(state)
}

/// Creates the schema in an empty database or migrates an older one, in one transaction.
pub(crate) fn bring_up_to_date(
    c: &mut Client,
    db: &Location,
    migrations: &[Migration],
) -> Result<(), StoreError> {
    let target = supported(migrations);
    let mut tx = c.transaction().at(db)?;
    // Taken before the version is read: a second opener waits here, then finds the
    // schema the first one committed.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .at(db)?;
    let from = match inspect(&mut tx, db)? {
        DbState::Empty => {
            tx.batch_execute(META).at(db)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('application', $1), \
                 ('schema_version', '0'), ('created_by', $2)",
                &[&APPLICATION, &perflab_core::VERSION],
            )
            .at(db)?;
            0
        }
        DbState::Perflab { version } => version,
    };
    if from > target {
        return Err(StoreError::NewerSchema {
            db: db.clone(),
            found: from,
            supported: target,
        });
    }
    if from == target {
        return Ok(());
    }
    for m in migrations.iter().filter(|m| m.to > from) {
        tx.batch_execute(m.sql).at(db)?;
    }
    tx.execute(
        "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
        &[&target.to_string()],
    )
    .at(db)?;
    tx.commit().at(db)
}
