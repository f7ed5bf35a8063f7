//! The `bpf()` and `perf_event_open()` system calls the backend needs, each object an
//! `OwnedFd`: a map, a program and an attachment live exactly as long as their fd. Nothing
//! is pinned, so when perflab exits — normally, on an error, or killed by SIGKILL — the
//! kernel closes the fds, detaches the programs and frees the maps; `perflab restore`
//! has nothing to sweep.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use perflab_core::perf_event;

use super::insn::{bytes, Insn};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;
pub const BPF_MAP_TYPE_HASH: u32 = 1;
pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
const BPF_PROG_TYPE_TRACEPOINT: u32 = 5;
const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
const BPF_PROG_TYPE_TRACING: u32 = 26;
const BPF_TRACE_RAW_TP: u32 = 23;
const BPF_TRACE_FEXIT: u32 = 25;

/// `union bpf_attr` for BPF_MAP_CREATE (the fields up to `map_name`).
#[repr(C)]
#[derive(Default)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// `union bpf_attr` for BPF_MAP_*_ELEM.
#[repr(C)]
struct Elem {
    map_fd: u32,
    pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// `union bpf_attr` for BPF_PROG_LOAD (the fields up to `attach_prog_fd`, the last a
/// tracing program needs; 4.x kernels take the shorter prefix when the rest is zero).
#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
    prog_btf_fd: u32,
    func_info_rec_size: u32,
    func_info: u64,
    func_info_cnt: u32,
    line_info_rec_size: u32,
    line_info: u64,
    line_info_cnt: u32,
    attach_btf_id: u32,
    attach_prog_fd: u32,
    core_relo_cnt: u32,
}

/// `union bpf_attr` for BPF_RAW_TRACEPOINT_OPEN.
#[repr(C)]
struct RawOpen {
    name: u64,
    prog_fd: u32,
    pad: u32,
}

fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a live, initialised #[repr(C)] prefix of `union bpf_attr` whose
    // size we pass; the kernel reads (and for some commands writes) only those bytes, and
    // every pointer inside it points to memory that outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut T as *mut libc::c_void,
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: the kernel just returned this fd to us and nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

fn name16(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, b) in out.iter_mut().zip(name.bytes().take(15)) {
        *o = b;
    }
    out
}

/// A map; freed when the fd (and every program using it) is gone.
#[derive(Debug)]
pub struct Map {
    pub fd: OwnedFd,
    value_size: u32,
}

impl Map {
    pub fn create(
        kind: u32,
        name: &str,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
    ) -> io::Result<Self> {
        let mut attr = MapCreate {
            map_type: kind,
            key_size,
            value_size,
            max_entries,
            map_name: name16(name),
            ..Default::default()
        };
        let fd = bpf(BPF_MAP_CREATE, &mut attr)?;
        Ok(Self {
            fd: owned(fd),
            value_size,
        })
    }

    /// The per-CPU values at a u32 key of a per-CPU array: `cpus` values, each
    /// `value_size` bytes rounded up to 8 (the kernel's layout), as u64s.
    pub fn lookup_percpu(&self, key: u32, cpus: usize) -> io::Result<Vec<u64>> {
        let per = (self.value_size as usize).div_ceil(8);
        let mut out = vec![0u64; per * cpus];
        let mut attr = Elem {
            map_fd: self.fd.as_raw_fd() as u32,
            pad: 0,
            key: &key as *const u32 as u64,
            value: out.as_mut_ptr() as u64,
            flags: 0,
        };
        bpf(BPF_MAP_LOOKUP_ELEM, &mut attr)?;
        Ok(out)
    }
}

/// What a program is loaded as: its type decides what r1 points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgKind {
    /// A perf tracepoint's record.
    Tracepoint,
    /// A raw tracepoint's arguments.
    RawTracepoint,
    /// A raw tracepoint's arguments typed by BTF: the tracepoint whose `btf_trace_` typedef
    /// has this id.
    BtfRawTracepoint(u32),
    /// The arguments of the kernel function with this BTF id, at its return.
    Fexit(u32),
}

/// A loaded program.
#[derive(Debug)]
pub struct Prog {
    pub fd: OwnedFd,
}

impl Prog {
    /// Loads `insns`; on a refusal the error carries the verifier's last lines.
    pub fn load(kind: ProgKind, name: &str, insns: &[Insn]) -> Result<Self, String> {
        let (prog_type, expected_attach_type, attach_btf_id) = match kind {
            ProgKind::Tracepoint => (BPF_PROG_TYPE_TRACEPOINT, 0, 0),
            ProgKind::RawTracepoint => (BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0),
            ProgKind::BtfRawTracepoint(id) => (BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, id),
            ProgKind::Fexit(id) => (BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, id),
        };
        let code = bytes(insns);
        let license = c"GPL";
        let attempt = |log: &mut Vec<u8>| {
            let mut attr = ProgLoad {
                prog_type,
                expected_attach_type,
                attach_btf_id,
                insn_cnt: insns.len() as u32,
                insns: code.as_ptr() as u64,
                license: license.as_ptr() as u64,
                log_level: u32::from(!log.is_empty()),
                log_size: log.len() as u32,
                // The kernel refuses a buffer without a size: no log, no pointer.
                log_buf: if log.is_empty() {
                    0
                } else {
                    log.as_mut_ptr() as u64
                },
                prog_name: name16(name),
                ..Default::default()
            };
            bpf(BPF_PROG_LOAD, &mut attr)
        };
        match attempt(&mut Vec::new()) {
            Ok(fd) => Ok(Self { fd: owned(fd) }),
            Err(first) => {
                // Again with the verifier's log, to say why.
                let mut log = vec![0u8; 1 << 20];
                // A load that passes this time is closed at once: the first one failed.
                let _ = attempt(&mut log).map(owned);
                let text = String::from_utf8_lossy(&log);
                let text = text.trim_end_matches('\0');
                if std::env::var_os("PERFLAB_BPF_LOG").is_some() {
                    eprintln!("{text}");
                }
                let tail: Vec<&str> = text.lines().rev().take(4).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                Err(format!(
                    "the kernel refused the BPF program {name}: {first}{}",
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" (verifier: {})", tail.join(" | "))
                    }
                ))
            }
        }
    }
}

/// A raw tracepoint or fexit program attached: detached when the fd is closed. There is
/// no disabled state, so the loader opens it when the measurement starts.
#[derive(Debug)]
pub struct Link {
    _fd: OwnedFd,
}

impl Link {
    /// Attaches `prog` to raw tracepoint `tp`, or a tracing program (fexit, BTF raw
    /// tracepoint) to what it was loaded for (`None`).
    pub fn open(tp: Option<&str>, prog: &Prog) -> io::Result<Self> {
        let name = tp
            .map(|t| std::ffi::CString::new(t).map_err(|_| io::ErrorKind::InvalidInput))
            .transpose()?;
        let mut attr = RawOpen {
            name: name.as_ref().map_or(0, |n| n.as_ptr() as u64),
            prog_fd: prog.fd.as_raw_fd() as u32,
            pad: 0,
        };
        let fd = bpf(BPF_RAW_TRACEPOINT_OPEN, &mut attr)?;
        Ok(Self { _fd: owned(fd) })
    }
}

/// A program attached to a tracepoint through a perf event (created disabled).
#[derive(Debug)]
pub struct Attached {
    fd: OwnedFd,
}

impl Attached {
    /// One perf event on CPU 0 for any task: a tracepoint's BPF programs run on every CPU
    /// (they hang on the tracepoint, not on the event's CPU), as libbpf and BCC attach.
    pub fn tracepoint(id: u64, prog: &Prog) -> io::Result<Self> {
        let attr = perf_event::Attr {
            type_: perf_event::PERF_TYPE_TRACEPOINT,
            config: id,
            sample_period: 1,
            sample_type: perf_event::SAMPLE_RAW,
            flags: perf_event::FLAG_DISABLED,
            wakeup_events: 1,
            ..Default::default()
        };
        let fd = perf_event::open_attr(&attr, -1, 0).map_err(io::Error::from_raw_os_error)?;
        perf_event::set_bpf(&fd, &prog.fd)?;
        Ok(Self { fd })
    }

    pub fn set_enabled(&self, on: bool) -> io::Result<()> {
        if on {
            perf_event::enable(&self.fd)
        } else {
            perf_event::disable(&self.fd)
        }
    }
}

#[repr(C)]
struct GetId {
    id: u32,
    next_id: u32,
    open_flags: u32,
}

#[repr(C)]
struct InfoByFd {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}

const BPF_PROG_GET_NEXT_ID: libc::c_long = 11;
const BPF_PROG_GET_FD_BY_ID: libc::c_long = 13;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
/// `name` of `struct bpf_prog_info`, after 64 bytes of other fields.
const PROG_INFO_NAME: usize = 64;

/// How many programs named `name` the kernel holds now, whoever loaded them: what a test
/// asks after perflab ended or was killed (0: nothing was left attached or pinned).
pub fn programs_named(name: &str) -> io::Result<usize> {
    let want = name16(name);
    let mut n = 0;
    let mut id = 0;
    loop {
        let mut next = GetId {
            id,
            next_id: 0,
            open_flags: 0,
        };
        match bpf(BPF_PROG_GET_NEXT_ID, &mut next) {
            Ok(_) => id = next.next_id,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(n),
            Err(e) => return Err(e),
        }
        let mut by_id = GetId {
            id,
            next_id: 0,
            open_flags: 0,
        };
        // A program freed since it was listed is simply not counted.
        let Ok(fd) = bpf(BPF_PROG_GET_FD_BY_ID, &mut by_id).map(owned) else {
            continue;
        };
        let mut info = [0u8; PROG_INFO_NAME + 16];
        let mut q = InfoByFd {
            bpf_fd: fd.as_raw_fd() as u32,
            info_len: info.len() as u32,
            info: info.as_mut_ptr() as u64,
        };
        if bpf(BPF_OBJ_GET_INFO_BY_FD, &mut q).is_ok() && info[PROG_INFO_NAME..] == want {
            n += 1;
        }
    }
}

/// CPUs the kernel may ever bring up: the length of a per-CPU map's value array.
pub fn possible_cpus(text: &str) -> Option<usize> {
    let last = perflab_sys::parse_cpu_list(text).ok()?.into_iter().max()?;
    Some(last as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_layouts_match_the_kernel() {
        assert_eq!(std::mem::size_of::<MapCreate>(), 44);
        assert_eq!(std::mem::size_of::<ProgLoad>(), 120);
        assert_eq!(std::mem::offset_of!(ProgLoad, expected_attach_type), 68);
        assert_eq!(std::mem::offset_of!(ProgLoad, attach_btf_id), 108);
        assert_eq!(std::mem::size_of::<RawOpen>(), 16);
        assert_eq!(std::mem::size_of::<Elem>(), 32);
    }

    #[test]
    fn possible_cpus_lists() {
        assert_eq!(possible_cpus("0-1\n"), Some(2));
        assert_eq!(possible_cpus("0"), Some(1));
        assert_eq!(possible_cpus("0-3,8-15"), Some(16));
        assert_eq!(possible_cpus(""), None);
        assert_eq!(possible_cpus("x"), None);
    }
}
