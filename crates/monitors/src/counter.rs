//! Helpers shared by the counter monitors.

use perflab_core::{MonitorError, Unavailable};
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
