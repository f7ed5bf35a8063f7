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

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use perflab_sys::SysRoot;
use serde::{Deserialize, Serialize};

use crate::error::KnobError;
use crate::owner::Owner;
use crate::target_lock::{command_line, target_key, Holder, Targets};

/// The measurement fact (`MeasureCtx::facts`) that names the run's journal, for a workload
/// that changes a setting itself (dmatest's module parameters): it journals it there, so
/// that `perflab restore` finds it with the knobs' entries.
pub const JOURNAL_FACT: &str = "perflab.journal";

/// The journal format this perflab writes and understands.
pub const JOURNAL_VERSION: u32 = 1;

/// Identifies one entry within its journal. Ids only grow, so their order is the order
/// of recording, which a replay reverses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(pub u64);

impl std::fmt::Display for EntryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What restoring a file writes back: a JSON string when it is UTF-8 (as sysfs values are,
/// and readable by a person), else an array of byte values. For most files these are the
/// exact original bytes; for an attribute that reads differently from how it is written
/// (a choice list such as `always [madvise] never`) it is the value in the written form
/// (`madvise`), since the kernel refuses the form it shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Original {
    Text(String),
    Bytes(Vec<u8>),
}

impl Original {
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => Original::Text(text),
            Err(e) => Original::Bytes(e.into_bytes()),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Original::Text(t) => t.as_bytes(),
            Original::Bytes(b) => b,
        }
    }
}

/// What undoing an entry takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Write the original bytes back to the file.
    Write { original: Original },
    /// A request the kernel holds only while a file descriptor is open (PM-QoS): it ends
    /// with its owner, so there is nothing to write back. Recorded so that `perflab restore`
    /// can say what was held.
    Hold { detail: String },
    /// Something perflab created (a network namespace, a link, an OVS bridge): undoing it
    /// removes it. Recorded before the object is created, so a kill in between leaves an
    /// entry whose removal finds nothing, never an object nobody knows about.
    Remove { object: Created },
}

/// An object perflab creates and removes again, by the name it has on the machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Created {
    /// A named network namespace (`/run/netns/<name>`).
    Netns { name: String },
    /// A network interface, in a named namespace or (`None`) in the host's.
    Link { netns: Option<String>, name: String },
    /// An Open vSwitch bridge, kept in ovsdb until deleted.
    OvsBridge { name: String },
    /// A process perflab started and stops again (a guest's QEMU, the KVM probe's). The
    /// start time and command name tell it from a later process that got its pid: only
    /// the one started is stopped.
    Process {
        pid: u32,
        start_ticks: u64,
        /// `/proc/<pid>/comm` when it started; absent in journals of older perflabs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comm: Option<String>,
        what: String,
    },
    /// A directory of perflab's own files (a guest's initramfs and console log).
    Dir { path: std::path::PathBuf },
}

impl Created {
    /// Where the object is, as the journal entry's path: not a file, but a stable key
    /// that names it for a person.
    pub fn key(&self) -> String {
        match self {
            Created::Netns { name } => format!("netns/{name}"),
            Created::Link {
                netns: Some(ns),
                name,
            } => format!("netns/{ns}/link/{name}"),
            Created::Link { netns: None, name } => format!("link/{name}"),
            Created::OvsBridge { name } => format!("ovs/{name}"),
            Created::Process { pid, .. } => format!("process/{pid}"),
            Created::Dir { path } => format!("dir{}", path.display()),
        }
    }
}

impl std::fmt::Display for Created {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Created::Netns { name } => write!(f, "network namespace {name}"),
            Created::Link {
                netns: Some(ns),
                name,
            } => write!(f, "link {name} in namespace {ns}"),
            Created::Link { netns: None, name } => write!(f, "link {name} in the host namespace"),
            Created::OvsBridge { name } => write!(f, "OVS bridge {name}"),
            Created::Process { pid, what, .. } => write!(f, "{what} (pid {pid})"),
            Created::Dir { path } => write!(f, "directory {}", path.display()),
        }
    }
}

/// One change a perflab process made, or was about to make.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: EntryId,
    /// The perflab process that made the change.
    pub pid: u32,
    #[serde(default)]
    pub pid_start_ticks: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The SysRoot the path is relative to (`/` on a live machine).
    pub root: PathBuf,
    /// The file, relative to `root`.
    pub path: String,
    /// The knob setting that made the change, e.g. `cpuidle=poll-only`.
    pub knob: String,
    pub recorded_unix_ms: u64,
    pub action: Action,
}

impl Entry {
    pub fn owner(&self) -> Owner {
        Owner {
            pid: self.pid,
            start_ticks: self.pid_start_ticks,
            boot_id: self.boot_id.clone(),
        }
    }

    /// The absolute path of the file the entry is about.
    pub fn full_path(&self) -> PathBuf {
        SysRoot::at(&self.root).path(&self.path)
    }

    /// One line for a person: `cpuidle=poll-only: /sys/.../disable was "0\n" (pid 812)`.
    pub fn describe(&self) -> String {
        if let Action::Remove { object } = &self.action {
            return format!(
                "{}: created {object} (entry {}, pid {})",
                self.knob, self.id, self.pid
            );
        }
        let what = match &self.action {
            Action::Write {
                original: Original::Text(t),
            } => format!("was {t:?}"),
            Action::Write {
                original: Original::Bytes(b),
            } => format!("was {} bytes", b.len()),
            Action::Hold { detail } => format!("held {detail}"),
            Action::Remove { object } => format!("created {object}"),
        };
        format!(
            "{}: {} {what} (entry {}, pid {})",
            self.knob,
            self.full_path().display(),
            self.id,
            self.pid
        )
    }
}

/// What [`Journal::save_original`] recorded: the entry's id and the bytes it saved, which
/// the caller writes back on restore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub id: EntryId,
    pub path: String,
    pub original: Vec<u8>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct JournalFile {
    pub version: u32,
    pub next_id: u64,
    pub entries: Vec<Entry>,
}

impl Default for JournalFile {
    fn default() -> Self {
        Self {
            version: JOURNAL_VERSION,
            next_id: 1,
            entries: Vec::new(),
        }
    }
}

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
    /// ([`KnobError::Held`]) nothing is changed or journaled; targets claimed before the
    /// refusal stay held until the handle is dropped.
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

/// Every entry of the journal at `path`, in order of recording. A missing file has none.
pub fn entries(path: &Path) -> Result<Vec<Entry>, KnobError> {
    let _lock = Lock::shared(path)?;
    Ok(load(path)?.entries)
}

/// Loads, changes and atomically replaces the journal, holding the exclusive lock.
pub(crate) fn modify<T>(
    path: &Path,
    f: impl FnOnce(&mut JournalFile) -> Result<T, KnobError>,
) -> Result<T, KnobError> {
    let _lock = Lock::exclusive(path)?;
    let mut file = load(path)?;
    let out = f(&mut file)?;
    store(path, &file)?;
    Ok(out)
}

pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn load(path: &Path) -> Result<JournalFile, KnobError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(JournalFile::default()),
        Err(e) => return Err(KnobError::io(path, e)),
    };
    parse(&bytes).map_err(|reason| KnobError::CorruptJournal {
        path: path.to_path_buf(),
        reason,
    })
}

/// Parses a journal's bytes. Separate from `load` so that it can be fed arbitrary input.
pub(crate) fn parse(bytes: &[u8]) -> Result<JournalFile, String> {
    let file: JournalFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if file.version != JOURNAL_VERSION {
        return Err(format!(
            "format version {} (this perflab understands {JOURNAL_VERSION})",
            file.version
        ));
    }
    if let Some(e) = file.entries.iter().find(|e| e.id.0 >= file.next_id) {
        return Err(format!(
            "entry {} is not below next_id {}",
            e.id, file.next_id
        ));
    }
    Ok(file)
}

fn store(path: &Path, file: &JournalFile) -> Result<(), KnobError> {
    let mut bytes = serde_json::to_vec_pretty(file).map_err(|e| KnobError::CorruptJournal {
        path: path.to_path_buf(),
        reason: format!("cannot encode: {e}"),
    })?;
    bytes.push(b'\n');
    let tmp = sidecar(path, ".tmp");
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(KnobError::io(&tmp, e));
    }
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        KnobError::io(path, e)
    })?;
    // The rename is durable only once the directory itself is synced.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| KnobError::io(dir, e))
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

/// An flock on `<journal>.lock`, released when dropped (the file closes).
struct Lock {
    _file: Option<File>,
}

impl Lock {
    fn exclusive(journal: &Path) -> Result<Self, KnobError> {
        let path = sidecar(journal, ".lock");
        let file = open_lock_file(&path).map_err(|e| KnobError::io(&path, e))?;
        flock(&file, libc::LOCK_EX).map_err(|e| KnobError::io(&path, e))?;
        Ok(Self { _file: Some(file) })
    }

    /// A reader that may not create the lock file (a user reading root's journal) reads
    /// without it: the atomic rename already guarantees it sees a whole journal.
    fn shared(journal: &Path) -> Result<Self, KnobError> {
        let path = sidecar(journal, ".lock");
        let file = open_lock_file(&path).or_else(|_| File::open(&path));
        match file {
            Ok(file) => {
                flock(&file, libc::LOCK_SH).map_err(|e| KnobError::io(&path, e))?;
                Ok(Self { _file: Some(file) })
            }
            Err(_) => Ok(Self { _file: None }),
        }
    }
}

/// Opens (creating) the lock file for writing; its content is never touched, only its
/// flock, so an existing one is not truncated.
fn open_lock_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

fn flock(file: &File, op: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: the descriptor is open for the duration of the call.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn originals_round_trip_as_text_or_bytes() {
        for bytes in [b"0\n".to_vec(), vec![0xff, 0x00, b'a'], Vec::new()] {
            let o = Original::from_bytes(bytes.clone());
            let json = serde_json::to_string(&o).unwrap();
            let back: Original = serde_json::from_str(&json).unwrap();
            assert_eq!(back.as_bytes(), &bytes[..], "{json}");
        }
        assert_eq!(
            serde_json::to_string(&Original::from_bytes(b"1\n".to_vec())).unwrap(),
            "\"1\\n\""
        );
    }

    #[test]
    fn created_objects_round_trip() {
        for object in [
            Created::Netns {
                name: "perflab-1-0-srv".into(),
            },
            Created::Link {
                netns: Some("n".into()),
                name: "srv0".into(),
            },
            Created::Link {
                netns: None,
                name: "pl1-0s".into(),
            },
            Created::OvsBridge {
                name: "pl1-0br".into(),
            },
            Created::Process {
                pid: 42,
                start_ticks: 7,
                comm: Some("qemu-system-x86".into()),
                what: "QEMU guest".into(),
            },
            Created::Process {
                pid: 43,
                start_ticks: 8,
                comm: None,
                what: "QEMU guest".into(),
            },
            Created::Dir {
                path: "/run/perflab/guest-1-0".into(),
            },
        ] {
            let action = Action::Remove { object };
            let json = serde_json::to_string(&action).unwrap();
            assert!(json.contains("\"kind\":\"remove\""), "{json}");
            let back: Action = serde_json::from_str(&json).unwrap();
            assert_eq!(back, action);
        }
    }

    #[test]
    fn rejects_unknown_versions_and_inconsistent_ids() {
        assert!(parse(br#"{"version":1,"next_id":1,"entries":[]}"#).is_ok());
        let err = parse(br#"{"version":9,"next_id":1,"entries":[]}"#).unwrap_err();
        assert!(err.contains("version 9"), "{err}");
        assert!(parse(b"").is_err());
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn parse_never_panics_on_near_json(s in "\\{\"version\":1,\"next_id\":[0-9]{1,3},\"entries\":\\[.{0,80}\\]\\}") {
            let _ = parse(s.as_bytes());
        }
    }
}
