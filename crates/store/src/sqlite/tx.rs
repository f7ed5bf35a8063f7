//! SQLite's side of the seam (`crate::sql`): transactions that run statements through
//! the connection's statement cache, and insert a batch one row at a time (a prepared
//! insert costs a few microseconds a row in-process).

use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::types::ToSqlOutput;
use rusqlite::{params_from_iter, Row, ToSql, Transaction, TransactionBehavior};

use super::SqliteEngine;
use crate::engine::Engine;
use crate::error::At;
use crate::migrate::{DbState, Inspect};
use crate::sql::{Batch, Cells, Dialect, Query, Value, WriteTx};
use crate::{Claim, Location, RunId, StoreError};

/// A transaction on the database file.
pub(crate) struct SqliteTx<'c> {
    tx: Transaction<'c>,
    path: &'c Path,
    db: &'c Location,
}

impl Engine for SqliteEngine {
    type Tx<'a> = SqliteTx<'a>;

    fn location(&self) -> &Location {
        &self.location
    }

    /// IMMEDIATE takes the write lock before anything is read, so what the transaction
    /// reads (a plan row, the schema version) stays true until it commits, and two
    /// processes creating one new database take turns.
    fn begin(&mut self) -> Result<SqliteTx<'_>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .at(&self.path)?;
        Ok(SqliteTx {
            tx,
            path: &self.path,
            db: &self.location,
        })
    }

    /// A deferred transaction: one snapshot of the file, even while another process
    /// records into it (WAL). Dropped at the end, it ends (a rollback: it wrote nothing).
    fn snapshot<T>(
        &self,
        read: impl FnOnce(&mut dyn Query) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // Keeps each statement's plan across the bounds bound to it. This SQLite is built
        // with STAT4, so a statement with a range is otherwise prepared again whenever new
        // bounds are bound: once per query of every chunk, a twentieth of a 100,000
        // measurement report. Without statistics tables (perflab never runs ANALYZE) the
        // plan is the same either way.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .at(&self.path)?;
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        read(&mut SqliteTx {
            tx,
            path: &self.path,
            db: &self.location,
        })
    }

    fn claim(&self, run: RunId) -> Result<Claim, StoreError> {
        super::claim::take(&self.path, run)
    }

    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError> {
        super::claim::held(&self.path, run)
    }
}

impl ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Value::Int(v) => v.to_sql(),
            Value::Real(v) => v.to_sql(),
            Value::Text(v) => v.to_sql(),
            Value::Blob(v) => v.to_sql(),
        }
    }
}

impl Query for SqliteTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn db(&self) -> &Location {
        self.db
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Cells) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let path = self.path;
        let mut stmt = self
            .tx
            .prepare_cached(&Dialect::Sqlite.text(sql))
            .at(path)?;
        let mut rows = stmt.query(params_from_iter(params)).at(path)?;
        while let Some(row) = rows.next().at(path)? {
            each(&SqliteRow { row, path })?;
        }
        Ok(())
    }
}

impl WriteTx for SqliteTx<'_> {
    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.tx.execute_batch(sql).at(self.path)
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError> {
        let n = self
            .tx
            .prepare_cached(&Dialect::Sqlite.text(sql))
            .at(self.path)?
            .execute(params_from_iter(params))
            .at(self.path)?;
        Ok(n as u64)
    }

    fn insert(&mut self, rows: &Batch<'_>) -> Result<(), StoreError> {
        let path = self.path;
        let names: Vec<&str> = rows.names().collect();
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            rows.table,
            names.join(", "),
            marks.join(", ")
        );
        let mut stmt = self.tx.prepare_cached(&sql).at(path)?;
        let shared = rows.shared.len();
        for i in 0..rows.rows {
            for (k, (_, v)) in rows.shared.iter().enumerate() {
                stmt.raw_bind_parameter(k + 1, v).at(path)?;
            }
            for (k, (_, column)) in rows.columns.iter().enumerate() {
                stmt.raw_bind_parameter(shared + k + 1, column.value(i))
                    .at(path)?;
            }
            stmt.raw_execute().at(path)?;
        }
        Ok(())
    }

    fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().at(self.path)
    }
}

impl Inspect for SqliteTx<'_> {
    fn inspect(&mut self) -> Result<DbState, StoreError> {
        super::inspect::inspect(&self.tx, self.path)
    }
}

/// A row of an answer; a value of the wrong type or out of range is an SQLite error, as
/// rusqlite reports it.
struct SqliteRow<'r, 's> {
    row: &'r Row<'s>,
    path: &'r Path,
}

impl Cells for SqliteRow<'_, '_> {
    fn int(&self, i: usize) -> Result<i64, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn u32(&self, i: usize, _what: &str) -> Result<u32, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn opt_u32(&self, i: usize, _what: &str) -> Result<Option<u32>, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn i32(&self, i: usize, _what: &str) -> Result<i32, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn real(&self, i: usize) -> Result<Option<f64>, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn text(&self, i: usize) -> Result<String, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn str(&self, i: usize) -> Result<&str, StoreError> {
        let v = self.row.get_ref(i).at(self.path)?;
        v.as_str()
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, v.data_type(), Box::new(e)))
            .at(self.path)
    }

    fn blob(&self, i: usize) -> Result<Vec<u8>, StoreError> {
        self.row.get(i).at(self.path)
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        self.row.get(i).at(self.path)
    }
}
