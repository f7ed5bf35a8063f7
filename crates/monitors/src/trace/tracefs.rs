//! tracefs: finding or mounting it, perflab's own ftrace instances, and sweeping what a
//! killed perflab left.
//!
//! perflab never touches the global trace buffer: each measurement gets an instance
//! `instances/perflab-<pid>-<n>` with only the events its spans need. Where tracefs is not
//! mounted and perflab is root on the live machine, it mounts tracefs on a private
//! directory ([`perflab_sys::tracefs_mount`]) for as long as something uses it. An instance
//! is journaled before it is made, like every other thing perflab creates, so `perflab
//! restore` removes it after a kill even where its mount went with the process;
//! [`sweep_stale`] also removes instances and mounts of dead perflabs found by pid (those
//! of perflabs that journaled nothing).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use perflab_knobs::{Created, EntryId, Journal};
use perflab_sys::tracefs_mount::{self, unmount, PRIVATE_DIR, PRIVATE_PREFIX};
use perflab_sys::SysRoot;

pub use perflab_sys::tracefs_mount::{locate, Tracefs};

/// Where tracefs is usually mounted, relative to the root (doctor's tracefs probe looks
/// there too).
const KNOWN: [&str; 2] = perflab_sys::probe::tracefs::MOUNT_POINTS;
const INSTANCE_PREFIX: &str = "perflab-";

/// Why tracefs cannot be used here, as a hint for doctor and the monitor.
pub const HOW: &str = "tracing needs tracefs at /sys/kernel/tracing (mount -t tracefs nodev \
                       /sys/kernel/tracing) and root, or CAP_SYS_ADMIN to make an instance";

/// The journal entry's knob name for an instance.
const KNOB: &str = "trace";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// One ftrace instance with some events enabled; tracing off and removed on drop.
#[derive(Debug)]
pub struct Instance {
    /// The tracefs it lives in: held, so that a private mount outlives the instance
    /// (an instance torn down through a mount already gone stays in the kernel, tracing).
    tracefs: Tracefs,
    name: String,
    /// Its journal entry, forgotten once the instance is removed.
    journaled: Option<(Journal, EntryId)>,
}

impl Instance {
    /// Creates `instances/perflab-<pid>-<n>`, sizes its buffer and enables `events`;
    /// journaled first in `journal` (with `sys` as the entry's root) when one is given.
    pub fn create(
        tracefs: &Tracefs,
        events: &[(String, String)],
        buffer_kb: u64,
        journal: Option<(&Journal, &SysRoot)>,
    ) -> Result<Self, String> {
        let name = format!(
            "{INSTANCE_PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let journaled = match journal {
            Some((j, sys)) => {
                let object = Created::TraceInstance { name: name.clone() };
                let id = j
                    .save_created(sys, &object, KNOB)
                    .map_err(|e| format!("cannot journal the ftrace instance {name}: {e}"))?;
                Some((j.clone(), id))
            }
            None => None,
        };
        let inst = Self {
            tracefs: tracefs.clone(),
            name,
            journaled,
        };
        // On an error the instance drops here: it is removed and its entry forgotten.
        std::fs::create_dir(inst.tracefs.fs.path(&inst.dir()))
            .map_err(|e| format!("cannot create the ftrace instance {}: {e}", inst.name))?;
        inst.write("tracing_on", "0")?;
        inst.write("buffer_size_kb", &buffer_kb.to_string())?;
        for (sys, ev) in events {
            inst.write(&format!("events/{sys}/{ev}/enable"), "1")
                .map_err(|e| format!("cannot enable {sys}:{ev}: {e}"))?;
        }
        Ok(inst)
    }

    fn dir(&self) -> String {
        format!("instances/{}", self.name)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn write(&self, rel: &str, value: &str) -> Result<(), String> {
        self.tracefs
            .fs
            .write(&format!("{}/{rel}", self.dir()), value.as_bytes())
            .map_err(|e| e.to_string())
    }

    /// The file that turns the instance's tracing on and off.
    pub fn tracing_on(&self) -> PathBuf {
        self.tracefs.fs.path(&format!("{}/tracing_on", self.dir()))
    }

    pub fn trace_pipe(&self) -> PathBuf {
        self.tracefs.fs.path(&format!("{}/trace_pipe", self.dir()))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // rmdir takes the instance's events and buffer with it. Should it fail (a reader
        // still holds its pipe), the journal keeps the entry for `perflab restore`.
        if tracefs_mount::remove_instance(&self.tracefs.fs, &self.name).is_ok() {
            if let Some((j, id)) = self.journaled.take() {
                let _ = j.forget(id);
            }
        }
    }
}

/// The pid in `perflab-<pid>-<n>` or `tracefs-<pid>-<n>` (`tracefs-<pid>` of older
/// perflabs).
fn owner(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    rest.split('-').next()?.parse().ok()
}

fn alive(sys: &SysRoot, pid: u32) -> bool {
    pid == std::process::id() || sys.exists(&format!("proc/{pid}"))
}

/// Removes the instances and private mounts of perflab processes that are gone. Returns
/// one line per thing removed or that could not be (`Err`). Where tracefs is not mounted
/// on the live machine, it is mounted for the sweep: an instance outlives every mount
/// it was seen through.
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
    // Opened after the private mounts were listed, so its own is not among them.
    let view = (sys.is_host() && locate(sys).is_none())
        .then(|| Tracefs::open(sys).ok())
        .flatten();
    if let Some(dir) = view.as_ref().and_then(Tracefs::private_mount) {
        roots.push((dir.to_path_buf(), None));
    }
    for (root, mount_owner) in roots {
        if mount_owner.is_some_and(|p| alive(sys, p)) {
            continue;
        }
        sweep_instances(sys, &root, &mut out);
        if let Some(pid) = mount_owner {
            // Not mounted (a fake tree, or unmounted already): the directory goes alone.
            let _ = unmount(&root);
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

/// Removes the instances of dead perflabs in the tracefs at `root`.
fn sweep_instances(sys: &SysRoot, root: &std::path::Path, out: &mut Vec<Result<String, String>>) {
    let Ok(entries) = std::fs::read_dir(root.join("instances")) else {
        return;
    };
    let fs = SysRoot::at(root);
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner(&name, INSTANCE_PREFIX) else {
            continue;
        };
        if alive(sys, pid) {
            continue;
        }
        out.push(match tracefs_mount::remove_instance(&fs, &name) {
            Ok(()) => Ok(format!(
                "removed the ftrace instance {} of perflab {pid}",
                e.path().display()
            )),
            Err(err) => Err(format!("{err} ({})", e.path().display())),
        });
    }
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

    /// Mount lines of `/proc/self/mounts` at `dir`.
    fn mounts_at(dir: &std::path::Path) -> usize {
        let want = format!(" {} tracefs ", dir.display());
        std::fs::read_to_string("/proc/self/mounts")
            .unwrap()
            .lines()
            .filter(|l| l.contains(&want))
            .count()
    }

    /// Parallel users of a private mount share one (counted) and none of them pulls it
    /// from under another: with one path per process, a thread's cleanup unmounted and
    /// removed the directory while another was mounting there, and tests skipped with
    /// "tracefs cannot be mounted".
    #[test]
    fn private_mounts_are_shared_and_never_pulled_from_under_a_user_needs_root() {
        if !perflab_testkit::have_root("mounting tracefs") {
            return;
        }
        let host = SysRoot::host();
        if locate(&host).is_some() {
            perflab_testkit::skip(
                "tracefs unmounted",
                "tracefs is mounted here, so perflab makes no private mount",
            );
            return;
        }
        let a = Tracefs::open(&host).expect("mounting tracefs as root");
        let b = Tracefs::open(&host).expect("a second user");
        let dir = a.private_mount().unwrap().to_path_buf();
        assert_eq!(b.private_mount(), Some(dir.as_path()));
        assert_eq!(mounts_at(&dir), 1, "two users, one mount");
        drop(a);
        assert!(b.fs.exists("events"), "the last user keeps it mounted");
        drop(b);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        let fs = Tracefs::open(&SysRoot::host()).map_err(|e| e.to_string())?;
                        if !fs.fs.exists("events/sched") {
                            return Err(format!("{:?} lost its tracefs", fs.private_mount()));
                        }
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
    }
}
