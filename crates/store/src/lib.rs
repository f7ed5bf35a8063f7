//! The results database: versioned schema, runs, plans, measurements — in an SQLite file
//! (the embedded default) or on a PostgreSQL server (a store a team shares).
//!
//! Each measurement is committed on its own as soon as it is recorded, so an interrupted
//! run keeps everything it finished and readers (`perflab show`) can look at a run while
//! it is being written. In SQLite (WAL, `synchronous=NORMAL`) a crash of the machine may
//! lose the last few commits, never corrupt the file.
//!
//! Resume policy: a measurement recorded `Ok` is final and recording its `seq` again is an
//! error; a `Failed` one may be recorded again (a resumed run retries failures) and the new
//! record replaces it. [`Store::pending`] lists what a resume still has to do.
//!
//! Every run has a `uid` as well as its number: the number is this database's, the uid
//! goes with the run when [`copy_run`] (`perflab push`) or an import copies it elsewhere.

mod assemble;
mod backend;
mod codec;
mod copy;
mod decoded;
mod engine;
mod error;
mod health;
mod location;
mod migrate;
mod path;
mod pg;
mod read;
mod rules;
pub mod schema;
mod sql;
mod sqlite;
mod store;
mod uid;
mod write;

pub use assemble::TelemetryFilter;
pub use backend::{Backend, Claim};
pub use copy::{
    copy_parts, copy_records, copy_run, ensure_run, ensure_run_streamed, settle_run, CopyReport,
    RecordCopier,
};
pub use error::StoreError;
pub use health::Health;
pub use location::Location;
pub use path::{
    data_dir_from, default_path, default_path_from, sudo_user_from, PasswdEntry, SudoUser,
};
pub use perflab_core::record::*;
pub use read::ReadableRuns;
pub use sqlite::{check_file_path, claims_path};
pub use store::Store;
pub use uid::new_uid;
