//! The results database (SQLite): versioned schema, runs, plans, measurements.
//!
//! One file holds every run. Each measurement is committed on its own as soon as it is
//! recorded (WAL, `synchronous=NORMAL`: a crash of the machine may lose the last few
//! commits, never corrupt the file), so an interrupted run keeps everything it finished and
//! readers (`perflab show`) can look at a run while it is being written.
//!
//! Resume policy: a measurement recorded `Ok` is final and recording its `seq` again is an
//! error; a `Failed` one may be recorded again (a resumed run retries failures) and the new
//! record replaces it. [`Store::pending`] lists what a resume still has to do.

mod codec;
mod error;
mod migrate;
mod open;
mod path;
mod read;
pub mod schema;
mod write;

use std::path::{Path, PathBuf};

pub use error::StoreError;
pub use path::{default_path, default_path_from, sudo_user_from, PasswdEntry, SudoUser};
pub use perflab_core::record::*;

/// An open results database.
pub struct Store {
    conn: rusqlite::Connection,
    path: PathBuf,
}

impl Store {
    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}
