//! PostgreSQL's side of the seam (`crate::sql`): a write transaction whose statements
//! are prepared once per session, and which inserts a whole batch with one statement
//! (`INSERT … SELECT FROM unnest(arrays)`), so a measurement with hundreds of telemetry
//! rows is a handful of round trips to the server, not hundreds.

use postgres::types::ToSql;
use postgres::{Row, Statement, Transaction};

use super::statements::{prepare, Prepared};
use super::{small, PgBackend};
use crate::error::PgAt;
use crate::migrate::{DbState, Inspect};
use crate::sql::{Batch, Cells, Column, Dialect, Value, WriteTx};
use crate::{Location, StoreError};

/// The advisory lock that serialises schema changes (any bigint: perflab's own number).
const SCHEMA_LOCK: i64 = 0x7065_7266_6c61_6231; // "perflab1"

/// A write transaction on the server.
pub(crate) struct PgTx<'c> {
    tx: Transaction<'c>,
    prepared: &'c Prepared,
    db: &'c Location,
}

impl PgBackend {
    /// Begins a write transaction (READ COMMITTED: what must not change under it, it
    /// locks with [`Dialect::row_lock`]).
    pub(crate) fn begin(&mut self) -> Result<PgTx<'_>, StoreError> {
        let tx = self.client.get_mut().transaction().at(&self.location)?;
        Ok(PgTx {
            tx,
            prepared: &self.prepared,
            db: &self.location,
        })
    }

    /// Begins the transaction that creates or migrates the schema: it holds the schema's
    /// advisory lock, so a second opener waits here, then finds the schema the first one
    /// committed.
    pub(crate) fn begin_schema_change(&mut self) -> Result<PgTx<'_>, StoreError> {
        let mut tx = self.begin()?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1)",
            &[Value::from(SCHEMA_LOCK)],
        )?;
        Ok(tx)
    }
}

impl PgTx<'_> {
    fn stmt(&mut self, sql: &str) -> Result<Statement, StoreError> {
        prepare(&mut self.tx, self.prepared, self.db, sql)
    }
}

/// A parameter as the client library binds it.
fn param<'v>(v: &'v Value<'_>) -> &'v (dyn ToSql + Sync) {
    match v {
        Value::Int(v) => v,
        Value::Real(v) => v,
        Value::Text(v) => v,
        Value::Blob(v) => v,
    }
}

fn params<'v>(values: &'v [Value<'_>]) -> Vec<&'v (dyn ToSql + Sync)> {
    values.iter().map(param).collect()
}

/// A column of a batch as one array parameter, with the SQL type of its elements.
fn array<'c>(c: &'c Column<'_>) -> (&'c (dyn ToSql + Sync), &'static str) {
    match c {
        Column::Int(v) => (v, "bigint"),
        Column::OptInt(v) => (v, "bigint"),
        Column::Real(v) => (v, "float8"),
        Column::OptReal(v) => (v, "float8"),
        Column::Str(v) => (v, "text"),
        Column::Text(v) => (v, "text"),
        Column::OptText(v) => (v, "text"),
        Column::Blob(v) => (v, "bytea"),
    }
}

impl WriteTx for PgTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn db(&self) -> &Location {
        self.db
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.tx.batch_execute(sql).at(self.db)
    }

    fn execute(&mut self, sql: &str, values: &[Value<'_>]) -> Result<u64, StoreError> {
        let st = self.stmt(sql)?;
        self.tx.execute(&st, &params(values)).at(self.db)
    }

    fn query(
        &mut self,
        sql: &str,
        values: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Cells) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let st = self.stmt(sql)?;
        for row in self.tx.query(&st, &params(values)).at(self.db)? {
            each(&PgRow {
                row: &row,
                db: self.db,
            })?;
        }
        Ok(())
    }

    /// `INSERT INTO t (shared…, columns…) SELECT $1, …, * FROM unnest($k::type[], …)`.
    fn insert(&mut self, rows: &Batch<'_>) -> Result<(), StoreError> {
        let names: Vec<&str> = rows.names().collect();
        let shared = rows.shared.len();
        let heads: Vec<String> = (1..=shared).map(|i| format!("${i}")).collect();
        let arrays: Vec<(&(dyn ToSql + Sync), &str)> =
            rows.columns.iter().map(|(_, c)| array(c)).collect();
        let casts: Vec<String> = arrays
            .iter()
            .enumerate()
            .map(|(k, (_, ty))| format!("${}::{ty}[]", shared + k + 1))
            .collect();
        let sql = format!(
            "INSERT INTO {} ({}) SELECT {}, * FROM unnest({})",
            rows.table,
            names.join(", "),
            heads.join(", "),
            casts.join(", ")
        );
        let st = self.stmt(&sql)?;
        let mut values: Vec<&(dyn ToSql + Sync)> =
            rows.shared.iter().map(|(_, v)| param(v)).collect();
        values.extend(arrays.iter().map(|(a, _)| *a));
        self.tx.execute(&st, &values).at(self.db)?;
        Ok(())
    }

    fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().at(self.db)
    }
}

impl Inspect for PgTx<'_> {
    fn inspect(&mut self) -> Result<DbState, StoreError> {
        super::open::inspect(&mut self.tx, self.db)
    }
}

/// A row of an answer. Every integer column is a BIGINT; one read into a u32 field that
/// does not fit was not written by perflab.
struct PgRow<'r> {
    row: &'r Row,
    db: &'r Location,
}

impl Cells for PgRow<'_> {
    fn int(&self, i: usize) -> Result<i64, StoreError> {
        self.row.try_get(i).at(self.db)
    }

    fn u32(&self, i: usize, what: &str) -> Result<u32, StoreError> {
        small(self.db, what, self.int(i)?)
    }

    fn text(&self, i: usize) -> Result<String, StoreError> {
        self.row.try_get(i).at(self.db)
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        self.row.try_get(i).at(self.db)
    }
}
