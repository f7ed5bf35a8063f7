//! What an SQLite file holds, read from its catalog without writing anything: a file
//! that is not ours, or is ours but from a newer perflab, must come out of `open`
//! byte-identical.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, OptionalExtension};

use crate::error::At;
use crate::migrate::{foreign_meta, not_perflab, recognise, DbState};
use crate::sql::Dialect;
use crate::{Location, StoreError};

/// Reads what the database is: [`DbState::Empty`] for a new file (SQLite treats an empty
/// file as an empty database).
pub(crate) fn inspect(conn: &Connection, path: &Path) -> Result<DbState, StoreError> {
    let db = Location::from(path);
    let tables: i64 = match conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)) {
        Ok(n) => n,
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) => {
            return Err(not_perflab(&db, "it is not an SQLite database"))
        }
        Err(e) => return Err(e).at(path),
    };
    let has_meta: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta')",
            [],
            |r| r.get(0),
        )
        .at(path)?;
    // Someone else's `meta` table may have other columns or non-text values: any failure to
    // read ours from it means the file is not ours.
    let mut read = |key: &str| -> Result<Option<String>, StoreError> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| foreign_meta(&db, e))
    };
    recognise(&db, Dialect::Sqlite, (tables, has_meta), &mut read)
}

#[cfg(test)]
mod tests {
    use super::*;

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
