//! `cpu_time`: where CPU time went during the measurement, from /proc/stat.

use perflab_core::{Descriptor, KeyMatch, Kind, Needs, ReportHints, RowHints, Wording};
use perflab_core::{MeasureCtx, MonitorError, TelemetryRow, Unit};
use perflab_sys::procstat::{self, CpuTimes, ProcStat};

use crate::counter::read_error;
use crate::snapshot::{Snapshot, SnapshotMonitor};

const NAME: &str = "cpu_time";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "per-CPU time in user, nice, system, idle, iowait, irq, softirq and steal (ms), \
           from /proc/stat",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[Wording::new(KeyMatch::Any, "{key} time")],
        ..RowHints::PLAIN
    }),
};
/// The fields reported; guest time is already inside user, so it is left out.
const KEYS: [&str; 8] = [
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
];

pub type CpuTimeMonitor = SnapshotMonitor<ProcStat>;

/// USER_HZ, the unit of /proc/stat; 100 on every mainstream architecture.
pub fn user_hz() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as u64
    } else {
        100
    }
}

fn push(
    rows: &mut Vec<TelemetryRow>,
    cpu: Option<u32>,
    before: &CpuTimes,
    after: &CpuTimes,
    hz: u64,
) {
    for key in KEYS {
        let (Some(b), Some(a)) = (before.get(key), after.get(key)) else {
            continue;
        };
        let ms = a.saturating_sub(b) as f64 * 1000.0 / hz as f64;
        rows.push(TelemetryRow::new(
            NAME,
            key,
            "",
            cpu,
            ms,
            Unit::Milliseconds,
        ));
    }
}

impl Snapshot for ProcStat {
    const NAME: &'static str = NAME;

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        procstat::read(&ctx.sys).map_err(|e| read_error(e, "/proc/stat", "mount procfs on /proc"))
    }

    fn deltas(ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        let hz = user_hz();
        let mut rows = Vec::new();
        for &cpu in &ctx.cpus {
            // A CPU offline at either end has no interval to report.
            if let (Some(b), Some(a)) = (before.cpu(cpu), after.cpu(cpu)) {
                push(&mut rows, Some(cpu), b, a, hz);
            }
        }
        push(&mut rows, None, &before.total, &after.total, hz);
        rows
    }
}
