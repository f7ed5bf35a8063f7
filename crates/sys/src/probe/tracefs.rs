//! tracefs: where the kernel's tracing files are mounted (the `trace` monitor's text
//! backend reads events there, and both backends read event ids and layouts there).

use crate::SysRoot;

/// Where tracefs is usually mounted, relative to the root, the usual first.
pub const MOUNT_POINTS: [&str; 2] = ["sys/kernel/tracing", "sys/kernel/debug/tracing"];

/// Where tracefs is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracefs {
    /// Mounted at this mount point (relative to the root); `events`: it lists the
    /// kernel's events (`available_events`).
    Mounted { at: &'static str, events: bool },
    /// The usual mount point exists, but nothing is mounted there.
    Unmounted,
    /// No mount point: a kernel without tracing (CONFIG_FTRACE).
    Absent,
}

/// Where tracefs is under `sys`. The mount point exists even when tracefs is not
/// mounted; a mounted tracefs has `trace` in it.
pub fn tracefs(sys: &SysRoot) -> Tracefs {
    for at in MOUNT_POINTS {
        if sys.exists(&format!("{at}/trace")) {
            let events = sys.exists(&format!("{at}/available_events"));
            return Tracefs::Mounted { at, events };
        }
    }
    if sys.exists(MOUNT_POINTS[0]) {
        Tracefs::Unmounted
    } else {
        Tracefs::Absent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_point_without_trace_is_not_mounted() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(tracefs(&sys), Tracefs::Absent);
        std::fs::create_dir_all(sys.path(MOUNT_POINTS[0])).unwrap();
        assert_eq!(tracefs(&sys), Tracefs::Unmounted);
        std::fs::create_dir_all(sys.path(MOUNT_POINTS[1])).unwrap();
        std::fs::write(sys.path("sys/kernel/debug/tracing/trace"), b"").unwrap();
        assert_eq!(
            tracefs(&sys),
            Tracefs::Mounted {
                at: MOUNT_POINTS[1],
                events: false
            }
        );
    }
}
