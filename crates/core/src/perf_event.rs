//! The perf_event_open system call, shared by `doctor`'s probe, the counters monitor (in
//! counting mode, [`open`]) and the trace monitor's BPF backend (a tracepoint event its
//! program hangs on, [`open_attr`] and [`set_bpf`]). The 64-byte first version of
//! perf_event_attr (PERF_ATTR_SIZE_VER0) is accepted by every kernel since 2.6.31 and
//! holds every field these need, so there is no struct-size negotiation.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_TRACEPOINT: u32 = 2;
pub const PERF_TYPE_HW_CACHE: u32 = 3;

/// sample_type PERF_SAMPLE_RAW: a sample carries the tracepoint's record.
pub const SAMPLE_RAW: u64 = 1 << 10;

pub const FLAG_DISABLED: u64 = 1 << 0;
pub const FLAG_INHERIT: u64 = 1 << 1;
pub const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const FLAG_EXCLUDE_HV: u64 = 1 << 6;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// The first 64 bytes of struct perf_event_attr.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Attr {
    pub type_: u32,
    /// Set by [`open_attr`] to this struct's size, whatever it was.
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// Bit field: disabled (bit 0), inherit (bit 1), exclude_kernel (bit 5), exclude_hv (6).
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
}

/// Opens a counting descriptor (close-on-exec, no group): `pid` 0 and `cpu` -1 is the
/// calling thread on any CPU; `pid` -1 and a CPU is everything on that CPU. The errno on
/// failure.
pub fn open(
    type_: u32,
    config: u64,
    read_format: u64,
    flags: u64,
    pid: libc::pid_t,
    cpu: libc::c_int,
) -> Result<OwnedFd, i32> {
    let attr = Attr {
        type_,
        config,
        read_format,
        flags,
        ..Default::default()
    };
    open_attr(&attr, pid, cpu)
}

/// Opens the event `attr` describes (close-on-exec, no group), `pid` and `cpu` as for
/// [`open`]. The errno on failure.
pub fn open_attr(attr: &Attr, pid: libc::pid_t, cpu: libc::c_int) -> Result<OwnedFd, i32> {
    let attr = Attr {
        size: std::mem::size_of::<Attr>() as u32,
        ..*attr
    };
    // SAFETY: attr outlives the call and its size field matches its layout; group_fd -1.
    // Close-on-exec, so workload children that exec do not hold our descriptors.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            pid,
            cpu,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: the kernel just gave us this descriptor and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// PERF_EVENT_IOC_ENABLE: `_IO('$', 0)`.
const IOC_ENABLE: libc::c_ulong = 0x2400;
/// PERF_EVENT_IOC_DISABLE: `_IO('$', 1)`.
const IOC_DISABLE: libc::c_ulong = 0x2401;
/// PERF_EVENT_IOC_SET_BPF: `_IOW('$', 8, __u32)`.
const IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

/// An ioctl whose argument is an integer, on a descriptor we own.
fn ioctl(fd: &OwnedFd, req: libc::c_ulong, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: the perf event requests used here take an integer (or nothing), not a pointer.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Starts an event opened with [`FLAG_DISABLED`].
pub fn enable(fd: &OwnedFd) -> io::Result<()> {
    ioctl(fd, IOC_ENABLE, 0)
}

/// Stops an event (it can be enabled again).
pub fn disable(fd: &OwnedFd) -> io::Result<()> {
    ioctl(fd, IOC_DISABLE, 0)
}

/// Hangs the BPF program `prog` on a tracepoint event: it runs on each hit while the
/// event is enabled.
pub fn set_bpf(fd: &OwnedFd, prog: &impl AsRawFd) -> io::Result<()> {
    ioctl(fd, IOC_SET_BPF, prog.as_raw_fd() as libc::c_ulong)
}

/// read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING: a read gives (value, enabled,
/// running), so a multiplexed count can be scaled.
pub const READ_TIMES: u64 = 1 | 2;

/// Reads a counter opened with [`READ_TIMES`]: (value, nanoseconds enabled, nanoseconds
/// running).
pub fn read_times(fd: &OwnedFd) -> io::Result<[u64; 3]> {
    let mut buf = [0u64; 3];
    // SAFETY: buf is 24 writable bytes owned by this frame.
    let n = unsafe {
        libc::read(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast::<libc::c_void>(),
            std::mem::size_of_val(&buf),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != std::mem::size_of_val(&buf) {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("perf counter read gave {n} bytes, expected 24"),
        ));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_is_the_kernels_first_version() {
        // PERF_ATTR_SIZE_VER0, with the fields at the kernel's offsets.
        assert_eq!(std::mem::size_of::<Attr>(), 64);
        assert_eq!(std::mem::offset_of!(Attr, sample_type), 24);
        assert_eq!(std::mem::offset_of!(Attr, flags), 40);
        assert_eq!(std::mem::offset_of!(Attr, wakeup_events), 48);
        assert_eq!(std::mem::offset_of!(Attr, config1), 56);
    }
}
