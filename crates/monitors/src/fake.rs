//! `fake`: a deterministic monitor for end-to-end tests of the CLI and the store. Its
//! rows are fixed numbers, never readings of the machine.

use perflab_core::{Descriptor, Kind, Needs, ReportHints, RowHints};
use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unit};

use crate::counter::not_started;

const NAME: &str = "fake";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "deterministic rows for end-to-end tests (fixed numbers, never readings)",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints::PLAIN),
};

#[derive(Debug, Default)]
pub struct FakeMonitor {
    started: bool,
}

impl Monitor for FakeMonitor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn start(&mut self, _ctx: &MeasureCtx) -> Result<(), MonitorError> {
        self.started = true;
        Ok(())
    }

    /// One `events` row per CPU of the measurement with value cpu + 1, and a total of 42.
    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        if !std::mem::take(&mut self.started) {
            return Err(not_started(NAME));
        }
        let label = "fake events";
        let mut rows: Vec<TelemetryRow> = ctx
            .cpus
            .iter()
            .map(|&c| {
                TelemetryRow::new(
                    NAME,
                    "events",
                    label,
                    Some(c),
                    f64::from(c) + 1.0,
                    Unit::Count,
                )
            })
            .collect();
        rows.push(TelemetryRow::new(
            NAME,
            "events",
            label,
            None,
            42.0,
            Unit::Count,
        ));
        Ok(rows)
    }
}
