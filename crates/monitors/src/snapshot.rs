//! The monitor shape shared by the counter sources (/proc/interrupts, /proc/softirqs,
//! /proc/stat): read the whole source at `start`, read it again at `finish`, report the
//! difference.

use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow};

use crate::counter::not_started;

/// A counter source read whole at both ends of a measurement.
pub trait Snapshot: Sized + Send {
    /// The monitor's name, also the `source` of its rows.
    const NAME: &'static str;

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError>;

    /// The rows for what changed between the two reads.
    fn deltas(ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow>;
}

/// A monitor over a [`Snapshot`] source.
#[derive(Debug)]
pub struct SnapshotMonitor<S> {
    before: Option<S>,
}

impl<S> Default for SnapshotMonitor<S> {
    fn default() -> Self {
        Self { before: None }
    }
}

impl<S: Snapshot> Monitor for SnapshotMonitor<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError> {
        // A failed restart must not leave the previous start's snapshot behind.
        self.before = None;
        self.before = Some(S::read(ctx)?);
        Ok(())
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let before = self.before.take().ok_or_else(|| not_started(S::NAME))?;
        let after = S::read(ctx)?;
        Ok(S::deltas(ctx, &before, &after))
    }
}
