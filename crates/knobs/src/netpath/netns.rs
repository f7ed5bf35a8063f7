//! Entering a named network namespace from one thread, leaving the rest of the process
//! where it is. A socket or tap opened there stays in that namespace for its whole life,
//! whichever thread uses it later.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Where `ip netns add` keeps the file that holds a named namespace open.
pub const NETNS_DIR: &str = "/run/netns";

/// The file of a named namespace, which `setns(2)` opens.
pub fn netns_path(name: &str) -> PathBuf {
    Path::new(NETNS_DIR).join(name)
}

/// Runs `f` on a new thread that has first entered the network namespace at `ns` (a file
/// such as `/run/netns/perflab-812-0-srv`), and returns what it returns. The calling
/// thread's namespace is not touched: `setns` with `CLONE_NEWNET` changes only the thread
/// that calls it, and that thread ends with `f`.
pub fn in_netns<T: Send>(ns: &Path, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    let file = File::open(ns).map_err(|e| annotate(ns, e))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: the descriptor is open for the duration of the call.
            if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(annotate(ns, std::io::Error::last_os_error()));
            }
            Ok(f())
        })
        .join()
        .unwrap_or_else(|_| {
            Err(std::io::Error::other(format!(
                "a thread in namespace {} panicked",
                ns.display()
            )))
        })
    })
}

fn annotate(ns: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("namespace {}: {e}", ns.display()))
}
