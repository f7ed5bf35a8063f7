//! Recognising a perflab database and bringing its schema up to date.
//!
//! Recognition only reads: a file that is not ours, or is ours but from a newer perflab,
//! must come out of `open` byte-identical.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use crate::error::At;
use crate::schema::{Migration, APPLICATION, META};
use crate::StoreError;

/// What a file holds, as far as perflab is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DbState {
    /// No tables at all: a new file (SQLite treats an empty file as an empty database).
    Empty,
    Perflab {
        version: u32,
    },
}

/// Reads what the database is, without writing anything.
pub(crate) fn inspect(conn: &Connection, path: &Path) -> Result<DbState, StoreError> {
    let not_ours = |reason: String| StoreError::NotPerflab {
        db: path.into(),
        reason,
    };
    let tables: i64 = match conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)) {
        Ok(n) => n,
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) => {
            return Err(not_ours("it is not an SQLite database".into()))
        }
        Err(e) => return Err(e).at(path),
    };
    if tables == 0 {
        return Ok(DbState::Empty);
    }
    let has_meta: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta')",
            [],
            |r| r.get(0),
        )
        .at(path)?;
    if !has_meta {
        return Err(not_ours(
            "an SQLite database without perflab's meta table".into(),
        ));
    }
    // Someone else's `meta` table may have other columns or non-text values: any failure to
    // read ours from it means the file is not ours.
    let read = |key: &str| -> Result<Option<String>, StoreError> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| not_ours(format!("its meta table is not perflab's: {e}")))
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

/// Creates the schema in an empty database or migrates an older one, all in one
/// transaction, so a crash half way leaves the previous version intact.
pub(crate) fn bring_up_to_date(
    conn: &mut Connection,
    path: &Path,
    migrations: &[Migration],
) -> Result<(), StoreError> {
    let target = supported(migrations);
    // IMMEDIATE takes the write lock before reading the version: two perflab processes
    // opening a new database at once must not both create the schema.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .at(path)?;
    let from = match inspect(&tx, path)? {
        DbState::Empty => {
            tx.execute_batch(META).at(path)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('application', ?1), \
                 ('schema_version', '0'), ('created_by', ?2)",
                [APPLICATION, perflab_core::VERSION],
            )
            .at(path)?;
            0
        }
        DbState::Perflab { version } => version,
    };
    if from > target {
        return Err(StoreError::NewerSchema {
            db: path.into(),
            found: from,
            supported: target,
        });
    }
    if from == target {
        return Ok(());
    }
    for m in migrations.iter().filter(|m| m.to > from) {
        tx.execute_batch(m.sql).at(path)?;
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
        [target.to_string()],
    )
    .at(path)?;
    tx.commit().at(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{MIGRATIONS, SCHEMA_VERSION};

    fn version(conn: &Connection) -> DbState {
        inspect(conn, Path::new("test.db")).unwrap()
    }

    #[test]
    fn schema_version_is_the_last_migration() {
        assert_eq!(supported(MIGRATIONS), SCHEMA_VERSION);
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].to < pair[1].to, "migrations out of order");
        }
    }

    #[test]
    fn creates_then_migrates_step_by_step() {
        let mut conn = Connection::open_in_memory().unwrap();
        let p = Path::new("test.db");
        assert_eq!(version(&conn), DbState::Empty);
        bring_up_to_date(&mut conn, p, MIGRATIONS).unwrap();
        assert_eq!(
            version(&conn),
            DbState::Perflab {
                version: SCHEMA_VERSION
            }
        );

        // A later perflab adds a step; a database at the current version takes just that.
        let mut later = MIGRATIONS.to_vec();
        later.push(Migration {
            to: SCHEMA_VERSION + 1,
            sql: "ALTER TABLE runs ADD COLUMN host TEXT;",
        });
        bring_up_to_date(&mut conn, p, &later).unwrap();
        assert_eq!(
            version(&conn),
            DbState::Perflab {
                version: SCHEMA_VERSION + 1
            }
        );
        conn.execute("UPDATE runs SET host = 'x'", []).unwrap();

        // Going back is refused, and says which versions.
        let e = bring_up_to_date(&mut conn, p, MIGRATIONS).unwrap_err();
        assert!(
            matches!(e, StoreError::NewerSchema { found, supported, .. }
            if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION),
            "{e}"
        );
    }

    #[test]
    fn a_failing_migration_leaves_the_old_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        let p = Path::new("test.db");
        bring_up_to_date(&mut conn, p, MIGRATIONS).unwrap();
        let mut bad = MIGRATIONS.to_vec();
        bad.push(Migration {
            to: SCHEMA_VERSION + 1,
            sql: "ALTER TABLE runs ADD COLUMN host TEXT; ALTER TABLE nosuch ADD COLUMN x;",
        });
        assert!(bring_up_to_date(&mut conn, p, &bad).is_err());
        assert_eq!(
            version(&conn),
            DbState::Perflab {
                version: SCHEMA_VERSION
            }
        );
        assert!(conn.execute("UPDATE runs SET host = 'x'", []).is_err());
    }

    #[test]
    fn foreign_databases_are_named_as_such() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x);").unwrap();
        let e = inspect(&conn, Path::new("x.db")).unwrap_err();
        assert!(
            e.to_string().contains("without perflab's meta table"),
            "{e}"
        );
        conn.execute_batch("CREATE TABLE meta (k, v);").unwrap();
        let e = inspect(&conn, Path::new("x.db")).unwrap_err();
        assert!(e.to_string().contains("not perflab's"), "{e}");
        conn.execute_batch(
            "DROP TABLE meta; CREATE TABLE meta (key, value); \
             INSERT INTO meta VALUES ('application', 'other');",
        )
        .unwrap();
        let e = inspect(&conn, Path::new("x.db")).unwrap_err();
        assert!(e.to_string().contains("\"other\""), "{e}");
        conn.execute_batch(
            "UPDATE meta SET value = 'perflab'; INSERT INTO meta VALUES ('schema_version', 'v9');",
        )
        .unwrap();
        let e = inspect(&conn, Path::new("x.db")).unwrap_err();
        assert!(e.to_string().contains("\"v9\""), "{e}");
    }
}
