//! What a run is given by its caller: where it runs, and who watches it. Apart from the
//! runner so that one measurement (`measure.rs`) needs them without importing the runner.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use perflab_store::{MeasurementRecord, RunId};
use perflab_sys::SysRoot;

/// Where and how a run executes.
pub struct RunOptions {
    pub sys: SysRoot,
    pub journal: PathBuf,
    pub stop: Arc<AtomicBool>,
    pub label: Option<String>,
}

/// What the runner tells the person watching.
pub trait Progress {
    fn begin(&mut self, run: RunId, total: u64, done: u64);
    fn measured(&mut self, rec: &MeasurementRecord);
    fn note(&mut self, message: &str);
    fn end(&mut self);
}

/// Seconds since the epoch, as the store keeps times.
pub fn now_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
