//! The results database (SQLite): versioned schema, runs, plans, measurements.
pub mod model;
pub use model::*;
