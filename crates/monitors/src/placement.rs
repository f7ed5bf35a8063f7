//! `placement`: where the workload's threads ran, from the records the threads kept
//! themselves (ThreadProbe samples sched_getcpu while it runs).

use perflab_core::{Descriptor, KeyMatch, Kind, Needs, NoCpu, ReportHints, RowHints, Wording};
use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unit};

const NAME: &str = "placement";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "where the workload's threads ran: samples seen on each CPU per thread role, and \
           each role's migrations",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Suffix(":migrations"), "{head} migrations"),
            Wording::new(KeyMatch::Any, "{key} thread seen"),
        ],
        // Per-thread figures have no CPU by nature.
        no_cpu: NoCpu::Unattached,
        ..RowHints::PLAIN
    }),
};

/// Reports `ctx.threads` at finish; it keeps no state, so `start` snapshots nothing.
#[derive(Debug, Default)]
pub struct PlacementMonitor;

impl Monitor for PlacementMonitor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn start(&mut self, _ctx: &MeasureCtx) -> Result<(), MonitorError> {
        Ok(())
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let mut rows = Vec::new();
        for rec in ctx.threads.snapshot() {
            let label = format!("tid {}", rec.tid);
            for &(cpu, samples) in &rec.cpu_samples {
                rows.push(TelemetryRow::new(
                    NAME,
                    &rec.role,
                    &label,
                    Some(cpu),
                    samples as f64,
                    Unit::Count,
                ));
            }
            if let Some(m) = rec.migrations {
                rows.push(TelemetryRow::new(
                    NAME,
                    format!("{}:migrations", rec.role),
                    &label,
                    None,
                    m as f64,
                    Unit::Count,
                ));
            }
        }
        Ok(rows)
    }
}
