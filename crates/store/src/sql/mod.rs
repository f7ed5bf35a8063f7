//! The seam between what the store does with SQL and the backend that runs it.
//!
//! The migration driver (`crate::migrate`) and the measurement writer (`crate::write`)
//! are written once against [`WriteTx`]; each backend supplies only how a transaction
//! starts, runs one statement, hands back rows and inserts a batch of rows. SQL passes
//! through this seam in PostgreSQL's placeholder style (`$1`, `$2`, …), which the SQLite
//! backend turns into its own (`?1`, `?2`, …); the few other places where the dialects'
//! words differ are [`Dialect`]'s.

mod value;

pub(crate) use value::{Batch, Column, Value};

use std::borrow::Cow;

use crate::{Location, StoreError};

/// Which SQL a backend speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// What to append to a `SELECT` that must lock the rows it reads until the
    /// transaction ends. SQLite's write transactions lock the whole file from their start
    /// (`BEGIN IMMEDIATE`), so there it is nothing.
    pub(crate) fn row_lock(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }

    /// "an SQLite database", for messages about a database that is not perflab's.
    pub(crate) fn database(self) -> &'static str {
        match self {
            Dialect::Sqlite => "an SQLite database",
            Dialect::Postgres => "a PostgreSQL database",
        }
    }

    /// `sql` with its placeholders in this dialect's style: `$3` becomes `?3` for SQLite
    /// (the statements this crate writes hold no `$` anywhere else).
    pub(crate) fn text(self, sql: &str) -> Cow<'_, str> {
        match self {
            Dialect::Sqlite if sql.contains('$') => Cow::Owned(sql.replace('$', "?")),
            _ => Cow::Borrowed(sql),
        }
    }
}

/// One row of a query's answer, read by column number. Each backend converts (and names
/// a value out of range) its own way.
pub(crate) trait Cells {
    /// An integer column.
    fn int(&self, i: usize) -> Result<i64, StoreError>;
    /// An integer column that holds a u32 field (`what` names it in an error).
    fn u32(&self, i: usize, what: &str) -> Result<u32, StoreError>;
    fn text(&self, i: usize) -> Result<String, StoreError>;
    /// A boolean (`EXISTS`, a comparison).
    fn flag(&self, i: usize) -> Result<bool, StoreError>;
}

/// An open write transaction of one backend. Dropping it without [`WriteTx::commit`]
/// rolls back everything it did.
pub(crate) trait WriteTx {
    fn dialect(&self) -> Dialect;
    /// The database, for errors.
    fn db(&self) -> &Location;
    /// Runs SQL that may hold several statements and takes no parameters (a schema step).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// Runs one statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError>;
    /// Runs one query, handing each row of its answer to `each` in order.
    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Cells) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
    /// Inserts every row of `rows` (a statement per row, or one for them all).
    fn insert(&mut self, rows: &Batch<'_>) -> Result<(), StoreError>;
    fn commit(self) -> Result<(), StoreError>;

    /// The first row of a query's answer, read by `read`; `None` when there is none.
    fn query_opt<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        read: impl Fn(&dyn Cells) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError>
    where
        Self: Sized,
    {
        let mut first = None;
        self.query(sql, params, &mut |row| {
            if first.is_none() {
                first = Some(read(row)?);
            }
            Ok(())
        })?;
        Ok(first)
    }
}
