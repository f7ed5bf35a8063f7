//! The schema, as a list of migrations in both dialects. Version 0 is a database holding
//! only `meta`; each migration takes it one version up (`crate::migrate` applies them). A
//! new schema version is a new entry at the end of [`MIGRATIONS`], with its text for each
//! dialect — existing entries never change, because databases in the field were built by
//! them.
//!
//! Conventions shared by all tables:
//! - floats that may be NaN are nullable, because SQLite stores a bound NaN as NULL; the
//!   reader turns NULL back into NaN;
//! - u64 counters are stored as their two's-complement i64 bit pattern, which round-trips
//!   every value losslessly (values above i64::MAX, which no counter reaches in practice,
//!   would look negative to a person reading the table with sqlite3);
//! - enums (units, directions, statuses) are stored as their serde names, the same words
//!   the JSON exports use;
//! - child rows of a measurement carry `idx`, their position in the recorded vector, so
//!   reading them back in key order restores the order the workload produced.

mod postgres;
mod sqlite;

use crate::sql::Dialect;

/// The value of `meta.application` in every perflab database.
pub const APPLICATION: &str = "perflab";

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: u32 = 7;

/// One step up the schema versions.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// The version the database has after this step.
    pub to: u32,
    /// The step in SQLite's SQL.
    pub sqlite: &'static str,
    /// The step in PostgreSQL's; `None` for the versions before PostgreSQL stores, whose
    /// tables a PostgreSQL database gets in its version-5 step.
    pub postgres: Option<&'static str>,
}

impl Migration {
    /// The step in `dialect`'s SQL, if that dialect has one.
    pub(crate) fn sql(&self, dialect: Dialect) -> Option<&'static str> {
        match dialect {
            Dialect::Sqlite => Some(self.sqlite),
            Dialect::Postgres => self.postgres,
        }
    }
}

/// The `meta` table, created before any migration: its rows say whose database this is
/// and which version.
pub(crate) fn meta_table(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => sqlite::META,
        Dialect::Postgres => postgres::META,
    }
}

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        to: 1,
        sqlite: sqlite::V1,
        postgres: None,
    },
    Migration {
        to: 2,
        sqlite: sqlite::V2,
        postgres: None,
    },
    Migration {
        to: 3,
        sqlite: sqlite::V3,
        postgres: None,
    },
    Migration {
        to: 4,
        sqlite: sqlite::V4,
        postgres: None,
    },
    Migration {
        to: 5,
        sqlite: sqlite::V5,
        postgres: Some(postgres::V5),
    },
    Migration {
        to: 6,
        sqlite: sqlite::V6,
        postgres: Some(postgres::V6),
    },
    Migration {
        to: 7,
        sqlite: sqlite::V7,
        postgres: Some(postgres::V7),
    },
];
