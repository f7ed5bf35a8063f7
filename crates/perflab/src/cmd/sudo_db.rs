//! `sudo perflab run …`: the results go to the invoking user's database, not root's, and
//! the files perflab creates there belong to that user, so that `perflab ls` afterwards,
//! without sudo, finds the run and can write to the database. The rules are
//! [`perflab_store::sudo_user_from`]; this file asks the system (euid, passwd) and chowns.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use perflab_store::{PasswdEntry, SudoUser};

use crate::cli::Global;

/// The user behind `sudo`, when the database is theirs by default (no `--db`, no
/// `PERFLAB_DB`). A `SUDO_USER` the system does not know is said once, and root's own
/// default is used.
pub fn sudo_user(g: &Global) -> Option<SudoUser> {
    if g.db.is_some() {
        return None;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    match perflab_store::sudo_user_from(euid, |n| std::env::var_os(n), getpwnam) {
        Ok(user) => user,
        Err(why) => {
            eprintln!("perflab: warning: {why}; using root's own results database");
            None
        }
    }
}

/// [`sudo_user`] without its warning (said where the database is opened).
pub fn sudo_user_quiet(g: &Global) -> Option<SudoUser> {
    if g.db.is_some() {
        return None;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    perflab_store::sudo_user_from(euid, |n| std::env::var_os(n), getpwnam)
        .ok()
        .flatten()
}

/// The passwd entry of `name`, through the system's resolver (files, LDAP, …).
fn getpwnam(name: &str) -> Option<PasswdEntry> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: an all-zero passwd is a valid value of this plain C struct; getpwnam_r
        // fills it with pointers into `buf`, which outlives every read below.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pw,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || result.is_null() || pw.pw_dir.is_null() {
            return None;
        }
        // SAFETY: pw_dir points to a NUL-terminated string inside `buf`.
        let home = unsafe { CStr::from_ptr(pw.pw_dir) };
        return Some(PasswdEntry {
            uid: pw.pw_uid,
            gid: pw.pw_gid,
            home: PathBuf::from(std::ffi::OsStr::from_bytes(home.to_bytes())),
        });
    }
}

/// The directories opening a database at `path` will create, outermost first: those
/// between it and its first existing ancestor.
pub fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

/// Gives `user` the database at `db`, the files beside it that SQLite and perflab create
/// (`-wal`, `-shm`, and `.claims`, made now so that a root-owned one never appears
/// later), and `dirs`, the directories perflab created for it.
pub fn give_to(user: &SudoUser, db: &Path, dirs: &[PathBuf]) -> std::io::Result<()> {
    let claims = perflab_store::claims_path(db);
    std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false),
        0o600,
    )
    .open(&claims)?;
    let beside = |suffix: &str| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let files = [db.to_path_buf(), beside("-wal"), beside("-shm"), claims];
    for path in dirs.iter().chain(files.iter()) {
        match std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid)) {
            Ok(()) => {}
            // -wal and -shm exist only while a connection has them open.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("chown {} to {}: {e}", path.display(), user.name),
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_dirs_are_those_below_the_first_existing_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a/b/c/results.db");
        assert_eq!(
            missing_dirs(&db),
            [
                dir.path().join("a"),
                dir.path().join("a/b"),
                dir.path().join("a/b/c")
            ]
        );
        std::fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
        assert!(missing_dirs(&db).is_empty());
        assert!(missing_dirs(Path::new("results.db")).is_empty());
    }

    #[test]
    fn root_is_in_the_passwd_database() {
        let root = getpwnam("root").expect("root has a passwd entry");
        assert_eq!((root.uid, root.gid), (0, 0));
        assert!(root.home.is_absolute());
        assert_eq!(getpwnam("no such user, surely"), None);
        assert_eq!(getpwnam("nul\0byte"), None);
    }
}
