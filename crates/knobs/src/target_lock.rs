//! System-wide ownership of what knobs change.
//!
//! A journal only sees the changes recorded in it. Two perflab processes with different
//! journals (`--journal`, `$PERFLAB_JOURNAL`) changing the same file would each journal
//! the other's temporary value as the original, and whichever restores last makes that
//! value permanent. So before a knob journals a target's original (a sysfs or procfs
//! file, the PM-QoS device it holds a request on), it locks the target, system wide and
//! whatever the journal: an flock on a file named after the target's canonical path in
//! one fixed directory ([`lock_dir`]). A perflab that needs a target another live one
//! holds is refused at once with [`KnobError::Held`], naming the holder and the target.
//! It does not wait: its measurements would then run under the other's settings.
//!
//! A journal handle (and its clones) keeps every target it claimed until the last clone is
//! dropped, so a run owns what it changed until it ends and nobody changes it between
//! its variants. The kernel drops the flock when the holder dies, so a SIGKILL never
//! leaves a target locked.
//!
//! The lock file holds a record of its holder (pid, command line, run, journal, knob). A
//! clean release deletes the file while still holding the lock, so a lock file that is
//! present and unlocked was left by a holder that did not finish (killed, or its restore
//! failed). While the journal its record names still holds that holder's original of the
//! target, a new claim is refused with the `perflab restore` to run first; otherwise the
//! record is stale and is replaced.
//!
//! On a test tree (a SysRoot that is not `/`) the target's canonical path lies inside the
//! tree, so tests on separate trees never contend, and need no privilege.

use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use perflab_sys::SysRoot;
use serde::{Deserialize, Serialize};

use crate::error::KnobError;
use crate::journal::{self, unix_ms, Action, EntryId};
use crate::owner::{booted_since, Owner};

/// Where root's lock files live: a tmpfs that a reboot empties, as it resets what the
/// locks protect.
pub const LOCK_DIR: &str = "/run/lock/perflab";

/// The directory of lock files: [`LOCK_DIR`] for root; `/tmp/perflab-locks-<uid>` for
/// other users (who can change only test trees, which are theirs), and for root where
/// `/run/lock` is missing. A directory must be owned by the user and not be a link:
/// whoever owns it could replace the lock files under perflab's feet.
pub fn lock_dir() -> Result<PathBuf, KnobError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid == 0 {
        if let Ok(dir) = owned_dir(Path::new(LOCK_DIR), 0o755, euid) {
            return Ok(dir);
        }
    }
    owned_dir(
        Path::new(&format!("/tmp/perflab-locks-{euid}")),
        0o700,
        euid,
    )
}

fn owned_dir(dir: &Path, mode: u32, uid: u32) -> Result<PathBuf, KnobError> {
    match fs::DirBuilder::new().mode(mode).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(KnobError::io(dir, e)),
    }
    let meta = fs::symlink_metadata(dir).map_err(|e| KnobError::io(dir, e))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(KnobError::io(
            dir,
            std::io::Error::other(format!(
                "not a directory owned by uid {uid}; remove it so that perflab can make its own"
            )),
        ));
    }
    Ok(dir.to_path_buf())
}

/// What identifies a target system wide: its canonical absolute path, so that two
/// spellings of one sysfs file (through `/sys/class` links, a relative `--sysroot`) lock
/// the same file. A path that does not exist is made absolute and normalised as written.
pub fn target_key(sys: &SysRoot, rel: &str) -> PathBuf {
    let path = sys.path(rel);
    fs::canonicalize(&path).unwrap_or_else(|_| lexical(&path))
}

fn lexical(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::from("/");
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

/// The lock file's name: the end of the key, readable, and a hash of all of it (a file
/// name is limited to 255 bytes; a key is a whole path). FNV-1a, since it must be the
/// same in every perflab build, which std's hasher does not promise.
fn lock_file_name(key: &Path) -> String {
    let bytes = key.as_os_str().as_bytes();
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let readable: String = String::from_utf8_lossy(bytes)
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '!'
            }
        })
        .collect();
    let tail = &readable[readable.len().saturating_sub(120)..];
    format!("{tail}.{hash:016x}.lock")
}

/// Who holds a target, as its lock file records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The target's key ([`target_key`]).
    pub target: PathBuf,
    pub pid: u32,
    #[serde(default)]
    pub start_ticks: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The holder's command line, shortened.
    #[serde(default)]
    pub command: String,
    /// The perflab run it measures, where known.
    #[serde(default)]
    pub run: Option<i64>,
    /// The journal (absolute) where the holder records the target's original.
    pub journal: PathBuf,
    /// The knob setting that first claimed the target.
    #[serde(default)]
    pub knob: String,
    #[serde(default)]
    pub since_unix_ms: u64,
}

impl Holder {
    pub fn owner(&self) -> Owner {
        Owner {
            pid: self.pid,
            start_ticks: self.start_ticks,
            boot_id: self.boot_id.clone(),
        }
    }

    /// `perflab pid 812 (`perflab run --workload null`, run 7) for thp=never, 12 s ago`.
    pub fn describe(&self) -> String {
        let mut what = format!("perflab pid {}", self.pid);
        let mut about = Vec::new();
        if !self.command.is_empty() {
            about.push(format!("`{}`", self.command));
        }
        if let Some(run) = self.run {
            about.push(format!("run {run}"));
        }
        if !about.is_empty() {
            what.push_str(&format!(" ({})", about.join(", ")));
        }
        if !self.knob.is_empty() {
            what.push_str(&format!(" for {}", self.knob));
        }
        let ago = unix_ms().saturating_sub(self.since_unix_ms) / 1000;
        if self.since_unix_ms > 0 {
            what.push_str(&format!(", {ago} s ago"));
        }
        what
    }
}

/// This process's command line for a person: the program's file name and its arguments,
/// at most 200 characters.
pub(crate) fn command_line() -> String {
    let mut args = std::env::args_os();
    let mut words: Vec<String> = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .unwrap_or(p.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .into_iter()
        .collect();
    words.extend(args.map(|a| a.to_string_lossy().into_owned()));
    let line = words.join(" ");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line,
    }
}

/// The lock file of a target (which exists only while it is held, or was left by a holder
/// that did not finish).
pub fn lock_file(target: &Path) -> Result<PathBuf, KnobError> {
    Ok(lock_dir()?.join(lock_file_name(target)))
}

/// A held lock on one target.
#[derive(Debug)]
pub(crate) struct TargetLock {
    file: File,
    path: PathBuf,
}

impl TargetLock {
    /// Locks `me.target`, or says who holds it (or left it changed) and changes nothing.
    pub(crate) fn acquire(me: &Holder) -> Result<Self, KnobError> {
        let dir = lock_dir()?;
        sweep_once(&dir);
        let path = lock_file(&me.target)?;
        // Each pass loses only to a holder that released (and removed) the file between
        // our open and our lock; a few passes are plenty.
        for _ in 0..64 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| KnobError::io(&path, e))?;
            if !try_lock(&file).map_err(|e| KnobError::io(&path, e))? {
                return Err(held_by_another(me, &file));
            }
            if !is_at(&file, &path) {
                continue;
            }
            if let Some(left) = read_record(&file) {
                left_changed(&me.target, &left).map_err(|e| resume_hint(e, me))?;
            }
            write_record(&file, me).map_err(|e| KnobError::io(&path, e))?;
            return Ok(Self { file, path });
        }
        Err(KnobError::io(
            &path,
            std::io::Error::other("the lock file kept being replaced; try again"),
        ))
    }

    /// Removes the lock file, then unlocks: the target is back as it was found.
    pub(crate) fn release(self) {
        let _ = fs::remove_file(&self.path);
        drop(self.file);
    }
}

/// What the refused run does next, where it is a stored run: it exists already, so
/// resuming it finishes it.
fn resume_hint(err: KnobError, me: &Holder) -> KnobError {
    match (err, me.run) {
        (KnobError::Held { target, why }, Some(run)) => KnobError::Held {
            target,
            why: format!("{why}, then resume this run with `perflab run --resume {run}`"),
        },
        (err, _) => err,
    }
}

/// The error for a target another live process has locked.
fn held_by_another(me: &Holder, file: &File) -> KnobError {
    // The holder writes its record just after locking: give it a moment.
    let mut holder = read_record(file);
    for _ in 0..20 {
        if holder.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
        holder = read_record(file);
    }
    let who = holder.map_or_else(
        || "another perflab (its lock file names no holder yet)".to_string(),
        |h| h.describe(),
    );
    let next = match me.run {
        Some(run) => format!("resume this run with `perflab run --resume {run}`"),
        None => "run again".to_string(),
    };
    KnobError::Held {
        target: me.target.clone(),
        why: format!(
            "in use by {who}; refused rather than journal its temporary value as the \
             original: {next} once it has finished"
        ),
    }
}

/// Refuses a target that a holder which did not finish left changed: its journal still
/// holds the original, so the value now there is not the machine's.
fn left_changed(target: &Path, left: &Holder) -> Result<(), KnobError> {
    if booted_since(left.boot_id.as_deref()) {
        return Ok(());
    }
    let owner = left.owner();
    let held = |why: String| KnobError::Held {
        target: target.to_path_buf(),
        why,
    };
    let entries = journal::entries(&left.journal).map_err(|e| {
        held(format!(
            "{} did not release it, and its journal cannot be read to see whether it put the \
             original back: {e}",
            left.describe()
        ))
    })?;
    let unrestored = entries.iter().any(|e| {
        matches!(e.action, Action::Write { .. })
            && e.owner() == owner
            && target_key(&SysRoot::at(&e.root), &e.path) == target
    });
    if !unrestored {
        return Ok(());
    }
    let state = if owner.is_alive() {
        "is still running but failed to put the original back"
    } else {
        "ended without putting the original back"
    };
    Err(held(format!(
        "changed by {}, which {state}; run `perflab restore --journal {}` first",
        left.describe(),
        left.journal.display()
    )))
}

/// Takes the lock without waiting; false when another open file holds it.
fn try_lock(file: &File) -> std::io::Result<bool> {
    loop {
        // SAFETY: the descriptor is open for the duration of the call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(err),
        }
    }
}

/// Whether the locked file is still the one at `path`: a holder releasing removes it,
/// and a lock on a removed file protects nothing.
fn is_at(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn read_record(file: &File) -> Option<Holder> {
    let mut bytes = Vec::new();
    let mut reader = file;
    reader.seek(SeekFrom::Start(0)).ok()?;
    reader.take(64 * 1024).read_to_end(&mut bytes).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_record(file: &File, me: &Holder) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(me).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    file.set_len(0)?;
    file.write_all_at(&bytes, 0)
}

/// Once per process, removes lock files whose holder did not finish and whose record no
/// longer matters: its target is gone (a test tree since deleted), it is from another
/// boot, or its journal holds nothing of it. Without this, every killed run would leave a
/// file behind for good.
fn sweep_once(dir: &Path) {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| sweep(dir));
}

fn sweep(dir: &Path) {
    let Ok(list) = fs::read_dir(dir) else {
        return;
    };
    for entry in list.flatten() {
        let path = entry.path();
        if path.extension() != Some(std::ffi::OsStr::new("lock")) {
            continue;
        }
        let Ok(file) = OpenOptions::new().read(true).write(true).open(&path) else {
            continue;
        };
        if !try_lock(&file).unwrap_or(false) || !is_at(&file, &path) {
            continue;
        }
        let obsolete = match read_record(&file) {
            Some(left) => !left.target.exists() || left_changed(&left.target, &left).is_ok(),
            // Nobody's record: a holder killed between creating and writing it.
            None => true,
        };
        if obsolete {
            let _ = fs::remove_file(&path);
        }
    }
}

/// After `perflab restore` put back an entry of a holder that did not finish, removes the
/// record it left on the target, if the lock is free and the record is that holder's.
pub(crate) fn clear_left(target: &Path, owner: &Owner) {
    let Ok(path) = lock_file(target) else {
        return;
    };
    let Ok(file) = OpenOptions::new().read(true).write(true).open(&path) else {
        return;
    };
    if try_lock(&file).unwrap_or(false)
        && is_at(&file, &path)
        && read_record(&file).is_some_and(|h| h.owner() == *owner)
    {
        let _ = fs::remove_file(&path);
    }
}

/// The targets one journal handle holds, with the entries it journaled for each and has
/// not restored yet. Dropped with the handle's last clone: a target whose originals are
/// all back is released cleanly; one still changed keeps its record for the next claimer.
#[derive(Debug, Default)]
pub(crate) struct Targets {
    held: HashMap<PathBuf, Held>,
}

#[derive(Debug)]
struct Held {
    lock: TargetLock,
    unrestored: BTreeSet<EntryId>,
}

impl Targets {
    /// Locks the target unless this handle holds it already.
    pub(crate) fn claim(&mut self, me: Holder) -> Result<(), KnobError> {
        if self.held.contains_key(&me.target) {
            return Ok(());
        }
        let lock = TargetLock::acquire(&me)?;
        self.held.insert(
            me.target,
            Held {
                lock,
                unrestored: BTreeSet::new(),
            },
        );
        Ok(())
    }

    pub(crate) fn journaled(&mut self, target: &Path, id: EntryId) {
        if let Some(h) = self.held.get_mut(target) {
            h.unrestored.insert(id);
        }
    }

    pub(crate) fn restored(&mut self, ids: &[EntryId]) {
        for h in self.held.values_mut() {
            h.unrestored.retain(|id| !ids.contains(id));
        }
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        for (_, held) in self.held.drain() {
            if held.unrestored.is_empty() {
                held.lock.release();
            }
            // Else the lock closes with its record in place: see `left_changed`.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Journal;
    use proptest::prelude::*;

    #[test]
    fn keys_are_canonical_and_names_fit_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("root/sys/a")).unwrap();
        fs::write(dir.path().join("root/sys/a/f"), "0\n").unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("root/sys/link")).unwrap();
        let sys = SysRoot::at(dir.path().join("root"));
        let key = target_key(&sys, "sys/a/f");
        assert!(key.is_absolute());
        assert_eq!(target_key(&sys, "/sys/link/f"), key);
        assert_eq!(target_key(&sys, "sys/a/../a/f"), key);
        let missing = target_key(&sys, "sys/a/../b/none");
        assert!(missing.ends_with("root/sys/b/none"), "{missing:?}");

        let long = PathBuf::from(format!("/{}", "x/".repeat(400)));
        let name = lock_file_name(&long);
        assert!(name.len() < 255, "{name}");
        assert_ne!(name, lock_file_name(&long.join("y")));
        assert_eq!(
            lock_file_name(Path::new("/sys/kernel/mm/transparent_hugepage/enabled")),
            lock_file_name(Path::new("/sys/kernel/mm/transparent_hugepage/enabled"))
        );
        assert!(
            lock_file_name(Path::new("/sys/kernel/mm/transparent_hugepage/enabled"))
                .starts_with("sys!kernel!mm!transparent_hugepage!enabled.")
        );
    }

    #[test]
    fn holders_describe_themselves_on_one_line() {
        let h = Holder {
            target: "/sys/x".into(),
            pid: 812,
            start_ticks: Some(5),
            boot_id: None,
            command: "perflab run --workload null".into(),
            run: Some(7),
            journal: "/tmp/j.json".into(),
            knob: "thp=never".into(),
            since_unix_ms: unix_ms(),
        };
        let d = h.describe();
        assert!(
            d.starts_with("perflab pid 812 (`perflab run --workload null`, run 7) for thp=never, "),
            "{d}"
        );
        assert!(!d.contains('\n'));
    }

    fn holder(target: &Path, journal: &Path, pid: u32) -> Holder {
        let me = Owner::current();
        Holder {
            target: target.to_path_buf(),
            pid,
            start_ticks: me.start_ticks,
            boot_id: me.boot_id,
            command: "perflab run".into(),
            run: None,
            journal: journal.to_path_buf(),
            knob: "fake=1".into(),
            since_unix_ms: unix_ms(),
        }
    }

    #[test]
    fn a_left_record_blocks_only_while_its_journal_holds_the_original() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("root/sys/kernel")).unwrap();
        fs::write(dir.path().join("root/sys/kernel/perflab_fake"), "0\n").unwrap();
        let sys = SysRoot::at(dir.path().join("root"));
        let target = target_key(&sys, "sys/kernel/perflab_fake");
        let journal_path = dir.path().join("left.json");
        let me = holder(&target, &dir.path().join("mine.json"), std::process::id());

        // Garbage, or nobody's record (a holder killed before it wrote one): taken.
        let path = lock_file(&target).unwrap();
        fs::write(&path, "not json").unwrap();
        TargetLock::acquire(&me).unwrap().release();
        assert!(!path.exists());

        // A holder that did not finish, whose journal holds its original: refused.
        let journal = Journal::open(&journal_path).unwrap();
        journal
            .save_original(&sys, "sys/kernel/perflab_fake", "fake=1")
            .unwrap();
        let left = holder(&target, &journal_path, std::process::id());
        drop(journal);
        assert!(path.exists(), "an unrestored entry keeps the record");
        let recorded = fs::read(&path).unwrap();
        let got: Holder = serde_json::from_slice(&recorded).unwrap();
        assert_eq!((got.pid, &got.journal), (left.pid, &left.journal));
        // Its owner is this very process, so it counts as still running.
        let err = TargetLock::acquire(&me).unwrap_err().to_string();
        assert!(
            err.contains("is still running but failed to put the original back"),
            "{err}"
        );
        assert!(err.contains("perflab restore --journal"), "{err}");
        assert_eq!(
            fs::read(&path).unwrap(),
            recorded,
            "a refusal leaves the record"
        );

        // Its entry gone (restored by hand, say): the record is stale and replaced.
        journal::modify(&journal_path, |f| {
            f.entries.clear();
            Ok(())
        })
        .unwrap();
        let lock = TargetLock::acquire(&me).unwrap();
        let now: Holder = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(now, me);
        lock.release();
    }

    proptest! {
        #[test]
        fn records_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = serde_json::from_slice::<Holder>(&bytes);
        }

        #[test]
        fn lock_file_names_are_plain_file_names(s in "\\PC{0,300}") {
            let name = lock_file_name(Path::new(&s));
            prop_assert!(!name.contains('/') && name.len() < 255 && name.ends_with(".lock"));
        }
    }
}
