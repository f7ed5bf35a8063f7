//! What can go wrong with the results database; every message names the database (a
//! PostgreSQL URL without its password) or the run.

use std::path::{Path, PathBuf};

use crate::{Location, RunId};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no results database at {} (run `perflab run` first)", path.display())]
    Missing { path: PathBuf },

    #[error("cannot create the directory {} for the results database: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{db} is not a perflab results database ({reason}); it was left untouched \
         (choose another database with PERFLAB_DB or --db)"
    )]
    NotPerflab { db: Location, reason: String },

    #[error(
        "results database {} is a directory; give a file in it, e.g. {}",
        path.display(),
        path.join("results.db").display()
    )]
    IsDirectory { path: PathBuf },

    /// Only the scheme is kept: the rest of a URL may hold a password.
    #[error(
        "results database {scheme}://…: {scheme}:// is not a supported database (use an \
         SQLite file path or a postgres:// URL)"
    )]
    UnsupportedScheme { scheme: String },

    /// A name SQLite takes for a database in memory (`:memory:`, `file::memory:`): it
    /// would take the results and keep none of them.
    #[error(
        "results database {} is a database in memory, which keeps nothing once perflab \
         exits; give a file path (or a postgres:// URL)",
        path.display()
    )]
    InMemory { path: PathBuf },

    /// A symbolic link whose target cannot be a database: perflab creates no directory
    /// at the far end of a link.
    #[error(
        "results database {} is a symbolic link to {}, whose directory does not exist; \
         create it, or give another --db",
        path.display(),
        target.display()
    )]
    DanglingLink { path: PathBuf, target: PathBuf },

    /// What the health check (`crate::health`) found, refusing a write.
    #[error(
        "results database {db} is damaged ({reason}); nothing was written to it: use a \
         backup or another --db (of an SQLite file, `sqlite3 FILE .recover` may save what \
         it holds)"
    )]
    Damaged { db: Location, reason: String },

    #[error(
        "{db} uses results schema version {found}, but this perflab understands only up to \
         version {supported}; upgrade perflab to use it (the database was left untouched)"
    )]
    NewerSchema {
        db: Location,
        found: u32,
        supported: u32,
    },

    #[error(
        "{} uses results schema version {found}, older than this perflab's {supported}, and \
         cannot be upgraded because it is read-only; copy it somewhere writable and use the \
         copy to upgrade it",
        path.display()
    )]
    ReadOnlyOld {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    #[error(
        "{} is read-only: perflab can read it (ls, show, report, export, compare) but not \
         record into it; choose a writable database with --db or PERFLAB_DB",
        path.display()
    )]
    ReadOnly { path: PathBuf },

    #[error("no run {id} in {db}")]
    NoRun { db: Location, id: RunId },

    #[error("run {run} in {db} has no planned measurement {seq}")]
    NotPlanned { db: Location, run: RunId, seq: u32 },

    #[error("measurement {seq} of run {run} does not match its plan: {what}")]
    PlanMismatch { run: RunId, seq: u32, what: String },

    #[error(
        "measurement {seq} of run {run} in {db} is already recorded as successful; \
         a finished measurement is never replaced"
    )]
    AlreadyRecorded { db: Location, run: RunId, seq: u32 },

    #[error(
        "{db} already holds a run with uid {uid} (run {existing}); a copy adds to that run \
         instead of creating another"
    )]
    DuplicateUid {
        db: Location,
        uid: String,
        existing: RunId,
    },

    #[error("invalid plan for a new run: {0}")]
    InvalidPlan(String),

    #[error("cannot encode {what} as JSON: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    #[error("{db} holds unreadable data: {what}")]
    Corrupt { db: Location, what: String },

    #[error("database error in {db}: {source}")]
    Sql {
        db: Location,
        #[source]
        source: rusqlite::Error,
    },

    /// Reaching the server failed: refused, no such host, authentication, no such
    /// database. The reason is the server's or the client library's words.
    #[error("cannot connect to the results database {db}: {reason}")]
    Connect { db: Location, reason: String },

    #[error("database error in {db}: {reason}")]
    Postgres {
        db: Location,
        /// The error with its causes, on one line (the client library's own text says
        /// only "db error").
        reason: String,
        #[source]
        source: postgres::Error,
    },

    #[error(
        "run {run} is being measured by another perflab process; \
         wait for it to finish or stop it, then resume"
    )]
    Claimed { db: Location, run: RunId },

    #[error("{db}: cannot claim run {run}: {reason}")]
    Claim {
        db: Location,
        run: RunId,
        reason: String,
    },

    /// A reader's own error that stopped a [`crate::Store::visit_measurements`] (a
    /// write to a full disk while exporting); the reader takes it back out.
    #[error("{0}")]
    Visitor(Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// Whether the person running perflab can fix this by what they type (a path, a run
    /// number, a newer perflab), as opposed to a fault in perflab or the file system.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            StoreError::Missing { .. }
                | StoreError::CreateDir { .. }
                | StoreError::NotPerflab { .. }
                | StoreError::NewerSchema { .. }
                | StoreError::Damaged { .. }
                | StoreError::IsDirectory { .. }
                | StoreError::UnsupportedScheme { .. }
                | StoreError::InMemory { .. }
                | StoreError::DanglingLink { .. }
                | StoreError::NoRun { .. }
                | StoreError::ReadOnly { .. }
                | StoreError::ReadOnlyOld { .. }
                | StoreError::Connect { .. }
                | StoreError::Claimed { .. }
        )
    }
}

/// Attaches the database file to SQLite errors.
pub(crate) trait At<T> {
    fn at(self, path: &Path) -> Result<T, StoreError>;
}

impl<T> At<T> for rusqlite::Result<T> {
    fn at(self, path: &Path) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Sql {
            db: path.into(),
            source,
        })
    }
}

/// Attaches the (redacted) server location to PostgreSQL errors.
pub(crate) trait PgAt<T> {
    fn at(self, db: &Location) -> Result<T, StoreError>;
}

impl<T> PgAt<T> for Result<T, postgres::Error> {
    fn at(self, db: &Location) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Postgres {
            db: db.clone(),
            reason: pg_text(&source),
            source,
        })
    }
}

/// A PostgreSQL error and its causes on one line: "db error: ERROR: relation … (DETAIL: …)".
pub(crate) fn pg_text(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text.replace('\n', "; ")
}

pub(crate) fn corrupt(db: impl Into<Location>, what: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        db: db.into(),
        what: what.into(),
    }
}
