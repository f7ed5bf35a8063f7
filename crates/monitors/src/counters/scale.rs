//! Multiplex scaling. With more hardware events than the PMU has counters, the kernel
//! rotates them: each runs only part of the time it is enabled. Like `perf stat`, the
//! count is extrapolated as value × enabled / running, and the running share is reported
//! so a reader can see how much of a figure is extrapolation.

/// One read of a counter (read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    pub value: u64,
    /// Nanoseconds the event was enabled.
    pub enabled: u64,
    /// Nanoseconds it was actually on a counter.
    pub running: u64,
}

/// A count after scaling, with the times it came from (summed over CPUs for totals).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scaled {
    /// `None` when the event was enabled but never got a counter: its count is unknown,
    /// not 0.
    pub count: Option<f64>,
    pub enabled: u64,
    pub running: u64,
}

impl Reading {
    pub fn scale(&self) -> Scaled {
        let count = if self.running >= self.enabled {
            // Never multiplexed (or never enabled, when both are 0): the value is exact.
            Some(self.value as f64)
        } else if self.running == 0 {
            None
        } else {
            Some(self.value as f64 * (self.enabled as f64 / self.running as f64))
        };
        Scaled {
            count,
            enabled: self.enabled,
            running: self.running,
        }
    }
}

impl Scaled {
    /// The running share in percent, only when the event was multiplexed.
    pub fn running_pct(&self) -> Option<f64> {
        (self.running < self.enabled).then(|| 100.0 * self.running as f64 / self.enabled as f64)
    }

    /// The sum over CPUs: counts add once each is scaled by its own CPU's ratio; the
    /// total is unknown when any part is.
    pub fn sum(parts: &[Scaled]) -> Scaled {
        let mut total = Scaled {
            count: Some(0.0),
            enabled: 0,
            running: 0,
        };
        for p in parts {
            total.count = total.count.zip(p.count).map(|(a, b)| a + b);
            total.enabled = total.enabled.saturating_add(p.enabled);
            total.running = total.running.saturating_add(p.running);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(value: u64, enabled: u64, running: u64) -> Scaled {
        Reading {
            value,
            enabled,
            running,
        }
        .scale()
    }

    #[test]
    fn counts_that_ran_all_the_time_are_exact() {
        let s = r(1234, 1000, 1000);
        assert_eq!(s.count, Some(1234.0));
        assert_eq!(s.running_pct(), None);
        // Both times 0: enabled for no time, the raw value stands.
        assert_eq!(r(0, 0, 0).count, Some(0.0));
        assert_eq!(r(0, 0, 0).running_pct(), None);
    }

    #[test]
    fn multiplexed_counts_are_extrapolated() {
        let s = r(1000, 1000, 250);
        assert_eq!(s.count, Some(4000.0));
        assert_eq!(s.running_pct(), Some(25.0));
        let s = r(3, 3_000_000_000, 1_000_000_000);
        assert_eq!(s.count, Some(9.0));
        assert!((s.running_pct().unwrap() - 100.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn never_scheduled_is_unknown_not_zero() {
        let s = r(0, 5000, 0);
        assert_eq!(s.count, None);
        assert_eq!(s.running_pct(), Some(0.0));
    }

    #[test]
    fn large_values_do_not_overflow() {
        let s = r(u64::MAX, u64::MAX, u64::MAX / 2);
        assert!(s.count.unwrap() > u64::MAX as f64);
    }

    #[test]
    fn totals_scale_each_cpu_by_its_own_ratio() {
        // CPU a ran half the time, CPU b all the time.
        let t = Scaled::sum(&[r(100, 1000, 500), r(50, 1000, 1000)]);
        assert_eq!(t.count, Some(250.0));
        assert_eq!(t.running_pct(), Some(75.0));
        let t = Scaled::sum(&[r(100, 1000, 0), r(50, 1000, 1000)]);
        assert_eq!(t.count, None);
        assert_eq!(Scaled::sum(&[]).count, Some(0.0));
    }
}
