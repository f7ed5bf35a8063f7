//! The perf_event_open system call in counting mode, shared by `doctor`'s probe and the
//! counters monitor. The 64-byte first version of perf_event_attr (PERF_ATTR_SIZE_VER0)
//! is accepted by every kernel since 2.6.31, so there is no struct-size negotiation.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_HW_CACHE: u32 = 3;

pub const FLAG_DISABLED: u64 = 1 << 0;
pub const FLAG_INHERIT: u64 = 1 << 1;
pub const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub const FLAG_EXCLUDE_HV: u64 = 1 << 6;

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// The first 64 bytes of struct perf_event_attr.
#[repr(C)]
#[derive(Default)]
struct AttrV0 {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// Bit field: disabled (bit 0), inherit (bit 1), exclude_kernel (bit 5), exclude_hv (6).
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
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
    let attr = AttrV0 {
        type_,
        size: std::mem::size_of::<AttrV0>() as u32,
        config,
        read_format,
        flags,
        ..Default::default()
    };
    // SAFETY: attr outlives the call and its size field matches its layout; group_fd -1.
    // Close-on-exec, so workload children that exec do not hold our descriptors.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const AttrV0,
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

/// Starts a counter opened with [`FLAG_DISABLED`].
pub fn enable(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: an argument-less ioctl on a descriptor we own.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), IOC_ENABLE as _, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
