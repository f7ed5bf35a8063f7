//! Which process owns a journal entry, and whether that process is still running.
//!
//! A pid alone is not enough: after a reboot or a long time, the pid of a killed perflab may
//! belong to another process, whose liveness would then hold the entry back forever. So an
//! owner is the pid plus its start time (field 22 of `/proc/<pid>/stat`) plus the boot id.

use std::io::BufRead;

use perflab_sys::SysRoot;

/// The identity of a perflab process, as recorded in its journal entries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    pub pid: u32,
    /// Start time in clock ticks since boot; `None` where /proc could not be read.
    pub start_ticks: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id`; `None` where it could not be read.
    pub boot_id: Option<String>,
}

impl Owner {
    /// The running process.
    pub fn current() -> Self {
        let pid = std::process::id();
        let host = SysRoot::host();
        Self {
            pid,
            start_ticks: proc_stat(&host, pid).map(|s| s.start_ticks),
            boot_id: boot_id(&host),
        }
    }

    /// False when the owner certainly exited: another boot, no such pid, a zombie, or a pid
    /// now used by a process that started at another time. A pid we may not signal (EPERM)
    /// still exists, so it counts as alive.
    pub fn is_alive(&self) -> bool {
        let host = SysRoot::host();
        if let (Some(then), Some(now)) = (&self.boot_id, boot_id(&host)) {
            if *then != now {
                return false;
            }
        }
        // kill(0, 0) and kill(-n, 0) address process groups, never one process.
        let pid = match libc::pid_t::try_from(self.pid) {
            Ok(p) if p > 0 => p,
            _ => return false,
        };
        // SAFETY: signal 0 only checks whether the process exists; nothing is delivered.
        let rc = unsafe { libc::kill(pid, 0) };
        if rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
            return false;
        }
        match proc_stat(&host, self.pid) {
            Some(stat) if stat.state == 'Z' || stat.state == 'X' => false,
            Some(stat) => match self.start_ticks {
                Some(t) => t == stat.start_ticks,
                None => true,
            },
            None => true,
        }
    }
}

/// Whether this machine has booted since an entry recorded `then`.
pub(crate) fn booted_since(then: Option<&str>) -> bool {
    match (then, boot_id(&SysRoot::host())) {
        (Some(then), Some(now)) => then != now,
        _ => false,
    }
}

fn boot_id(host: &SysRoot) -> Option<String> {
    host.read_trimmed("proc/sys/kernel/random/boot_id")
        .ok()
        .filter(|s| !s.is_empty())
}

fn proc_stat(host: &SysRoot, pid: u32) -> Option<ProcStat> {
    parse_proc_stat(host.open(&format!("proc/{pid}/stat")).ok()?)
}

/// The fields of `/proc/<pid>/stat` that tell one process from a later one with its pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub state: char,
    pub start_ticks: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses,
/// so the fields are counted from the last `)` (as procps does).
pub fn parse_proc_stat(mut reader: impl BufRead) -> Option<ProcStat> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // After the state (field 3), starttime is field 22: 18 fields further on.
    let start_ticks = fields.nth(18)?.parse().ok()?;
    Some(ProcStat { state, start_ticks })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_state_and_start_time_past_a_tricky_command_name() {
        let line = "1234 (a) b (c)) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    98765 1000 200 18446744073709551615\n";
        let stat = parse_proc_stat(line.as_bytes()).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                state: 'S',
                start_ticks: 98765
            }
        );
        assert_eq!(parse_proc_stat("1 (x) S 1 2".as_bytes()), None);
        assert_eq!(parse_proc_stat("no paren".as_bytes()), None);
    }

    #[test]
    fn the_running_process_is_alive_and_a_reaped_child_is_not() {
        let me = Owner::current();
        assert!(
            me.start_ticks.is_some(),
            "/proc/self/stat should be readable"
        );
        assert!(me.is_alive());
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!Owner { pid, ..me.clone() }.is_alive());
        assert!(!Owner {
            pid: 0,
            ..me.clone()
        }
        .is_alive());
        let other_start = me.start_ticks.map(|t| t + 1);
        assert!(!Owner {
            start_ticks: other_start,
            ..me.clone()
        }
        .is_alive());
        assert!(!Owner {
            boot_id: Some("another boot".into()),
            ..me
        }
        .is_alive());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse_proc_stat(s.as_bytes());
        }
    }
}
