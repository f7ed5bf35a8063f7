//! SQLite's part of the health check (`crate::health`): the file's pages, and text that
//! SQLite stored without checking its encoding, before the checks every backend shares.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::SqliteEngine;
use crate::engine::Engine;
use crate::health::{check_schema_and_runs, Health};

/// `PRAGMA quick_check` (the structure of every page, in one pass over the file), the
/// text of `meta` and `runs` (the rows every command reads first; a flipped byte there is
/// found only by reading it), then the schema's tables and every run's row. A check that
/// cannot even run is damage too: the file does not read as a database should.
pub(crate) fn check(engine: &SqliteEngine, version: u32) -> Health {
    let mut health = Health::default();
    let conn = &engine.conn;
    match conn.query_row("PRAGMA quick_check(1)", [], |r| r.get::<_, String>(0)) {
        Ok(verdict) if verdict == "ok" => {}
        Ok(verdict) => health.damage.push(verdict),
        Err(e) => health.damage.push(e.to_string()),
    }
    if !health.damage.is_empty() {
        // Reading tables through pages that do not check says nothing more.
        return health;
    }
    for table in ["meta", "runs"] {
        if let Err(e) = text_is_utf8(conn, table, &mut health) {
            health.damage.push(e);
        }
    }
    let checked = engine.snapshot(|q| check_schema_and_runs(q, version, &mut health));
    if let Err(e) = checked {
        health.damage.push(e.to_string());
    }
    health
}

/// Every text value of `table` (when there is one) is UTF-8: a run row that is not is a
/// bad run, any other such row damage, each naming the table, row and column.
fn text_is_utf8(conn: &Connection, table: &str, health: &mut Health) -> Result<(), String> {
    let exists: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)",
            [table],
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())?;
    if !exists {
        return Ok(());
    }
    let mut stmt = conn
        .prepare(&format!("SELECT rowid, * FROM {table}"))
        .or_else(|_| conn.prepare(&format!("SELECT NULL, * FROM {table}")))
        .map_err(|e| e.to_string())?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let rowid = match row.get_ref(0) {
            Ok(ValueRef::Integer(id)) => Some(id),
            _ => None,
        };
        for (i, name) in names.iter().enumerate().skip(1) {
            let Ok(ValueRef::Text(bytes)) = row.get_ref(i) else {
                continue;
            };
            let Err(e) = std::str::from_utf8(bytes) else {
                continue;
            };
            match (table, rowid) {
                ("runs", Some(id)) => {
                    health.bad_run(id, format!("its {name} is not valid text ({e})"))
                }
                (_, Some(id)) => health.damage.push(format!(
                    "{table}.{name} of row {id} is not valid text ({e})"
                )),
                (_, None) => health
                    .damage
                    .push(format!("{table}.{name} is not valid text ({e})")),
            }
        }
    }
    Ok(())
}
