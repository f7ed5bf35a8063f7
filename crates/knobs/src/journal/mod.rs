//! The on-disk journal of original values.
//!
//! A knob records the exact bytes of every file it is about to change here (for a
//! choice-list attribute, its selected word: see [`Original`]), durably, before it changes
//! it, and forgets the entry once the original is back. Whatever the journal
//! still holds when its owner is gone (SIGKILL, power loss) is replayed by `perflab restore`
//! (see [`crate::replay`]).
//!
//! The file is JSON, replaced atomically (temporary file, fsync, rename, fsync of the
//! directory), so a crash leaves either the old or the new journal, never half of one.
//! Every read-modify-write holds an flock on a sidecar `<journal>.lock`, so concurrent
//! perflab processes do not lose each other's entries. The sidecar is never deleted:
//! deleting a lock file lets two processes lock two different files.
//!
//! The journal lock guards the journal file only. What a knob changes is guarded across
//! journals by a system-wide lock per target, which [`Journal::save_values`] and
//! [`Journal::save_hold`] take before they record an original (see
//! [`crate::target_lock`]).

pub(crate) mod file;
pub(crate) mod record;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::owner::Owner;
use crate::target_lock::{command_line, target_key, Holder, Targets};
pub use file::entries;
use file::{load, Lock};
pub(crate) use file::{modify, unix_ms};
use record::JournalFile;
pub use record::{Action, Created, Entry, EntryId, Original, Saved, JOURNAL_VERSION};

/// The measurement fact (`MeasureCtx::facts`) that names the run's journal, for a workload
/// that changes a setting itself (dmatest's module parameters): it journals it there, so
/// that `perflab restore` finds it with the knobs' entries.
pub const JOURNAL_FACT: &str = "perflab.journal";

/// A handle on the journal file, carrying the identity of this process for the entries
/// it records. Cheap to clone; every operation opens, locks and closes the file.
///
/// A handle and its clones also hold the system-wide locks of every target they claimed,
/// until the last clone is dropped: a run keeps what it changed until it ends. Two
/// handles opened separately are two holders, even in one process.
#[derive(Clone, Debug)]
pub struct Journal {
    path: PathBuf,
    owner: Owner,
    run: Option<i64>,
    targets: Arc<Mutex<Targets>>,
}

impl Journal {
    /// `$PERFLAB_JOURNAL` if set; else `/var/lib/perflab/journal.json` for root; else
    /// `$XDG_STATE_HOME/perflab/journal.json` or `~/.local/state/perflab/journal.json`; and
    /// without a home, `/tmp/perflab-<uid>/journal.json` (losing it to a reboot loses
    /// nothing: the kernel settings knobs change do not survive one either).
    pub fn default_path() -> PathBuf {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(p) = var("PERFLAB_JOURNAL") {
            return PathBuf::from(p);
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        if euid == 0 {
            return PathBuf::from("/var/lib/perflab/journal.json");
        }
        if let Some(state) = var("XDG_STATE_HOME").map(PathBuf::from) {
            // The XDG spec says relative values are invalid and must be ignored.
            if state.is_absolute() {
                return state.join("perflab/journal.json");
            }
        }
        match var("HOME") {
            Some(home) => PathBuf::from(home).join(".local/state/perflab/journal.json"),
            None => PathBuf::from(format!("/tmp/perflab-{euid}/journal.json")),
        }
    }

    /// Opens (creating its directory) the journal at `path`. An existing journal must be
    /// readable: a corrupt one is an error, so that no knob changes anything unjournaled.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, KnobError> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| KnobError::io(dir, e))?;
        }
        let journal = Self {
            path,
            owner: Owner::current(),
            run: None,
            targets: Arc::default(),
        };
        let _lock = Lock::shared(&journal.path)?;
        load(&journal.path)?;
        Ok(journal)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Names the run this handle changes settings for, in the lock records other perflab
    /// processes see when they are refused a target.
    pub fn for_run(mut self, run: i64) -> Self {
        self.run = Some(run);
        self
    }

    /// Locks, system wide, each file (relative to `sys`) the caller is about to change or
    /// relies on keeping its value, unless this handle holds it already. On refusal
    /// ([`KnobError::InUse`], [`KnobError::Held`]) nothing is changed or journaled;
    /// targets claimed before the refusal stay held until the handle is dropped.
    pub fn claim(&self, sys: &SysRoot, rels: &[&str], knob: &str) -> Result<(), KnobError> {
        let mut targets = self.targets.lock().unwrap_or_else(PoisonError::into_inner);
        for rel in rels {
            targets.claim(self.holder(target_key(sys, rel), knob))?;
        }
        Ok(())
    }

    fn holder(&self, target: PathBuf, knob: &str) -> Holder {
        Holder {
            target,
            pid: self.owner.pid,
            start_ticks: self.owner.start_ticks,
            boot_id: self.owner.boot_id.clone(),
            command: command_line(),
            run: self.run,
            journal: std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone()),
            knob: knob.to_string(),
            since_unix_ms: unix_ms(),
        }
    }

    /// Notes which target each new entry is about, so that the target is released cleanly
    /// only once the entry is forgotten (its original is back).
    fn journaled(&self, sys: &SysRoot, saved: &[(EntryId, &str)]) {
        let mut targets = self.targets.lock().unwrap_or_else(PoisonError::into_inner);
        for (id, rel) in saved {
            targets.journaled(&target_key(sys, rel), *id);
        }
    }

    /// Records the current bytes of `rel` under `sys`, durably, before the caller changes
    /// the file.
    pub fn save_original(&self, sys: &SysRoot, rel: &str, knob: &str) -> Result<Saved, KnobError> {
        let mut saved = self.save_originals(sys, &[rel], knob)?;
        saved.pop().ok_or_else(|| KnobError::CorruptJournal {
            path: self.path.clone(),
            reason: "an entry vanished while it was recorded".into(),
        })
    }

    /// Records the originals of several files with one durable write (a cpuidle knob on a
    /// large machine changes thousands of files; one fsync each would take seconds).
    /// Either all are recorded or none.
    pub fn save_originals(
        &self,
        sys: &SysRoot,
        rels: &[&str],
        knob: &str,
    ) -> Result<Vec<Saved>, KnobError> {
        self.save_values(sys, rels, knob, |rel| Ok(sys.read_bytes(rel)?))
    }

    /// Like [`Journal::save_originals`], but records what `restore_value` returns for each
    /// file as the bytes to write back, for attributes whose written form differs from the
    /// form they show. It is called under the journal's lock, after the check that no other
    /// perflab changed the file, so the value recorded is the one this process replaces.
    pub fn save_values(
        &self,
        sys: &SysRoot,
        rels: &[&str],
        knob: &str,
        restore_value: impl Fn(&str) -> Result<Vec<u8>, KnobError>,
    ) -> Result<Vec<Saved>, KnobError> {
        if rels.is_empty() {
            return Ok(Vec::new());
        }
        self.claim(sys, rels, knob)?;
        let saved = self.modify(|file| {
            let mut saved = Vec::with_capacity(rels.len());
            for rel in rels {
                self.refuse_foreign_change(file, sys, rel)?;
                let original = restore_value(rel)?;
                let id = self.push(
                    file,
                    sys,
                    rel,
                    knob,
                    Action::Write {
                        original: Original::from_bytes(original.clone()),
                    },
                );
                saved.push(Saved {
                    id,
                    path: rel.to_string(),
                    original,
                });
            }
            Ok(saved)
        })?;
        let ids: Vec<(EntryId, &str)> = saved.iter().map(|s| (s.id, s.path.as_str())).collect();
        self.journaled(sys, &ids);
        Ok(saved)
    }

    /// Records a kernel request held by an open file (nothing to write back), after
    /// claiming the file system wide.
    pub fn save_hold(
        &self,
        sys: &SysRoot,
        rel: &str,
        knob: &str,
        detail: &str,
    ) -> Result<EntryId, KnobError> {
        self.claim(sys, &[rel], knob)?;
        let id = self.save_note(sys, rel, knob, detail)?;
        self.journaled(sys, &[(id, rel)]);
        Ok(id)
    }

    /// Records something to tell a person after a kill that perflab cannot undo itself
    /// (an `after` hook to run by hand). `key` names it; it is no target, so nothing is
    /// claimed.
    pub fn save_note(
        &self,
        sys: &SysRoot,
        key: &str,
        knob: &str,
        detail: &str,
    ) -> Result<EntryId, KnobError> {
        self.modify(|file| {
            Ok(self.push(
                file,
                sys,
                key,
                knob,
                Action::Hold {
                    detail: detail.to_string(),
                },
            ))
        })
    }

    /// Records, durably, an object the caller is about to create, so that a kill before
    /// it is removed again leaves `perflab restore` something to remove. Nothing is
    /// claimed: the objects perflab creates carry its pid in their names, so no other
    /// process makes the same one.
    pub fn save_created(
        &self,
        sys: &SysRoot,
        object: &Created,
        knob: &str,
    ) -> Result<EntryId, KnobError> {
        self.modify(|file| {
            Ok(self.push(
                file,
                sys,
                &object.key(),
                knob,
                Action::Remove {
                    object: object.clone(),
                },
            ))
        })
    }

    /// Drops an entry once its original is back. Forgetting an absent entry is not an
    /// error (a `perflab restore --force` may have replayed it already).
    pub fn forget(&self, id: EntryId) -> Result<(), KnobError> {
        self.forget_all(&[id])
    }

    pub fn forget_all(&self, ids: &[EntryId]) -> Result<(), KnobError> {
        if ids.is_empty() {
            return Ok(());
        }
        if self.path.exists() {
            self.modify(|file| {
                file.entries
                    .retain(|e| !(ids.contains(&e.id) && e.pid == self.owner.pid));
                Ok(())
            })?;
        }
        self.targets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .restored(ids);
        Ok(())
    }

    /// Every entry, in order of recording, whoever owns it.
    pub fn entries(&self) -> Result<Vec<Entry>, KnobError> {
        entries(&self.path)
    }

    /// A file another perflab changed and has not restored holds that perflab's value, not
    /// the machine's: journaling it as original would make it permanent on restore.
    fn refuse_foreign_change(
        &self,
        file: &JournalFile,
        sys: &SysRoot,
        rel: &str,
    ) -> Result<(), KnobError> {
        let rel = rel.trim_start_matches('/');
        let other = file.entries.iter().find(|e| {
            matches!(e.action, Action::Write { .. })
                && e.root == sys.root()
                && e.path == rel
                && e.owner() != self.owner
        });
        match other {
            None => Ok(()),
            Some(e) if e.owner().is_alive() => Err(KnobError::Busy {
                path: sys.path(rel),
                reason: format!("perflab pid {} is changing it ({})", e.pid, e.knob),
            }),
            Some(e) => Err(KnobError::Busy {
                path: sys.path(rel),
                reason: format!(
                    "a perflab that did not finish (pid {}) left it changed ({}); run `perflab restore` first",
                    e.pid, e.knob
                ),
            }),
        }
    }

    fn push(
        &self,
        file: &mut JournalFile,
        sys: &SysRoot,
        rel: &str,
        knob: &str,
        action: Action,
    ) -> EntryId {
        let id = EntryId(file.next_id);
        file.next_id += 1;
        file.entries.push(Entry {
            id,
            pid: self.owner.pid,
            pid_start_ticks: self.owner.start_ticks,
            boot_id: self.owner.boot_id.clone(),
            root: sys.root().to_path_buf(),
            path: rel.trim_start_matches('/').to_string(),
            knob: knob.to_string(),
            recorded_unix_ms: unix_ms(),
            action,
        });
        id
    }

    fn modify<T>(
        &self,
        f: impl FnOnce(&mut JournalFile) -> Result<T, KnobError>,
    ) -> Result<T, KnobError> {
        modify(&self.path, f)
    }
}
