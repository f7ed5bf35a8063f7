//! What perflab may do with a device or attribute, asked without opening it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use crate::SysRoot;

/// What perflab may do with a device or attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Missing,
    ReadOnly,
    Writable,
}

/// The access to `rel` under `sys`.
pub fn access(sys: &SysRoot, rel: &str) -> Access {
    if !sys.exists(rel) {
        Access::Missing
    } else if may_write(sys, rel) {
        Access::Writable
    } else {
        Access::ReadOnly
    }
}

/// Write permission by access(2) with the effective ids, without opening the file:
/// opening /dev/cpu_dma_latency for writing already files a PM-QoS request.
fn may_write(sys: &SysRoot, rel: &str) -> bool {
    let Ok(path) = CString::new(sys.path(rel).as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_and_a_present_one_on_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(access(&sys, "f"), Access::Missing);
        std::fs::write(sys.path("f"), b"").unwrap();
        // Root may write any file; anyone else may write the file they made.
        assert_eq!(access(&sys, "f"), Access::Writable);
    }
}
