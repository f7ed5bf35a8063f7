//! What can go wrong with the results database; every message names the file or run.

use std::path::{Path, PathBuf};

use crate::RunId;

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
        "{} is not a perflab results database ({reason}); it was left untouched \
         (choose another file with PERFLAB_DB or --db)",
        path.display()
    )]
    NotPerflab { path: PathBuf, reason: String },

    #[error(
        "{} uses results schema version {found}, but this perflab understands only up to \
         version {supported}; upgrade perflab to use it (the file was left untouched)",
        path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    #[error("no run {id} in {}", path.display())]
    NoRun { path: PathBuf, id: RunId },

    #[error("run {run} in {} has no planned measurement {seq}", path.display())]
    NotPlanned { path: PathBuf, run: RunId, seq: u32 },

    #[error("measurement {seq} of run {run} does not match its plan: {what}")]
    PlanMismatch { run: RunId, seq: u32, what: String },

    #[error(
        "measurement {seq} of run {run} in {} is already recorded as successful; \
         a finished measurement is never replaced",
        path.display()
    )]
    AlreadyRecorded { path: PathBuf, run: RunId, seq: u32 },

    #[error("invalid plan for a new run: {0}")]
    InvalidPlan(String),

    #[error("cannot encode {what} as JSON: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    #[error("{} holds unreadable data: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },

    #[error("database error in {}: {source}", path.display())]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
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
                | StoreError::NoRun { .. }
        )
    }
}

/// Attaches the database path to SQLite errors.
pub(crate) trait At<T> {
    fn at(self, path: &Path) -> Result<T, StoreError>;
}

impl<T> At<T> for rusqlite::Result<T> {
    fn at(self, path: &Path) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Sql {
            path: path.to_path_buf(),
            source,
        })
    }
}

pub(crate) fn corrupt(path: &Path, what: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        what: what.into(),
    }
}
