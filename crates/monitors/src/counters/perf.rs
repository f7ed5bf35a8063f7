//! The perf_event_open system call, one counting descriptor per (event, target).
//!
//! Raw syscall rather than a crate: the monitor needs only counting mode (no sampling,
//! no ring buffer), and the 64-byte first version of perf_event_attr is accepted by every
//! kernel since 2.6.31, so there is no struct-size negotiation to get wrong.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::scale::Reading;

use perflab_sys::perf_event::{FLAG_DISABLED, FLAG_EXCLUDE_HV, FLAG_EXCLUDE_KERNEL, FLAG_INHERIT};
pub(crate) use perflab_sys::perf_event::{
    PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_SOFTWARE,
};

use perflab_sys::perf_event::READ_TIMES as READ_FORMAT;

const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;

/// What one descriptor counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The calling thread and, through `inherit`, every thread and process it creates
    /// after the open.
    ThisThreadAndChildren,
    /// Everything that runs on one CPU (system-wide on it).
    Cpu(u32),
}

/// Whether the count includes kernel mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Modes {
    UserAndKernel,
    /// As perf's `:u` modifier (what perf_event_paranoid=2 allows an unprivileged user).
    UserOnly,
}

/// An open counter; closed on drop.
#[derive(Debug)]
pub(crate) struct EventFd(OwnedFd);

/// The flag bits `modes` adds to perf_event_attr.
pub(crate) fn mode_flags(modes: Modes) -> u64 {
    match modes {
        Modes::UserAndKernel => 0,
        Modes::UserOnly => FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
    }
}

/// Opens a disabled counter; the errno on failure.
pub(crate) fn open(
    (type_, config): (u32, u64),
    target: Target,
    modes: Modes,
) -> Result<EventFd, i32> {
    let mut flags = FLAG_DISABLED | mode_flags(modes);
    let (pid, cpu) = match target {
        Target::ThisThreadAndChildren => {
            flags |= FLAG_INHERIT;
            (0, -1)
        }
        // The kernel refuses `inherit` for CPU-wide counters, and has no task to inherit from.
        Target::Cpu(c) => (-1, c as libc::c_int),
    };
    perflab_sys::perf_event::open(type_, config, READ_FORMAT, flags, pid, cpu).map(EventFd)
}

impl EventFd {
    fn ioctl(&self, request: libc::c_ulong) -> io::Result<()> {
        // SAFETY: the descriptor is open; ENABLE/DISABLE take an integer argument (0: this
        // event only; its inherited children follow it in the kernel).
        let r = unsafe { libc::ioctl(self.0.as_raw_fd(), request as _, 0) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub(crate) fn enable(&self) -> io::Result<()> {
        self.ioctl(IOC_ENABLE)
    }

    pub(crate) fn disable(&self) -> io::Result<()> {
        self.ioctl(IOC_DISABLE)
    }

    /// The count with its enabled and running times, children included (the kernel adds
    /// the counts of live and exited inherited children to the parent's read).
    pub(crate) fn read(&self) -> io::Result<Reading> {
        let [value, enabled, running] = perflab_sys::perf_event::read_times(&self.0)?;
        Ok(Reading {
            value,
            enabled,
            running,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTEXT_SWITCHES: (u32, u64) = (PERF_TYPE_SOFTWARE, 3);

    /// Sleeps in short steps: each sleep is a context switch made in kernel mode.
    fn switch_a_lot() {
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    fn count_switches(modes: Modes) -> Option<Reading> {
        let fd = open(CONTEXT_SWITCHES, Target::ThisThreadAndChildren, modes).ok()?;
        fd.enable().ok()?;
        switch_a_lot();
        fd.disable().ok()?;
        fd.read().ok()
    }

    /// Why the monitor drops context-switches and cpu-migrations in user-only mode: the
    /// kernel records them with kernel-mode registers, so `exclude_kernel` filters every
    /// one out and the count would be a false 0.
    #[test]
    fn context_switches_read_zero_when_kernel_excluded() {
        let Some(user) = count_switches(Modes::UserOnly) else {
            perflab_testkit::skip("perf-events", "software perf events do not open here");
            return;
        };
        assert_eq!(user.value, 0, "{user:?}");
        match count_switches(Modes::UserAndKernel) {
            Some(all) => assert!(all.value >= 50, "{all:?}"),
            None => perflab_testkit::skip(
                "perf-events-kernel",
                "kernel-mode counting denied here; only user-only was checked",
            ),
        }
    }

    #[test]
    fn reads_report_enabled_and_running_time() {
        let task_clock = (PERF_TYPE_SOFTWARE, 1);
        let Ok(fd) = open(task_clock, Target::ThisThreadAndChildren, Modes::UserOnly) else {
            perflab_testkit::skip("perf-events", "software perf events do not open here");
            return;
        };
        let idle = fd.read().unwrap();
        assert_eq!((idle.value, idle.enabled), (0, 0), "opened disabled");
        fd.enable().unwrap();
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 20 {
            std::hint::black_box(0u64);
        }
        fd.disable().unwrap();
        let r = fd.read().unwrap();
        assert!(
            r.value > 0 && r.enabled > 0 && r.running == r.enabled,
            "{r:?}"
        );
    }
}
