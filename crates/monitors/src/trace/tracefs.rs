//! tracefs: finding or mounting it, perflab's own ftrace instances, and sweeping what a
//! killed perflab left.
//!
//! perflab never touches the global trace buffer: each measurement gets an instance
//! `instances/perflab-<pid>-<n>` with only the events its spans need. Where tracefs is not
//! mounted and perflab is root on the live machine, it mounts tracefs on a private
//! directory `/run/perflab/tracefs-<pid>` and unmounts it when done; `perflab restore`
//! removes instances and mounts whose perflab pid is dead ([`sweep_stale`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use perflab_sys::SysRoot;

/// Where tracefs is usually mounted, relative to the root (doctor's tracefs probe looks
/// there too).
const KNOWN: [&str; 2] = perflab_sys::probe::tracefs::MOUNT_POINTS;
/// Our private mounts, relative to the root.
const PRIVATE_DIR: &str = "run/perflab";
const PRIVATE_PREFIX: &str = "tracefs-";
const INSTANCE_PREFIX: &str = "perflab-";

/// A tracefs mount perflab can use; unmounted on drop when perflab mounted it.
#[derive(Debug)]
pub struct Tracefs {
    /// tracefs itself, as a root for its files.
    pub fs: SysRoot,
    mounted: Option<PathBuf>,
}

/// tracefs under `sys` where it is mounted (a directory with `events/` and `instances/`).
pub fn locate(sys: &SysRoot) -> Option<PathBuf> {
    KNOWN
        .iter()
        .map(|rel| sys.path(rel))
        .find(|p| p.join("instances").is_dir() && p.join("events").is_dir())
}

/// Why tracefs cannot be used here, as a hint for doctor and the monitor.
pub const HOW: &str = "tracing needs tracefs at /sys/kernel/tracing (mount -t tracefs nodev \
                       /sys/kernel/tracing) and root, or CAP_SYS_ADMIN to make an instance";

impl Tracefs {
    /// The mounted tracefs, or a private mount when root on the live machine.
    pub fn open(sys: &SysRoot) -> Result<Self, String> {
        if let Some(p) = locate(sys) {
            return Ok(Self {
                fs: SysRoot::at(p),
                mounted: None,
            });
        }
        if !sys.is_host() {
            return Err("tracefs is not mounted under this sysroot".into());
        }
        if !perflab_sys::probe::privileges::is_root() {
            return Err("tracefs is not mounted and mounting it needs root".into());
        }
        let dir = sys
            .path(PRIVATE_DIR)
            .join(format!("{PRIVATE_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if let Err(e) = mount(&dir) {
            let _ = std::fs::remove_dir(&dir);
            return Err(format!("cannot mount tracefs on {}: {e}", dir.display()));
        }
        Ok(Self {
            fs: SysRoot::at(&dir),
            mounted: Some(dir),
        })
    }

    /// True when the kernel has the event `system:event`.
    pub fn has_event(&self, system: &str, event: &str) -> bool {
        self.fs.exists(&format!("events/{system}/{event}/enable"))
    }

    /// A private mount's directory, if perflab mounted it.
    pub fn private_mount(&self) -> Option<&Path> {
        self.mounted.as_deref()
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if let Some(dir) = self.mounted.take() {
            let _ = umount(&dir);
            let _ = std::fs::remove_dir(&dir);
        }
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

fn umount(dir: &Path) -> std::io::Result<()> {
    let target = cstr(dir)?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// One ftrace instance with some events enabled; disabled and removed on drop.
#[derive(Debug)]
pub struct Instance {
    fs: SysRoot,
    dir: String,
    events: Vec<(String, String)>,
}

impl Instance {
    /// Creates `instances/perflab-<pid>-<n>`, sizes its buffer and enables `events`.
    pub fn create(
        fs: &SysRoot,
        events: &[(String, String)],
        buffer_kb: u64,
    ) -> Result<Self, String> {
        let name = format!(
            "{INSTANCE_PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = format!("instances/{name}");
        std::fs::create_dir(fs.path(&dir))
            .map_err(|e| format!("cannot create the ftrace instance {name}: {e}"))?;
        let mut inst = Self {
            fs: fs.clone(),
            dir,
            events: Vec::new(),
        };
        // On an error the instance drops here: what was enabled is disabled and removed.
        inst.write("tracing_on", "0")?;
        inst.write("buffer_size_kb", &buffer_kb.to_string())?;
        for (sys, ev) in events {
            inst.write(&format!("events/{sys}/{ev}/enable"), "1")
                .map_err(|e| format!("cannot enable {sys}:{ev}: {e}"))?;
            inst.events.push((sys.clone(), ev.clone()));
        }
        Ok(inst)
    }

    fn write(&self, rel: &str, value: &str) -> Result<(), String> {
        self.fs
            .write(&format!("{}/{rel}", self.dir), value.as_bytes())
            .map_err(|e| e.to_string())
    }

    pub fn set_tracing(&self, on: bool) -> Result<(), String> {
        self.write("tracing_on", if on { "1" } else { "0" })
    }

    pub fn trace_pipe(&self) -> PathBuf {
        self.fs.path(&format!("{}/trace_pipe", self.dir))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.set_tracing(false);
        for (sys, ev) in &self.events {
            let _ = self
                .fs
                .write(&format!("{}/events/{sys}/{ev}/enable", self.dir), b"0");
        }
        let _ = std::fs::remove_dir(self.fs.path(&self.dir));
    }
}

/// The pid in `perflab-<pid>-<n>` or `tracefs-<pid>`.
fn owner(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    rest.split('-').next()?.parse().ok()
}

fn alive(sys: &SysRoot, pid: u32) -> bool {
    pid == std::process::id() || sys.exists(&format!("proc/{pid}"))
}

/// Removes the instances and private mounts of perflab processes that are gone. Returns
/// one line per thing removed or that could not be (`Err`).
pub fn sweep_stale(sys: &SysRoot) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    let mut roots: Vec<(PathBuf, Option<u32>)> =
        KNOWN.iter().map(|r| (sys.path(r), None)).collect();
    let private = sys.path(PRIVATE_DIR);
    if let Ok(entries) = std::fs::read_dir(&private) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = owner(&name, PRIVATE_PREFIX) {
                roots.push((e.path(), Some(pid)));
            }
        }
    }
    for (root, mount_owner) in roots {
        if mount_owner.is_some_and(|p| alive(sys, p)) {
            continue;
        }
        let instances = root.join("instances");
        if let Ok(entries) = std::fs::read_dir(&instances) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(pid) = owner(&name, INSTANCE_PREFIX) else {
                    continue;
                };
                if alive(sys, pid) {
                    continue;
                }
                out.push(match std::fs::remove_dir(e.path()) {
                    Ok(()) => Ok(format!(
                        "removed the ftrace instance {} of perflab {pid}",
                        e.path().display()
                    )),
                    Err(err) => Err(format!(
                        "cannot remove the ftrace instance {}: {err}",
                        e.path().display()
                    )),
                });
            }
        }
        if let Some(pid) = mount_owner {
            // Not mounted (a fake tree, or unmounted already): the directory goes alone.
            let _ = umount(&root);
            out.push(match std::fs::remove_dir(&root) {
                Ok(()) => Ok(format!(
                    "removed the tracefs mount {} of perflab {pid}",
                    root.display()
                )),
                Err(err) => Err(format!("cannot remove {}: {err}", root.display())),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_removes_only_what_dead_perflabs_left() {
        let t = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(t.path());
        let me = std::process::id();
        let dead = 999_999_999u32;
        for d in [
            format!("sys/kernel/tracing/instances/perflab-{dead}-0"),
            format!("sys/kernel/tracing/instances/perflab-{me}-3"),
            "sys/kernel/tracing/instances/someone-else".to_string(),
            format!("run/perflab/tracefs-{dead}/instances/perflab-{dead}-1"),
            format!("run/perflab/tracefs-{me}/instances"),
            format!("proc/{me}"),
        ] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let done = sweep_stale(&sys);
        // The dead mount's own instance, then its directory, are both removed (a fake
        // tree's instances directory is not empty, so the mount directory stays).
        assert!(done[0]
            .as_ref()
            .unwrap()
            .contains(&format!("perflab-{dead}-0")));
        assert!(!t
            .path()
            .join(format!("sys/kernel/tracing/instances/perflab-{dead}-0"))
            .exists());
        assert!(t
            .path()
            .join(format!("sys/kernel/tracing/instances/perflab-{me}-3"))
            .exists());
        assert!(t
            .path()
            .join("sys/kernel/tracing/instances/someone-else")
            .exists());
        assert!(!t
            .path()
            .join(format!(
                "run/perflab/tracefs-{dead}/instances/perflab-{dead}-1"
            ))
            .exists());
        assert!(t.path().join(format!("run/perflab/tracefs-{me}")).exists());
        assert_eq!(owner("perflab-12-3", INSTANCE_PREFIX), Some(12));
        assert_eq!(owner("tracefs-7", PRIVATE_PREFIX), Some(7));
        assert_eq!(owner("perflab-x-3", INSTANCE_PREFIX), None);
    }
}
