//! Experiments: specs (TOML, presets, CLI), their expansion into a grid, the interleaved
//! plan, the host fingerprint, and the runner with resume.

pub mod adaptive;
pub mod claim;
pub mod error;
pub mod expand;
pub mod fingerprint;
pub mod fit;
pub mod grid_size;
pub mod hugetlb_pool;
pub mod measure;
pub mod memlock;
pub mod plan;
pub mod plan_size;
mod point_fit;
pub mod prepare;
pub mod presets;
pub mod quiet;
pub mod run_options;
pub mod runner;
pub mod secrets;
pub mod spec;
pub mod void;

pub use error::{LabError, Result};
pub use measure::{measure_once, MonitorSet};
pub use perflab_core::Fingerprint;
pub use perflab_core::{Grid, RunSpec};
pub use prepare::{prepare, Prepared};
pub use runner::{
    create, create_with_uid, execute, execute_claimed, Outcome, Progress, RunOptions,
};
pub use spec::ExperimentSpec;
