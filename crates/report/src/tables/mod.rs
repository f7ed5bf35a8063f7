//! The report's tables: each a type built from stored records that is a
//! [`crate::section::Section`] (its blocks in every format, its JSON). A table is one file
//! (or a folder, when its text has a file of its own) and one line in the registry of the
//! views that show it ([`crate::views::parts`]).

pub mod blocks;
pub mod compare;
pub mod counters;
pub mod coverage;
pub mod distribution;
pub mod gpu;
pub mod irq_cpu;
pub mod latency;
pub mod lock_wait;
pub mod parallel;
pub mod percentiles;
pub mod scan;
pub mod summary;
pub mod telemetry_ab;
pub mod tool_summary;
