//! PostgreSQL's side of the seam (`crate::sql`): transactions whose statements are
//! prepared once per session, and which insert a whole batch with one statement
//! (`INSERT … SELECT FROM unnest(arrays)`), so a measurement with hundreds of telemetry
//! rows is a handful of round trips to the server, not hundreds.

use postgres::types::{FromSql, ToSql};
use postgres::{IsolationLevel, Row, Statement, Transaction};

use super::statements::{prepare, Prepared};
use super::PgEngine;
use crate::engine::Engine;
use crate::error::{corrupt, PgAt};
use crate::migrate::{DbState, Inspect};
use crate::sql::{Batch, Cells, Column, Dialect, Query, Value, WriteTx};
use crate::{Claim, Location, RunId, StoreError};

/// The advisory lock that serialises schema changes (any bigint: perflab's own number).
const SCHEMA_LOCK: i64 = 0x7065_7266_6c61_6231; // "perflab1"

/// A transaction on the server.
pub(crate) struct PgTx<'c> {
    tx: Transaction<'c>,
    prepared: &'c Prepared,
    db: &'c Location,
}

impl Engine for PgEngine {
    type Tx<'a> = PgTx<'a>;

    fn location(&self) -> &Location {
        &self.location
    }

    /// READ COMMITTED: what must not change under it, the writer locks with
    /// [`Dialect::row_lock`].
    fn begin(&mut self) -> Result<PgTx<'_>, StoreError> {
        let tx = self.client.get_mut().transaction().at(&self.location)?;
        Ok(PgTx {
            tx,
            prepared: &self.prepared,
            db: &self.location,
        })
    }

    /// One REPEATABLE READ, READ ONLY transaction: one snapshot even while another
    /// process records into the run, as SQLite's read transactions give.
    fn snapshot<T>(
        &self,
        read: impl FnOnce(&mut dyn Query) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut client = self.client.borrow_mut();
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .at(&self.location)?;
        let mut tx = PgTx {
            tx,
            prepared: &self.prepared,
            db: &self.location,
        };
        let out = read(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn claim(&self, run: RunId) -> Result<Claim, StoreError> {
        super::claim::take(&self.config, &self.location, run)
    }

    fn is_claimed(&self, run: RunId) -> Result<bool, StoreError> {
        super::claim::held(&self.config, &self.location, run)
    }
}

impl PgEngine {
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

impl Query for PgTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn db(&self) -> &Location {
        self.db
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
}

impl WriteTx for PgTx<'_> {
    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.tx.batch_execute(sql).at(self.db)
    }

    fn execute(&mut self, sql: &str, values: &[Value<'_>]) -> Result<u64, StoreError> {
        let st = self.stmt(sql)?;
        self.tx.execute(&st, &params(values)).at(self.db)
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

/// A row of an answer. Every integer column is a BIGINT; one read into a narrower field
/// that does not fit was not written by perflab.
struct PgRow<'r> {
    row: &'r Row,
    db: &'r Location,
}

impl PgRow<'_> {
    fn get<'a, T: FromSql<'a>>(&'a self, i: usize) -> Result<T, StoreError> {
        self.row.try_get(i).at(self.db)
    }

    fn out_of_range(&self, what: &str, v: i64) -> StoreError {
        corrupt(self.db, format!("{what} {v} is out of range"))
    }
}

impl Cells for PgRow<'_> {
    fn int(&self, i: usize) -> Result<i64, StoreError> {
        self.get(i)
    }

    fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        self.get(i)
    }

    fn u32(&self, i: usize, what: &str) -> Result<u32, StoreError> {
        let v = self.int(i)?;
        u32::try_from(v).map_err(|_| self.out_of_range(what, v))
    }

    fn opt_u32(&self, i: usize, what: &str) -> Result<Option<u32>, StoreError> {
        let Some(v) = self.opt_int(i)? else {
            return Ok(None);
        };
        u32::try_from(v)
            .map(Some)
            .map_err(|_| self.out_of_range(what, v))
    }

    fn i32(&self, i: usize, what: &str) -> Result<i32, StoreError> {
        let v = self.int(i)?;
        i32::try_from(v).map_err(|_| self.out_of_range(what, v))
    }

    fn real(&self, i: usize) -> Result<Option<f64>, StoreError> {
        self.get(i)
    }

    fn text(&self, i: usize) -> Result<String, StoreError> {
        self.get(i)
    }

    fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        self.get(i)
    }

    fn str(&self, i: usize) -> Result<&str, StoreError> {
        self.get(i)
    }

    fn blob(&self, i: usize) -> Result<Vec<u8>, StoreError> {
        self.get(i)
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        self.get(i)
    }
}
