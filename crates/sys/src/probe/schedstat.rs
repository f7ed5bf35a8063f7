//! Scheduler statistics: /proc/schedstat, and whether the kernel collects them
//! (`kernel.sched_schedstats`).

use crate::SysRoot;

/// Whether the kernel keeps scheduler statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedstat {
    /// No /proc/schedstat: a kernel without CONFIG_SCHEDSTATS.
    Absent,
    Present {
        /// The format version /proc/schedstat declares.
        version: Option<String>,
        /// `kernel.sched_schedstats` (`0`: the wait-time statistics are not collected),
        /// where the sysctl exists.
        collecting: Option<String>,
    },
}

pub fn schedstat(sys: &SysRoot) -> Schedstat {
    if !sys.exists("proc/schedstat") {
        return Schedstat::Absent;
    }
    let version = sys.read_string("proc/schedstat").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("version ").map(|v| v.trim().to_string()))
    });
    Schedstat::Present {
        version,
        collecting: sys.read_trimmed("proc/sys/kernel/sched_schedstats").ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_and_the_sysctl_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let sys = SysRoot::at(dir.path());
        assert_eq!(schedstat(&sys), Schedstat::Absent);
        std::fs::create_dir_all(sys.path("proc/sys/kernel")).unwrap();
        std::fs::write(sys.path("proc/schedstat"), "version 15\ntimestamp 1\n").unwrap();
        std::fs::write(sys.path("proc/sys/kernel/sched_schedstats"), "0\n").unwrap();
        assert_eq!(
            schedstat(&sys),
            Schedstat::Present {
                version: Some("15".into()),
                collecting: Some("0".into())
            }
        );
    }
}
