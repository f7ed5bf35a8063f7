//! `--quiet-machine`: wait for the measured CPUs to be quiet before measuring, as a careful
//! person does by hand (watch `top` until the build next door has finished), bounded: the
//! run waits at most its budget in all, then measures on, and the measurements that other
//! work disturbs are marked as they always are.
//!
//! Quiet means what a measurement is held to: over one window of [`WINDOW`], other work
//! took at most the run's disturbed share of the CPUs (the `disturbance` monitor's rule,
//! 10 % unless the run says otherwise).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use perflab_monitors::disturbance::{Disturbance, Reading};
use perflab_sys::SysRoot;

/// How long the CPUs must stay quiet.
pub const WINDOW: Duration = Duration::from_secs(1);

/// What is left of a run's quiet-machine budget.
#[derive(Debug)]
pub struct QuietBudget {
    left: Duration,
    given: Duration,
    /// Quiet: other work at most this share of the CPUs, %.
    above_pct: f64,
}

/// How a wait ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Waited {
    /// The CPUs were quiet after this long (one window at least).
    Quiet { after: Duration, share_pct: f64 },
    /// The budget ran out with other work still above the threshold.
    GaveUp { share_pct: f64 },
    /// Stopped (Ctrl-C) or the CPUs could not be read.
    Stopped,
}

impl QuietBudget {
    pub fn new(seconds: f64, above_pct: f64) -> Self {
        let given = Duration::from_secs_f64(seconds.max(0.0));
        Self {
            left: given,
            given,
            above_pct,
        }
    }

    /// Nothing left to wait with.
    pub fn spent(&self) -> bool {
        self.left.is_zero()
    }

    /// Watches windows (`window` reads one: the CPUs over [`WINDOW`], `None` when stopped
    /// or unreadable) until one is quiet or the budget is spent. Each window costs the
    /// budget one [`WINDOW`].
    pub fn wait(&mut self, window: &mut dyn FnMut() -> Option<Disturbance>) -> Waited {
        let mut after = Duration::ZERO;
        loop {
            let Some(d) = window() else {
                return Waited::Stopped;
            };
            after += WINDOW;
            self.left = self.left.saturating_sub(WINDOW);
            if d.judge(self.above_pct).is_none() {
                return Waited::Quiet {
                    after,
                    share_pct: d.share_pct(),
                };
            }
            if self.spent() {
                return Waited::GaveUp {
                    share_pct: d.share_pct(),
                };
            }
        }
    }

    /// The line that says how a wait on `cpus` ended.
    pub fn say(&self, cpus: &str, waited: &Waited) -> Option<String> {
        let given = self.given.as_secs_f64();
        let above = self.above_pct;
        match waited {
            Waited::Quiet { after, share_pct } if *after <= WINDOW + WINDOW / 2 => Some(format!(
                "quiet machine: {cpus} quiet (other work {share_pct:.0}% over {:.1} s)",
                after.as_secs_f64()
            )),
            Waited::Quiet { after, share_pct } => Some(format!(
                "quiet machine: waited {:.1} s for {cpus} to be quiet (other work at most \
                 {above:.0}% over 1 s; now {share_pct:.0}%)",
                after.as_secs_f64()
            )),
            Waited::GaveUp { share_pct } => Some(format!(
                "quiet machine: gave up after {given:.0} s in all: other work still took \
                 {share_pct:.0}% of {cpus}; measuring on without waiting again, and \
                 measurements above {above:.0}% are marked disturbed"
            )),
            Waited::Stopped => None,
        }
    }
}

/// One window of `cpus` on the machine: `None` when stopped (checked every tenth of it) or
/// when /proc/stat cannot be read (nothing could be seen to wait for).
pub fn host_window(sys: &SysRoot, cpus: &[u32], stop: &AtomicBool) -> Option<Disturbance> {
    let before = Reading::take(sys).ok()?;
    for _ in 0..10 {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        std::thread::sleep(WINDOW / 10);
    }
    let after = Reading::take(sys).ok()?;
    Some(Disturbance::between(
        cpus,
        &before,
        &after,
        perflab_monitors::cpu_time::user_hz(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(share: f64) -> Disturbance {
        Disturbance {
            cpus: vec![0],
            capacity_ms: 1000.0,
            other_work_ms: share * 10.0,
            study_ms: 0.0,
            steal_ms: 0.0,
            granularity_ms: 40.0,
            cpu_pressure_pct: None,
            procs_running: None,
        }
    }

    /// Busy, busy, quiet: three windows waited, and the line says so.
    #[test]
    fn waits_until_a_window_is_quiet() {
        let mut shares = [60.0, 30.0, 2.0].into_iter();
        let mut budget = QuietBudget::new(60.0, 10.0);
        let w = budget.wait(&mut || shares.next().map(window));
        assert_eq!(
            w,
            Waited::Quiet {
                after: Duration::from_secs(3),
                share_pct: 2.0
            }
        );
        assert!(!budget.spent());
        assert_eq!(
            budget.say("CPU 0", &w).unwrap(),
            "quiet machine: waited 3.0 s for CPU 0 to be quiet (other work at most 10% \
             over 1 s; now 2%)"
        );
        let at_once = budget.wait(&mut || Some(window(0.0)));
        assert_eq!(
            budget.say("CPU 0", &at_once).unwrap(),
            "quiet machine: CPU 0 quiet (other work 0% over 1.0 s)"
        );
    }

    /// A machine that stays busy: the budget is spent, the wait gives up saying so, and
    /// a stopped wait says nothing.
    #[test]
    fn gives_up_when_the_budget_is_spent() {
        let mut budget = QuietBudget::new(3.0, 10.0);
        let mut windows = 0;
        let w = budget.wait(&mut || {
            windows += 1;
            Some(window(55.0))
        });
        assert_eq!(
            (w.clone(), windows),
            (Waited::GaveUp { share_pct: 55.0 }, 3)
        );
        assert!(budget.spent());
        assert!(budget.say("CPU 0", &w).unwrap().starts_with(
            "quiet machine: gave up after 3 s in all: other work still took 55% of CPU 0"
        ));
        assert_eq!(budget.say("CPU 0", &Waited::Stopped), None);
        assert_eq!(
            QuietBudget::new(5.0, 10.0).wait(&mut || None),
            Waited::Stopped
        );
    }
}
