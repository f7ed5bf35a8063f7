//! The seam between what the store does with SQL and the backend that runs it.
//!
//! The migration driver (`crate::migrate`), the writer (`crate::write`) and the reader
//! (`crate::read`) are written once against [`Query`] and [`WriteTx`]; each backend
//! supplies only how a transaction starts, runs one statement, hands back rows and
//! inserts a batch of rows (`crate::engine::Engine`). SQL passes through this seam in
//! PostgreSQL's placeholder style (`$1`, `$2`, …), which the SQLite backend turns into
//! its own (`?1`, `?2`, …); the few other places where the dialects' words differ are
//! [`Dialect`]'s, and the schema's text is each dialect's own (`crate::schema`).

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
    fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError>;
    /// An integer column that holds a u32 field (`what` names it in an error).
    fn u32(&self, i: usize, what: &str) -> Result<u32, StoreError>;
    fn opt_u32(&self, i: usize, what: &str) -> Result<Option<u32>, StoreError>;
    fn i32(&self, i: usize, what: &str) -> Result<i32, StoreError>;
    /// A float column; NULL where SQLite stored a NaN.
    fn real(&self, i: usize) -> Result<Option<f64>, StoreError>;
    fn text(&self, i: usize) -> Result<String, StoreError>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError>;
    /// A text column borrowed from the row, not copied (a unit's name, decoded at once).
    fn str(&self, i: usize) -> Result<&str, StoreError>;
    fn blob(&self, i: usize) -> Result<Vec<u8>, StoreError>;
    /// A boolean (`EXISTS`, a comparison).
    fn flag(&self, i: usize) -> Result<bool, StoreError>;
}

/// An open transaction of one backend, reading or writing. Dropping it without
/// [`WriteTx::commit`] rolls back everything it did.
pub(crate) trait Query {
    fn dialect(&self) -> Dialect;
    /// The database, for errors.
    fn db(&self) -> &Location;
    /// Runs one query, handing each row of its answer to `each` in order.
    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Cells) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
}

/// What every [`Query`] can do with its one method, a trait object as well.
pub(crate) trait QueryExt: Query {
    /// The first row of a query's answer, read by `read`; `None` when there is none (for
    /// queries of one row at most).
    fn query_opt<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        read: impl Fn(&dyn Cells) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        Ok(self.query_all(sql, params, read)?.into_iter().next())
    }

    /// Every row of a query's answer, each read by `read`.
    fn query_all<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        read: impl Fn(&dyn Cells) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut all = Vec::new();
        self.query(sql, params, &mut |row| {
            all.push(read(row)?);
            Ok(())
        })?;
        Ok(all)
    }
}

impl<Q: Query + ?Sized> QueryExt for Q {}

/// An open write transaction.
pub(crate) trait WriteTx: Query {
    /// Runs SQL that may hold several statements and takes no parameters (a schema step).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// Runs one statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError>;
    /// Inserts every row of `rows` (a statement per row, or one for them all).
    fn insert(&mut self, rows: &Batch<'_>) -> Result<(), StoreError>;
    fn commit(self) -> Result<(), StoreError>;
}
