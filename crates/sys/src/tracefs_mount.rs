//! A tracefs perflab can use: the mounted one, or a private mount it makes as root where
//! tracefs is not mounted; and removing an ftrace instance perflab made.
//!
//! A private mount lives at `/run/perflab/tracefs-<pid>-<n>` and is shared by everything
//! in the process that opens tracefs meanwhile (a reference count): it is unmounted when
//! the last user lets go. Each new mount gets a new `<n>`, so tearing one down can never
//! unmount another made meanwhile at the same path (parallel test threads did exactly that
//! with one path per process). Every tracefs mount shows the same instances, so an
//! instance made through one mount is removed through any other.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::SysRoot;

/// Our private mounts, relative to the root.
pub const PRIVATE_DIR: &str = "run/perflab";
/// A private mount's name: `tracefs-<pid>-<n>`.
pub const PRIVATE_PREFIX: &str = "tracefs-";

/// A tracefs perflab can use; a private mount is unmounted when its last user drops it.
#[derive(Clone, Debug)]
pub struct Tracefs {
    /// tracefs itself, as a root for its files.
    pub fs: SysRoot,
    mount: Option<Arc<PrivateMount>>,
}

/// tracefs under `sys` where it is mounted (a directory with `events/` and `instances/`).
pub fn locate(sys: &SysRoot) -> Option<PathBuf> {
    crate::probe::tracefs::MOUNT_POINTS
        .iter()
        .map(|rel| sys.path(rel))
        .find(|p| p.join("instances").is_dir() && p.join("events").is_dir())
}

impl Tracefs {
    /// The mounted tracefs, or the process's private mount when root on the live machine.
    pub fn open(sys: &SysRoot) -> Result<Self, String> {
        if let Some(p) = locate(sys) {
            return Ok(Self {
                fs: SysRoot::at(p),
                mount: None,
            });
        }
        if !sys.is_host() {
            return Err("tracefs is not mounted under this sysroot".into());
        }
        if !crate::probe::privileges::is_root() {
            return Err("tracefs is not mounted and mounting it needs root".into());
        }
        let mount = PrivateMount::shared(sys)?;
        Ok(Self {
            fs: SysRoot::at(&mount.dir),
            mount: Some(mount),
        })
    }

    /// True when the kernel has the event `system:event`.
    pub fn has_event(&self, system: &str, event: &str) -> bool {
        self.fs.exists(&format!("events/{system}/{event}/enable"))
    }

    /// A private mount's directory, if perflab mounted it.
    pub fn private_mount(&self) -> Option<&Path> {
        self.mount.as_deref().map(|m| m.dir.as_path())
    }
}

/// The process's private mount while anything uses it. Held while a mount is made or torn
/// down, so that a new one never starts while the last one is half gone.
static SHARED: Mutex<Weak<PrivateMount>> = Mutex::new(Weak::new());
static NEXT: AtomicU32 = AtomicU32::new(0);

#[derive(Debug)]
struct PrivateMount {
    dir: PathBuf,
}

impl PrivateMount {
    fn shared(sys: &SysRoot) -> Result<Arc<Self>, String> {
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = shared.upgrade() {
            return Ok(m);
        }
        let dir = sys.path(PRIVATE_DIR).join(format!(
            "{PRIVATE_PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if let Err(e) = mount(&dir) {
            let _ = std::fs::remove_dir(&dir);
            return Err(format!("cannot mount tracefs on {}: {e}", dir.display()));
        }
        let m = Arc::new(Self { dir });
        *shared = Arc::downgrade(&m);
        Ok(m)
    }
}

impl Drop for PrivateMount {
    fn drop(&mut self) {
        let _shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = unmount(&self.dir);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn cstr(p: &Path) -> std::io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path with a NUL byte"))
}

fn mount(dir: &Path) -> std::io::Result<()> {
    let target = cstr(dir)?;
    // SAFETY: every pointer is a valid NUL-terminated string for the call's duration.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Detaches the mount at `dir` (lazily: a reader that still has a file open keeps it).
pub fn unmount(dir: &Path) -> std::io::Result<()> {
    let target = cstr(dir)?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Removes the instance `instances/<name>` of the tracefs `fs`, tracing off first (rmdir
/// takes its events and buffer with it). An instance already gone is removed.
pub fn remove_instance(fs: &SysRoot, name: &str) -> Result<(), String> {
    let dir = format!("instances/{name}");
    if !fs.exists(&dir) {
        return Ok(());
    }
    let _ = fs.write(&format!("{dir}/tracing_on"), b"0");
    match std::fs::remove_dir(fs.path(&dir)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove the ftrace instance {name}: {e}")),
    }
}

/// Removes the instance `name` wherever tracefs is, mounting it for the purpose where it
/// is not mounted (`perflab restore` after a kill: the killed run's private mount may be
/// gone, the instance lives on in the kernel).
pub fn remove_instance_on(sys: &SysRoot, name: &str) -> Result<(), String> {
    let fs = Tracefs::open(sys)
        .map_err(|e| format!("cannot reach tracefs to remove the ftrace instance {name}: {e}"))?;
    remove_instance(&fs.fs, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_tree_is_used_where_it_is_and_never_mounted() {
        let t = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(t.path());
        assert!(Tracefs::open(&sys).is_err());
        for d in [
            "sys/kernel/tracing/events",
            "sys/kernel/tracing/instances/perflab-1-0",
        ] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let fs = Tracefs::open(&sys).unwrap();
        assert!(fs.private_mount().is_none());
        remove_instance_on(&sys, "perflab-1-0").unwrap();
        assert!(!t
            .path()
            .join("sys/kernel/tracing/instances/perflab-1-0")
            .exists());
        // Gone already is removed.
        remove_instance(&fs.fs, "perflab-1-0").unwrap();
    }
}
