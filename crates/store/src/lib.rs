//! The results database (SQLite): versioned schema, runs, plans, measurements.
pub use perflab_core::record::*;
