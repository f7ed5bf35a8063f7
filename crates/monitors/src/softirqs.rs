//! `softirqs`: per-CPU deltas of every /proc/softirqs vector.

use perflab_core::{Descriptor, KeyMatch, Kind, Needs, ReportHints, RowHints, Wording};
use perflab_core::{MeasureCtx, MonitorError, TelemetryRow, Unit};
use perflab_sys::softirqs::{self, Softirqs};

use crate::counter::{push_per_cpu, read_error};
use crate::snapshot::{Snapshot, SnapshotMonitor};

pub type SoftirqsMonitor = SnapshotMonitor<Softirqs>;

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: "softirqs",
    help: "per-CPU deltas of every /proc/softirqs vector (TIMER, NET_RX, ...), and their totals",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[Wording::new(KeyMatch::Any, "{key} softirqs")],
        ..RowHints::PLAIN
    }),
};

impl Snapshot for Softirqs {
    const NAME: &'static str = "softirqs";

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        softirqs::read(&ctx.sys)
            .map_err(|e| read_error(e, "/proc/softirqs", "mount procfs on /proc"))
    }

    fn deltas(ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        let mut rows = Vec::new();
        for a in &after.rows {
            let b = before.row(&a.name);
            let row = |cpu, value: u64| {
                TelemetryRow::new(Self::NAME, &a.name, "", cpu, value as f64, Unit::Count)
            };
            let then = |cpu| b.and_then(|b| before.count(b, cpu));
            let now = |cpu| after.count(a, cpu);
            push_per_cpu(&mut rows, &ctx.cpus, &after.cpus, (then, now), row);
        }
        rows
    }
}
