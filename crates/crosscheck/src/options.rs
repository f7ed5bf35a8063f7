//! What `perflab crosscheck` was asked, and the tolerance a ratio check holds to.

use std::path::PathBuf;

use perflab_sys::SysRoot;

use crate::error::{input, Result};

/// What `perflab crosscheck` was asked, as its flags give it (see the binary's
/// `CrosscheckArgs` for what each means).
#[derive(Clone, Debug)]
pub struct Options {
    /// The check: ctxsw, memcpy (or xfer), netrr, runner, report, monitors.
    pub check: String,
    /// Where /proc and /sys are read (default pairs, monitors).
    pub sys: SysRoot,
    /// `--pairs`, already read; empty for this machine's default pairs.
    pub pairs: Vec<(u32, u32)>,
    pub sizes: Option<String>,
    pub duration: String,
    pub rounds: u32,
    pub tolerance: Option<f64>,
    pub monitor_sets: String,
    pub workloads: String,
    pub monitor_pairs: u32,
    pub max_pairs: u32,
    pub measure: Option<String>,
    /// The `perflab` executable the report check times as a child process.
    pub perflab_exe: PathBuf,
    /// verdicts: families simulated per line of the table.
    pub families: u32,
    /// verdicts: the simulation's seed.
    pub seed: u64,
}

/// The ratio tolerance in percent: `--tolerance`, else the check's stated one (a new
/// check passes its own, e.g. 1.0).
pub(crate) fn tolerance(a: &Options, stated: f64) -> Result<f64> {
    match a.tolerance {
        None => Ok(stated),
        // A ratio more than 100% from 1 holds nothing to anything.
        Some(t) if (0.0..=100.0).contains(&t) => Ok(t),
        Some(t) => Err(input(format!(
            "--tolerance {}: expected a percentage from 0 to 100, e.g. 3 for ±3%",
            perflab_core::limits::number(t)
        ))),
    }
}

/// The buffer sizes of a copy check: `--sizes`, else 64K, 1M, 16M and 256M.
pub(crate) fn copy_sizes(a: &Options) -> Result<Vec<u64>> {
    match &a.sizes {
        Some(text) => text
            .split(',')
            .map(|s| perflab_core::parse_size(s).map_err(input))
            .collect(),
        None => Ok(vec![64 << 10, 1 << 20, 16 << 20, 256 << 20]),
    }
}
