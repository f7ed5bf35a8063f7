//! Long-lived child processes perflab starts (a guest's QEMU, the QEMU of the KVM probe):
//! each dies with perflab, and each is journaled so that `perflab restore` ends it and
//! removes its files after perflab itself was killed.
//!
//! Dying with perflab is [`tie_to_perflab`]: the child gets its own process group (a
//! terminal's Ctrl-C or a `kill -- -PGID` of perflab's group does not reach it half-way
//! through its own clean-up) and `PR_SET_PDEATHSIG` = SIGKILL, so the kernel kills it the
//! moment the perflab thread that started it ends, SIGKILL included. The journal covers
//! what the signal does not: the child's files, and a child started by a thread that
//! outlives a hung perflab.
//!
//! Code that has no journal handle of its own (an availability check, `doctor`) journals
//! into the one the binary names with [`journal_children_in`].

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::journal::{Created, EntryId, Journal};

static JOURNAL: OnceLock<PathBuf> = OnceLock::new();

/// Names the journal that children started outside a run's knobs are recorded in (the
/// one `perflab restore` replays). The first call wins; the file is opened only when a
/// child is started.
pub fn journal_children_in(path: PathBuf) {
    let _ = JOURNAL.set(path);
}

/// The journal named with [`journal_children_in`], opened; `None` when none was named
/// (a library caller, a unit test): the child then relies on dying with perflab.
pub fn journal() -> Option<Result<Journal, KnobError>> {
    JOURNAL.get().map(|p| Journal::open(p.clone()))
}

/// The journal entries of one child process and its files, recorded in the journal
/// [`journal_children_in`] named (or nowhere when none was named) and forgotten once
/// [`Journaled::forget`] is called after the child and its files are gone.
pub struct Journaled {
    journal: Option<Journal>,
    knob: String,
    ids: Vec<EntryId>,
}

impl Journaled {
    /// `knob` names the entries for a person (`kvm-probe`).
    pub fn new(knob: &str) -> Result<Self, String> {
        let journal = journal().transpose().map_err(|e| e.to_string())?;
        Ok(Self {
            journal,
            knob: knob.to_string(),
            ids: Vec::new(),
        })
    }

    /// Records, durably, an object about to exist (a directory) or just started (a
    /// process, whose pid is known only then).
    pub fn record(&mut self, object: &Created) -> Result<(), String> {
        if let Some(j) = &self.journal {
            let id = j
                .save_created(&SysRoot::host(), object, &self.knob)
                .map_err(|e| e.to_string())?;
            self.ids.push(id);
        }
        Ok(())
    }

    /// Drops the entries: what they name is gone.
    pub fn forget(self) -> Result<(), String> {
        match &self.journal {
            Some(j) => j.forget_all(&self.ids).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// Makes the child started by `cmd` die with the thread that starts it: its own process
/// group and SIGKILL on the parent's death. Call it from the thread that waits for the
/// child (or lives as long as it should).
pub fn tie_to_perflab(cmd: &mut Command) {
    // SAFETY: getpid, getppid, setpgid, prctl and kill are async-signal-safe; the closure
    // touches no memory but its copy of `parent`.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // perflab died between fork and prctl: the signal will never come.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A tied child dies with the thread that started it (PDEATHSIG follows the thread):
    /// a helper thread stands in for perflab, and its end for perflab's death.
    #[test]
    fn a_tied_child_dies_when_its_parent_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let pidfile2 = pidfile.clone();
        std::thread::spawn(move || {
            let mut cmd = Command::new("sleep");
            cmd.arg("30");
            tie_to_perflab(&mut cmd);
            let child = cmd.spawn().unwrap();
            std::fs::write(&pidfile2, child.id().to_string()).unwrap();
            // The thread ends without waiting: PDEATHSIG fires now.
            std::mem::forget(child);
        })
        .join()
        .unwrap();
        let pid: u32 = std::fs::read_to_string(&pidfile).unwrap().parse().unwrap();
        let started = Instant::now();
        while crate::guest::process::start_ticks(pid).is_some() {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the tied child {pid} outlived the thread that started it"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // Reap it (it was ours): no zombie stays behind the test.
        // SAFETY: waits for our own child, which is dead.
        unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0) };
    }

    /// A child's journal entries, left by a perflab that was killed, are replayed by
    /// `perflab restore`: the fake child (a `sleep` standing in for QEMU) is stopped and
    /// its directory removed; an entry whose start time does not match (a recycled pid)
    /// leaves the process alone.
    #[test]
    fn restore_stops_a_journaled_child_and_removes_its_files_but_not_a_recycled_pid() {
        let dir = tempfile::tempdir().unwrap();
        let journal_path = dir.path().join("journal.json");
        let files = dir.path().join("perflab-kvm-probe-1");
        std::fs::create_dir(&files).unwrap();
        std::fs::write(files.join("console"), "Probing EDD").unwrap();
        let mut fake = Command::new("sleep").arg("60").spawn().unwrap();
        let mut bystander = Command::new("sleep").arg("60").spawn().unwrap();
        let pid = fake.id();
        let ticks = crate::guest::process::start_ticks(pid).unwrap();
        let other = bystander.id();
        let other_ticks = crate::guest::process::start_ticks(other).unwrap();
        let journal = Journal::open(&journal_path).unwrap();
        let host = SysRoot::host();
        for object in [
            Created::Dir {
                path: files.clone(),
            },
            Created::Process {
                pid,
                start_ticks: ticks,
                comm: crate::guest::process::comm(pid),
                what: "fake QEMU".into(),
            },
            Created::Process {
                pid: other,
                start_ticks: other_ticks + 1,
                comm: Some("sleep".into()),
                what: "an earlier process with this pid".into(),
            },
        ] {
            journal.save_created(&host, &object, "kvm-probe").unwrap();
        }
        // The entries' owner dies: a reaped child's pid stands in for the killed perflab.
        let mut dead = Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        crate::journal::modify(&journal_path, |f| {
            for e in &mut f.entries {
                e.pid = dead_pid;
            }
            Ok(())
        })
        .unwrap();
        let report = crate::replay::restore_pending(&journal_path).unwrap();
        assert!(report.is_clean(), "{:?}", report.lines());
        assert_eq!(report.restored.len(), 3, "{:?}", report.lines());
        assert!(crate::guest::process::start_ticks(pid).is_none());
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        assert!(!files.exists());
        assert!(
            bystander.try_wait().unwrap().is_none(),
            "a pid with another start time was signalled"
        );
        let _ = bystander.kill();
        let _ = bystander.wait();
        let _ = fake.try_wait();
        assert!(crate::journal::entries(&journal_path).unwrap().is_empty());
    }
}
