//! Interrupt-driven transfers (`irq=timer`): seed 003 measured a DMA fill whose every
//! completion raised an interrupt, and asked what handling them cost. A CPU fill raises
//! no device interrupt, so alone it cannot answer that; here each transfer instead waits,
//! outside the timed region, for the next expiration of a periodic timerfd armed on the
//! measuring thread's own CPU. Every expiration is an hrtimer interrupt on that CPU (the
//! local APIC timer, `LOC` in /proc/interrupts on x86; `arch_timer` on arm64) that wakes
//! the thread, which then transfers: the fill is paced by interrupts on its CPU, and the
//! interrupts monitor sees them.
//!
//! A timerfd re-arms its period only when read, so an expiration that comes while a
//! transfer runs is one interrupt, not several: the interrupts raised are at most one
//! per wait, and the `timer_expirations` metric counts them as the kernel reports.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use perflab_core::WorkloadError;

use super::timing::Step;

/// The interrupt source of a measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Irq {
    /// None of its own: a CPU transfer raises no device interrupt.
    None,
    /// Each transfer waits for a periodic timerfd expiration (period in ns).
    Timer { period_ns: u64 },
}

impl Irq {
    pub const NAMES: &'static [&'static str] = &["none", "timer"];
}

fn os_error(what: &str) -> WorkloadError {
    WorkloadError::Failed(format!("xfer: {what}: {}", std::io::Error::last_os_error()))
}

/// A step whose every transfer is preceded by a wait for the timer.
pub struct TimerDriven<'a> {
    inner: &'a mut dyn Step,
    fd: OwnedFd,
    /// Reads of the timerfd, one per transfer.
    pub waits: u64,
    /// Expirations the reads reported (more than `waits` when a transfer outlasted the
    /// period: the kernel counts the periods missed, though it raised one interrupt).
    pub expirations: u64,
}

impl<'a> TimerDriven<'a> {
    /// Arms a periodic CLOCK_MONOTONIC timerfd on the calling thread (call it on the
    /// measuring thread, after pinning, so the hrtimer lives on that CPU).
    pub fn new(inner: &'a mut dyn Step, period_ns: u64) -> Result<Self, WorkloadError> {
        // SAFETY: timerfd_create takes no pointers; the result is checked.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(os_error("timerfd_create"));
        }
        // SAFETY: raw is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let ts = libc::timespec {
            tv_sec: (period_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (period_ns % 1_000_000_000) as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: ts,
            it_value: ts,
        };
        // SAFETY: spec lives across the call; a null old value is allowed.
        let rc = unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(os_error("timerfd_settime"));
        }
        Ok(Self {
            inner,
            fd,
            waits: 0,
            expirations: 0,
        })
    }

    /// Blocks until the timer has expired at least once since the last read.
    fn wait(&mut self) -> Result<(), WorkloadError> {
        let mut n = 0u64;
        loop {
            // SAFETY: reads 8 bytes into n, which we own.
            let r = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    (&mut n as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
            if r == 8 {
                break;
            }
            if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(os_error("reading the timerfd"));
        }
        self.waits += 1;
        self.expirations += n;
        Ok(())
    }
}

impl Step for TimerDriven<'_> {
    /// Every transfer follows its own wait, so each is timed alone.
    fn fresh(&self) -> bool {
        true
    }

    fn prepare(&mut self) -> Result<(), WorkloadError> {
        self.wait()?;
        self.inner.prepare()
    }

    fn transfer(&mut self, iteration: u64) -> Result<(), WorkloadError> {
        self.inner.transfer(iteration)
    }

    fn release(&mut self, inspect: bool) -> Result<(), WorkloadError> {
        self.inner.release(inspect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(u64);

    impl Step for Count {
        fn fresh(&self) -> bool {
            false
        }
        fn prepare(&mut self) -> Result<(), WorkloadError> {
            Ok(())
        }
        fn transfer(&mut self, _: u64) -> Result<(), WorkloadError> {
            self.0 += 1;
            Ok(())
        }
        fn release(&mut self, _: bool) -> Result<(), WorkloadError> {
            Ok(())
        }
    }

    #[test]
    fn every_transfer_waits_for_an_expiration() {
        let mut c = Count(0);
        let mut t = TimerDriven::new(&mut c, 100_000).unwrap();
        assert!(t.fresh());
        for i in 0..5 {
            t.prepare().unwrap();
            t.transfer(i).unwrap();
            t.release(false).unwrap();
        }
        assert_eq!(t.waits, 5);
        assert!(t.expirations >= 5, "{}", t.expirations);
        drop(t);
        assert_eq!(c.0, 5);
    }
}
