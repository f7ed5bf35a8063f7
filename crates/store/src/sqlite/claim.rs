//! One process measures a run at a time (SQLite).
//!
//! Two `perflab run --resume N` at once would both read the same pending list, measure
//! every point twice, disturb each other's numbers and race to record them. A claim is an
//! open-file-description lock on byte `N` of one sidecar file beside the database
//! (`<db>.claims`): the kernel drops it when the process exits however it exits, so a
//! killed run never stays claimed, and one file serves every run without littering the
//! directory.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::{Claim, RunId, StoreError};

/// The sidecar file that holds every run's claim for the database at `db`.
pub fn claims_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".claims");
    PathBuf::from(name)
}

/// Claims `run` in the database at `db`, or says that another process holds it.
pub(crate) fn take(db: &Path, run: RunId) -> Result<Claim, StoreError> {
    let path = claims_path(db);
    let failed = |reason: String| StoreError::Claim {
        db: db.into(),
        run,
        reason,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .map_err(|e| failed(format!("{}: {e}", path.display())))?;
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = run.max(0) as libc::off_t;
    lock.l_len = 1;
    // SAFETY: the descriptor is open for the call and `lock` outlives it.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &lock) };
    if rc == 0 {
        return Ok(Claim::holding(file));
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Err(StoreError::Claimed { db: db.into(), run }),
        // A file system without record locks (some network mounts) or a kernel before
        // 3.15 cannot hold a claim: the run goes on unguarded rather than not at all,
        // as it did before claims existed.
        Some(libc::ENOLCK) | Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) => {
            Ok(Claim::holding(file))
        }
        _ => Err(failed(format!("{}: {err}", path.display()))),
    }
}

/// Whether some process holds the claim on `run` now, without taking it (a reader may
/// not even be able to write the claims file). No claims file means no claim was ever
/// taken here, so none is held.
pub(crate) fn held(db: &Path, run: RunId) -> Result<bool, StoreError> {
    let path = claims_path(db);
    let file = match OpenOptions::new().read(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(StoreError::Claim {
                db: db.into(),
                run,
                reason: format!("{}: {e}", path.display()),
            })
        }
    };
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = run.max(0) as libc::off_t;
    lock.l_len = 1;
    // SAFETY: the descriptor is open for the call and `lock` outlives it. F_OFD_GETLK
    // only reports: it takes nothing.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) };
    if rc != 0 {
        return Err(StoreError::Claim {
            db: db.into(),
            run,
            reason: format!("{}: {}", path.display(), std::io::Error::last_os_error()),
        });
    }
    Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_on_the_same_run_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.db");
        let first = take(&db, 3).unwrap();
        // An OFD lock conflicts with another open of the same file even in one process,
        // which is what lets this test stand in for a second process.
        let err = take(&db, 3).unwrap_err();
        assert!(err.is_input(), "{err}");
        assert!(err.to_string().contains("run 3 is being measured"), "{err}");
        let other = take(&db, 4).unwrap();
        drop(first);
        let again = take(&db, 3).unwrap();
        drop((other, again));
        assert!(claims_path(&db).exists());
    }

    #[test]
    fn held_says_whether_a_claim_is_held_without_taking_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.db");
        assert!(!held(&db, 3).unwrap(), "no claims file, no claim");
        let claim = take(&db, 3).unwrap();
        assert!(held(&db, 3).unwrap());
        assert!(held(&db, 3).unwrap(), "asking must not take it");
        assert!(!held(&db, 4).unwrap());
        drop(claim);
        assert!(!held(&db, 3).unwrap());
        take(&db, 3).unwrap();
    }
}
