//! BPF: whether this process may load programs (bpf() creates a map), and whether the
//! kernel describes its types in BTF (raw tracepoint programs read struct fields at the
//! offsets BTF gives; without it the `trace` monitor attaches classic tracepoints).

use crate::SysRoot;

/// The kernel's own BTF, relative to the root.
pub const VMLINUX_BTF: &str = "sys/kernel/btf/vmlinux";
/// The first two bytes of a BTF blob (little-endian 0xeB9F).
const BTF_MAGIC: [u8; 2] = [0x9f, 0xeb];

/// Whether BPF programs can be loaded into the running kernel (whatever tree perflab
/// reads, programs load into the kernel it runs on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bpf {
    Loadable,
    /// Refused: why, in words (no bpf() at all, no privileges, or the errno).
    Refused(String),
}

impl Bpf {
    /// Why programs cannot be loaded, if they cannot.
    pub fn refusal(&self) -> Option<&str> {
        match self {
            Bpf::Refused(why) => Some(why),
            Bpf::Loadable => None,
        }
    }
}

/// Whether bpf() creates a one-entry map (then freed): the cheapest question the kernel
/// answers truthfully.
pub fn bpf() -> Bpf {
    match create_map() {
        Ok(()) => Bpf::Loadable,
        Err(e) => Bpf::Refused(match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => {
                "BPF needs root (CAP_BPF and CAP_PERFMON)".to_string()
            }
            Some(libc::ENOSYS) => "this kernel has no bpf() system call".to_string(),
            _ => format!("cannot create a BPF map: {e}"),
        }),
    }
}

/// Whether the kernel's BTF is there and is BTF; else why not (`/sys/kernel/btf/vmlinux:
/// No such file or directory`).
pub fn btf(sys: &SysRoot) -> Result<(), String> {
    let at = |e: &dyn std::fmt::Display| format!("/{VMLINUX_BTF}: {e}");
    let mut head = [0u8; 2];
    let mut file = std::fs::File::open(sys.path(VMLINUX_BTF)).map_err(|e| at(&e))?;
    std::io::Read::read_exact(&mut file, &mut head).map_err(|e| at(&e))?;
    if head != BTF_MAGIC {
        return Err(at(&"not BTF (bad magic)"));
    }
    Ok(())
}

/// `union bpf_attr` for BPF_MAP_CREATE, as far as a probe needs it.
#[repr(C)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
}

fn create_map() -> std::io::Result<()> {
    const BPF_MAP_CREATE: libc::c_long = 0;
    const BPF_MAP_TYPE_ARRAY: u32 = 2;
    let mut attr = MapCreate {
        map_type: BPF_MAP_TYPE_ARRAY,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
    };
    // SAFETY: `attr` is a live #[repr(C)] prefix of `union bpf_attr` whose size we pass;
    // the kernel reads only those bytes.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_MAP_CREATE,
            &mut attr as *mut MapCreate as *mut libc::c_void,
            std::mem::size_of::<MapCreate>() as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this fd and nothing else owns it; closing frees
    // the map.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn btf_is_read_from_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        let missing = btf(&sys).unwrap_err();
        assert!(
            missing.starts_with("/sys/kernel/btf/vmlinux: "),
            "{missing}"
        );
        std::fs::create_dir_all(sys.path("sys/kernel/btf")).unwrap();
        std::fs::write(sys.path(VMLINUX_BTF), b"\x9f\xeb\x01\x00").unwrap();
        assert_eq!(btf(&sys), Ok(()));
        std::fs::write(sys.path(VMLINUX_BTF), b"ELF").unwrap();
        assert!(btf(&sys).unwrap_err().contains("bad magic"));
    }

    #[test]
    fn the_live_answer_is_loadable_or_says_why_not() {
        match bpf() {
            Bpf::Loadable => assert_eq!(bpf().refusal(), None),
            Bpf::Refused(why) => assert!(!why.is_empty()),
        }
    }
}
