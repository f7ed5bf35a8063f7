//! Taking, refusing and releasing one target's lock file, and cleaning up the files of
//! holders that did not finish.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use perflab_sys::SysRoot;

use super::holder::Holder;
use super::paths::{lock_dir, lock_file, target_key};
use crate::error::KnobError;
use crate::journal::file as journal_file;
use crate::journal::record::Action;
use crate::owner::{booted_since, Owner};

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
                .mode(0o600)
                .open(&path)
                .map_err(|e| KnobError::io(&path, e))?;
            if !lock_past_sweepers(&file).map_err(|e| KnobError::io(&path, e))? {
                return Err(held_by_another(me, &file));
            }
            if !is_at(&file, &path) {
                continue;
            }
            if let Some(left) = read_record(&file) {
                left_changed(&me.target, &left)?;
            }
            // Private, whoever made the file: one left by an earlier perflab is 0644.
            file.set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(|e| KnobError::io(&path, e))?;
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
    // What to do next (run again, resume the stored run, wait) is the caller's to say:
    // it knows the database a resume must name.
    KnobError::InUse {
        target: me.target.clone(),
        why: format!(
            "in use by {who}; refused rather than journal its temporary value as the \
             original"
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
    let entries = journal_file::entries(&left.journal).map_err(|e| {
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

/// Takes the lock, waiting out only the moment another perflab's [`sweep`] or
/// [`clear_left`] holds it to look at a record its owner left (a start of any perflab
/// sweeps every lock file). False at once when the record names a live holder: waiting
/// for it to finish would let this run go on with the settings it found changed, and
/// record the holder's temporary value as the machine's (its fingerprint said `thp:
/// never` while the setting was `madvise`). False too when the lock stays held for two
/// seconds without a live holder's record.
fn lock_past_sweepers(file: &File) -> std::io::Result<bool> {
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    loop {
        if try_lock(file)? {
            return Ok(true);
        }
        // A sweeper locks only files no live holder has: a live holder's record here means
        // the holder itself has the lock (it writes the record just after locking).
        if read_record(file).is_some_and(|h| h.owner().is_alive()) {
            return Ok(false);
        }
        if std::time::Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
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

pub(super) fn read_record(file: &File) -> Option<Holder> {
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
    SWEPT.call_once(|| {
        sweep(dir);
    });
}

/// Removes every lock file whose holder is gone and whose journal holds nothing of its
/// target any more (what [`sweep_once`] does at a perflab's first claim), and returns
/// how many. `perflab restore` runs it after replaying the journal: a killed run leaves a
/// file for each target it claimed, including those it only relied on (nothing
/// journaled), which no journal entry leads restore to.
pub fn sweep_left() -> usize {
    lock_dir().map_or(0, |dir| sweep(&dir))
}

fn sweep(dir: &Path) -> usize {
    let Ok(list) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
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
        if obsolete && fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{unix_ms, Journal};

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
        crate::journal::modify(&journal_path, |f| {
            f.entries.clear();
            Ok(())
        })
        .unwrap();
        let lock = TargetLock::acquire(&me).unwrap();
        let now: Holder = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(now, me);
        lock.release();
    }

    /// Another perflab starting up sweeps every lock file, holding each for a moment: a
    /// target caught in that moment is not "in use" (it was reported as held by a run
    /// that had been killed). A real holder keeps it, and is refused.
    #[test]
    fn a_lock_held_only_for_a_moment_is_waited_for_one_held_on_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("root/sys/kernel")).unwrap();
        fs::write(dir.path().join("root/sys/kernel/perflab_fake"), "0\n").unwrap();
        let sys = SysRoot::at(dir.path().join("root"));
        let target = target_key(&sys, "sys/kernel/perflab_fake");
        let me = holder(&target, &dir.path().join("mine.json"), std::process::id());
        let path = lock_file(&target).unwrap();
        let glance = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .unwrap();
        assert!(try_lock(&glance).unwrap());
        let sweeper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(glance);
        });
        let lock = TargetLock::acquire(&me).expect("a sweeper's glance is waited out");
        sweeper.join().unwrap();
        let other = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        assert!(!try_lock(&other).unwrap(), "the lock is held now");
        let err = TargetLock::acquire(&me).unwrap_err().to_string();
        assert!(err.contains("in use by"), "{err}");
        lock.release();
    }
}
