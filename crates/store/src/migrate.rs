//! Recognising a perflab database and bringing its schema up to date: one driver for
//! every backend.
//!
//! Recognition only reads: a database that is not ours, or is ours but from a newer
//! perflab, must come out of opening exactly as it was. Creation and migration run in one
//! transaction that the backend begins holding its schema lock (SQLite's write lock, a
//! PostgreSQL advisory lock), so perflab processes opening a new database together create
//! the schema once, and a failure half way leaves the previous version.

use crate::schema::{meta_table, Migration, APPLICATION};
use crate::sql::{Dialect, WriteTx};
use crate::{Location, StoreError};

/// What a database holds, as far as perflab is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DbState {
    /// No tables at all: a new database.
    Empty,
    Perflab {
        version: u32,
    },
}

/// A write transaction that can also tell what the database holds; each backend looks
/// in its own catalog.
pub(crate) trait Inspect: WriteTx {
    fn inspect(&mut self) -> Result<DbState, StoreError>;
}

/// The newest version `migrations` reach.
pub(crate) fn supported(migrations: &[Migration]) -> u32 {
    migrations.last().map_or(0, |m| m.to)
}

pub(crate) fn not_perflab(db: &Location, reason: impl Into<String>) -> StoreError {
    StoreError::NotPerflab {
        db: db.clone(),
        reason: reason.into(),
    }
}

/// `meta` could not be read as perflab's (other columns, other types): `why` says how.
pub(crate) fn foreign_meta(db: &Location, why: impl std::fmt::Display) -> StoreError {
    not_perflab(db, format!("its meta table is not perflab's: {why}"))
}

/// Whose database this is, from what its catalog says (`tables`, whether one is `meta`)
/// and, when it has a `meta` table, what `read` finds there by key. `read` reports a
/// value it cannot read as [`foreign_meta`].
pub(crate) fn recognise(
    db: &Location,
    dialect: Dialect,
    (tables, has_meta): (i64, bool),
    read: &mut dyn FnMut(&str) -> Result<Option<String>, StoreError>,
) -> Result<DbState, StoreError> {
    if tables == 0 {
        return Ok(DbState::Empty);
    }
    if !has_meta {
        return Err(not_perflab(
            db,
            format!("{} without perflab's meta table", dialect.database()),
        ));
    }
    match read("application")? {
        Some(app) if app == APPLICATION => {}
        Some(app) => {
            return Err(not_perflab(
                db,
                format!("it belongs to the application {app:?}"),
            ))
        }
        None => return Err(not_perflab(db, "its meta table names no application")),
    }
    let text = read("schema_version")?
        .ok_or_else(|| not_perflab(db, "its meta table has no schema_version"))?;
    let version = text
        .trim()
        .parse::<u32>()
        .map_err(|_| not_perflab(db, format!("its schema_version {text:?} is not a number")))?;
    Ok(DbState::Perflab { version })
}

/// [`StoreError::NewerSchema`] for a database at `found`, past what `migrations` reach.
pub(crate) fn newer(db: &Location, found: u32, migrations: &[Migration]) -> StoreError {
    StoreError::NewerSchema {
        db: db.clone(),
        found,
        supported: supported(migrations),
    }
}

/// Refuses a database from a newer perflab, before anything is written to it.
pub(crate) fn refuse_newer(
    db: &Location,
    state: DbState,
    migrations: &[Migration],
) -> Result<DbState, StoreError> {
    match state {
        DbState::Perflab { version } if version > supported(migrations) => {
            Err(newer(db, version, migrations))
        }
        _ => Ok(state),
    }
}

/// Creates the schema in an empty database or migrates an older one, in `tx`, which the
/// backend began holding its schema lock; a database already up to date is left as it
/// was (the transaction is dropped, not committed).
pub(crate) fn bring_up_to_date<T: Inspect>(
    mut tx: T,
    migrations: &[Migration],
) -> Result<(), StoreError> {
    let target = supported(migrations);
    let from = match tx.inspect()? {
        DbState::Empty => {
            create_meta(&mut tx)?;
            0
        }
        DbState::Perflab { version } => version,
    };
    if from > target {
        return Err(newer(tx.db(), from, migrations));
    }
    if from == target {
        return Ok(());
    }
    let dialect = tx.dialect();
    for m in migrations.iter().filter(|m| m.to > from) {
        if let Some(sql) = m.sql(dialect) {
            tx.batch(sql)?;
        }
    }
    let version = target.to_string();
    tx.execute(
        "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
        &[version.as_str().into()],
    )?;
    tx.commit()
}

/// The `meta` table of a new database, at version 0.
fn create_meta(tx: &mut impl WriteTx) -> Result<(), StoreError> {
    tx.batch(meta_table(tx.dialect()))?;
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('application', $1), \
         ('schema_version', '0'), ('created_by', $2)",
        &[APPLICATION.into(), perflab_core::VERSION.into()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rusqlite::Connection;

    use super::*;
    use crate::engine::Engine;
    use crate::schema::{MIGRATIONS, SCHEMA_VERSION};
    use crate::sqlite::SqliteEngine;

    fn memory() -> SqliteEngine {
        SqliteEngine::new(Connection::open_in_memory().unwrap(), Path::new("test.db"))
    }

    fn migrate(b: &mut SqliteEngine, migrations: &[Migration]) -> Result<(), StoreError> {
        bring_up_to_date(b.begin()?, migrations)
    }

    fn version(b: &mut SqliteEngine) -> DbState {
        b.begin().unwrap().inspect().unwrap()
    }

    /// A step after the last, in both dialects.
    fn later(sql: &'static str) -> Vec<Migration> {
        let mut later = MIGRATIONS.to_vec();
        later.push(Migration {
            to: SCHEMA_VERSION + 1,
            sqlite: sql,
            postgres: Some(sql),
        });
        later
    }

    #[test]
    fn schema_version_is_the_last_migration() {
        assert_eq!(supported(MIGRATIONS), SCHEMA_VERSION);
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].to < pair[1].to, "migrations out of order");
        }
        // PostgreSQL's steps start with one that builds everything up to its version.
        let pg: Vec<u32> = MIGRATIONS
            .iter()
            .filter(|m| m.postgres.is_some())
            .map(|m| m.to)
            .collect();
        assert_eq!(pg, (5..=SCHEMA_VERSION).collect::<Vec<_>>());
    }

    #[test]
    fn creates_then_migrates_step_by_step() {
        let mut b = memory();
        assert_eq!(version(&mut b), DbState::Empty);
        migrate(&mut b, MIGRATIONS).unwrap();
        let at = |v| DbState::Perflab { version: v };
        assert_eq!(version(&mut b), at(SCHEMA_VERSION));

        // A later perflab adds a step; a database at the current version takes just that.
        migrate(&mut b, &later("ALTER TABLE runs ADD COLUMN host TEXT;")).unwrap();
        assert_eq!(version(&mut b), at(SCHEMA_VERSION + 1));
        let mut tx = b.begin().unwrap();
        tx.batch("UPDATE runs SET host = 'x'").unwrap();
        drop(tx);

        // Going back is refused, and says which versions.
        let e = migrate(&mut b, MIGRATIONS).unwrap_err();
        assert!(
            matches!(e, StoreError::NewerSchema { found, supported, .. }
            if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
            "{e}"
        );
    }

    #[test]
    fn a_failing_migration_leaves_the_old_version() {
        let mut b = memory();
        migrate(&mut b, MIGRATIONS).unwrap();
        let bad = later("ALTER TABLE runs ADD COLUMN host TEXT; ALTER TABLE nosuch ADD COLUMN x;");
        assert!(migrate(&mut b, &bad).is_err());
        assert_eq!(
            version(&mut b),
            DbState::Perflab {
                version: SCHEMA_VERSION
            }
        );
        let mut tx = b.begin().unwrap();
        assert!(tx.batch("UPDATE runs SET host = 'x'").is_err());
    }
}
