//! Helpers shared by the counter monitors.

use perflab_core::{MonitorError, TelemetryRow, Unavailable};
use perflab_sys::SysError;

/// Delta of a kernel counter. /proc/interrupts and /proc/softirqs print 32-bit counters
/// that wrap; a value that went down from within the 32-bit range is taken as one wrap.
/// Any other decrease (a CPU replugged, a counter reset) gives 0 rather than nonsense.
pub(crate) fn delta(before: u64, after: u64) -> u64 {
    if after >= before {
        after - before
    } else if before <= u64::from(u32::MAX) {
        after + (1u64 << 32) - before
    } else {
        0
    }
}

/// Maps a failed read to the monitor error: a missing file means the machine lacks the
/// source (reported once and skipped), anything else is a failure of this measurement.
pub(crate) fn read_error(e: SysError, what: &str, hint: &str) -> MonitorError {
    if e.is_not_found() {
        MonitorError::Unavailable(Unavailable::new(format!("no {what}: {e}")).with_hint(hint))
    } else {
        MonitorError::Failed(e.to_string())
    }
}

pub(crate) fn not_started(name: &str) -> MonitorError {
    MonitorError::Failed(format!(
        "monitor {name}: finish() without a successful start()"
    ))
}

/// Pushes the rows of one per-CPU counter: its delta on each CPU of the measurement that
/// the source has a column for (`columns`), then the total over every column, since
/// totals cover the whole machine. `then` of a row or column absent at start is `None`,
/// and it counts from 0.
pub(crate) fn push_per_cpu(
    rows: &mut Vec<TelemetryRow>,
    measured: &[u32],
    columns: &[u32],
    (then, now): (impl Fn(u32) -> Option<u64>, impl Fn(u32) -> Option<u64>),
    row: impl Fn(Option<u32>, u64) -> TelemetryRow,
) {
    let per_cpu: Vec<(u32, u64)> = columns
        .iter()
        .filter_map(|&cpu| Some((cpu, delta(then(cpu).unwrap_or(0), now(cpu)?))))
        .collect();
    for &cpu in measured {
        if let Some(&(_, d)) = per_cpu.iter().find(|(c, _)| *c == cpu) {
            rows.push(row(Some(cpu), d));
        }
    }
    let total = per_cpu.iter().fold(0u64, |s, (_, d)| s.saturating_add(*d));
    rows.push(row(None, total));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_handle_32_bit_wrap() {
        assert_eq!(delta(5, 9), 4);
        assert_eq!(delta(u64::from(u32::MAX) - 1, 3), 5);
        assert_eq!(delta(1 << 40, 7), 0);
    }
}
