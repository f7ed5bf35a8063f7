//! The SQLite backend: one file holds every run (the embedded default).

mod claim;
mod health;
mod inspect;
mod open;
mod private;
mod tx;

pub use claim::claims_path;
pub use open::check_file_path;

use std::path::{Path, PathBuf};

use crate::Location;

/// A connection to the file. The store's one `Backend` (`crate::engine`) runs on it
/// through its `Engine` (tx.rs).
pub(crate) struct SqliteEngine {
    conn: rusqlite::Connection,
    path: PathBuf,
    location: Location,
    /// What the health check found when the file was opened (`crate::health`).
    pub(crate) health: crate::health::Health,
}

impl SqliteEngine {
    pub(crate) fn new(conn: rusqlite::Connection, path: &Path) -> SqliteEngine {
        SqliteEngine {
            conn,
            path: path.to_path_buf(),
            location: Location::Sqlite(path.to_path_buf()),
            health: Default::default(),
        }
    }
}
