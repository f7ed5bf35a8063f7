//! A database opened for writing is checked first: a damaged file that still opens would
//! otherwise take a new run (every later read of it failing, the new run's included), and
//! writing into a damaged b-tree can spread the damage. Read-only commands skip this, so
//! what can still be read out of a damaged file can be.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use crate::StoreError;

/// `PRAGMA quick_check` (the structure of every page, in one pass over the file) and the
/// text of `meta` and `runs` (the rows every command reads first; SQLite stores text
/// without checking its encoding, so a flipped byte there is found only by reading it).
pub(crate) fn check(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let damaged = |reason: String| StoreError::Damaged {
        path: path.to_path_buf(),
        reason,
    };
    let verdict: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(|e| damaged(e.to_string()))?;
    if verdict != "ok" {
        return Err(damaged(verdict));
    }
    for table in ["meta", "runs"] {
        let exists: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)",
                [table],
                |r| r.get(0),
            )
            .map_err(|e| damaged(e.to_string()))?;
        if exists {
            text_is_utf8(conn, table).map_err(damaged)?;
        }
    }
    Ok(())
}

/// Every text value of `table` is UTF-8, or the error names the table, row and column.
fn text_is_utf8(conn: &Connection, table: &str) -> Result<(), String> {
    let mut stmt = conn
        .prepare(&format!("SELECT rowid, * FROM {table}"))
        .or_else(|_| conn.prepare(&format!("SELECT NULL, * FROM {table}")))
        .map_err(|e| e.to_string())?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        for (i, name) in names.iter().enumerate().skip(1) {
            if let Ok(ValueRef::Text(bytes)) = row.get_ref(i) {
                if let Err(e) = std::str::from_utf8(bytes) {
                    let at = match row.get_ref(0) {
                        Ok(ValueRef::Integer(id)) => format!(" of row {id}"),
                        _ => String::new(),
                    };
                    return Err(format!("{table}.{name}{at} is not valid text ({e})"));
                }
            }
        }
    }
    Ok(())
}
