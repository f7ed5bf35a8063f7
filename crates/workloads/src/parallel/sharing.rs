//! Which CPUs several threads had to share: the analysis lives in `perflab-stats`.

pub use perflab_stats::parallel::{shared_cpus, SharedCpu};
