//! The CPU time of perflab's own process tree: perflab and everything it started, from the
//! kernel's per-task accounting. A measurement's CPUs were busy for some time; what of it
//! was not this tree's is work that was not the study's (see the `disturbance` monitor).
//!
//! - perflab itself, every thread: `getrusage(RUSAGE_SELF)`;
//! - children already reaped, and what they reaped in turn: `getrusage(RUSAGE_CHILDREN)`
//!   (an `exec` command is waited for inside its measurement, so it lands here);
//! - descendants still alive (a peer or server started before the measurement and still
//!   running after it): `utime + stime + cutime + cstime` of `/proc/<pid>/stat`, found by
//!   following parent pids over `/proc`. The scan is only made when perflab has a child at
//!   all (`waitid` says so without reaping it), so a run whose workload leaves none reads
//!   two rusages and no directory.
//!
//! A descendant whose parent exited before it is reparented away and no longer counts.

use crate::error::ParseError;
use crate::root::SysRoot;

/// The fields of `/proc/<pid>/stat` that say whose child a process is and what it used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PidStat {
    pub ppid: u32,
    /// User and system time of the process, and of its reaped children, in USER_HZ ticks.
    pub utime: u64,
    pub stime: u64,
    pub cutime: u64,
    pub cstime: u64,
}

impl PidStat {
    /// Everything the process and its reaped children used, in ticks.
    pub fn ticks(&self) -> u64 {
        self.utime
            .saturating_add(self.stime)
            .saturating_add(self.cutime)
            .saturating_add(self.cstime)
    }
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses,
/// so fields are counted from the last `)`, as procps does.
pub fn parse_pid_stat(text: &str) -> Result<PidStat, ParseError> {
    let close = text
        .rfind(')')
        .ok_or_else(|| ParseError::new(1, "no \")\" closing the command name"))?;
    // Field 3 (state) is the first after the name; ppid is 4, utime..cstime 14..17.
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| -> Result<u64, ParseError> {
        let w = fields.get(n - 3).ok_or_else(|| {
            ParseError::new(1, format!("{} fields, field {n} missing", fields.len() + 2))
        })?;
        w.parse()
            .map_err(|_| ParseError::new(1, format!("field {n}: {w:?} is not a number")))
    };
    Ok(PidStat {
        ppid: u32::try_from(field(4)?)
            .map_err(|_| ParseError::new(1, "field 4: the parent pid is out of range"))?,
        utime: field(14)?,
        stime: field(15)?,
        cutime: field(16)?,
        cstime: field(17)?,
    })
}

/// The processes below `root` (not `root` itself) with their stat, from a scan of `/proc`.
/// Processes that end during the scan, or whose stat does not read, are left out.
pub fn descendants(sys: &SysRoot, root: u32) -> Vec<(u32, PidStat)> {
    let Ok(names) = sys.list_dir("proc") else {
        return Vec::new();
    };
    let all: Vec<(u32, PidStat)> = names
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = sys.read_string(&format!("proc/{pid}/stat")).ok()?;
            Some((pid, parse_pid_stat(&text).ok()?))
        })
        .collect();
    let mut found: Vec<(u32, PidStat)> = Vec::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for (pid, stat) in all.iter().filter(|(p, s)| s.ppid == parent && *p != root) {
            // A pid seen twice would be a loop in a damaged tree: count it once.
            if !found.iter().any(|(f, _)| f == pid) {
                found.push((*pid, *stat));
                parents.push(*pid);
            }
        }
    }
    found
}

/// Whether this process has a child, running or exited but not yet reaped. Nothing is
/// reaped: `WNOWAIT` leaves an exited one for whoever waits for it.
pub fn has_children() -> bool {
    // SAFETY: waitid writes only into the siginfo we own; WNOHANG never blocks.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WSTOPPED | libc::WCONTINUED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // ECHILD: no child at all. Any other answer (0, or an error we cannot read) may hide
    // one, and the scan that follows only costs time.
    !(r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}

fn rusage_ns(who: libc::c_int) -> u64 {
    // SAFETY: getrusage writes into the rusage we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return 0;
    }
    let ns =
        |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000_000 + t.tv_usec.max(0) as u64 * 1000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// The CPU time perflab's process tree has used so far, nanoseconds: itself, its reaped
/// children, and its live descendants (ticks of `hz` per second).
pub fn tree_cpu_ns(sys: &SysRoot, hz: u64) -> u64 {
    let own = rusage_ns(libc::RUSAGE_SELF) + rusage_ns(libc::RUSAGE_CHILDREN);
    if !has_children() {
        return own;
    }
    let ticks: u64 = descendants(sys, std::process::id())
        .iter()
        .map(|(_, s)| s.ticks())
        .sum();
    own + ticks.saturating_mul(1_000_000_000) / hz.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const STAT: &str = "4242 (a) b (c)) R 17 4242 4242 0 -1 4194560 100 0 0 0 \
                        31 7 5 2 20 0 1 0 98765 1000 200 18446744073709551615\n";

    #[test]
    fn fields_are_counted_past_a_tricky_command_name() {
        let s = parse_pid_stat(STAT).unwrap();
        assert_eq!(
            s,
            PidStat {
                ppid: 17,
                utime: 31,
                stime: 7,
                cutime: 5,
                cstime: 2
            }
        );
        assert_eq!(s.ticks(), 45);
        let e = parse_pid_stat("1 (x) S 1 2").unwrap_err().to_string();
        assert!(e.contains("field 14 missing"), "{e}");
        assert!(parse_pid_stat("no paren").is_err());
        assert!(parse_pid_stat("1 (x) S -1 0 0 0 0 0 0 0 0 0 0 1 1 1 1").is_err());
    }

    /// A tree in a fake /proc: the descendants of 10 are 11, 12 and 13 (a grandchild);
    /// 20 is another process's child, and a process without a readable stat is skipped.
    #[test]
    fn descendants_follow_parent_pids() {
        let dir = tempfile::tempdir().unwrap();
        let proc_ = |pid: u32, ppid: u32, ticks: u64| {
            let d = dir.path().join(format!("proc/{pid}"));
            std::fs::create_dir_all(&d).unwrap();
            let stat =
                format!("{pid} (w) S {ppid} 0 0 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0 5 0 0 0\n");
            std::fs::write(d.join("stat"), stat).unwrap();
        };
        proc_(10, 1, 100);
        proc_(11, 10, 3);
        proc_(12, 10, 4);
        proc_(13, 12, 5);
        proc_(20, 1, 50);
        std::fs::create_dir_all(dir.path().join("proc/14")).unwrap();
        std::fs::write(dir.path().join("proc/stat"), "cpu 1 2 3 4\n").unwrap();
        let sys = SysRoot::at(dir.path());
        let mut got: Vec<(u32, u64)> = descendants(&sys, 10)
            .iter()
            .map(|(p, s)| (*p, s.ticks()))
            .collect();
        got.sort();
        assert_eq!(got, [(11, 3), (12, 4), (13, 5)]);
        assert!(descendants(&sys, 13).is_empty());
        assert!(descendants(&SysRoot::at("/nonexistent"), 10).is_empty());
    }

    /// A live child is seen, without being reaped, and found below this process.
    #[test]
    fn a_live_child_is_seen_below_this_process() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        assert!(has_children());
        let sys = SysRoot::host();
        assert!(descendants(&sys, std::process::id())
            .iter()
            .any(|(p, _)| *p == child.id()));
        drop(child.stdin.take());
        child.wait().unwrap();
    }

    proptest! {
        #[test]
        fn any_text_parses_or_errs_without_panicking(s in "\\PC{0,120}") {
            let _ = parse_pid_stat(&s);
        }
    }
}
