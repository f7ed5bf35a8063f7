//! Databases an earlier perflab made in its default data directory are 0644 in a 0755
//! directory, readable by every user of the host although they hold commands and their
//! environments. The directory is perflab's own, so the first command that opens the
//! default database there makes it private (0700, the database and its side files
//! 0600), once, and says so. A database named with `--db` or `PERFLAB_DB` is the user's
//! to place and keeps its mode.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::cli::Global;

/// Makes the default database's directory and files private when `g` names no other
/// database; says so when it changed anything.
pub fn tighten_default(g: &Global, db: &Path) {
    let named = g.db.is_some() || std::env::var_os("PERFLAB_DB").is_some_and(|v| !v.is_empty());
    if named {
        return;
    }
    if let Some(dir) = tighten(db) {
        eprintln!(
            "perflab: note: made {} private (0700, its databases 0600): it holds commands \
             and their environments",
            dir.display()
        );
    }
}

/// The directory, when anything in it was made private. Only a directory named
/// `perflab` (the default's) is touched; what this user may not change is left.
fn tighten(db: &Path) -> Option<PathBuf> {
    let dir = db
        .parent()
        .filter(|d| d.file_name() == Some("perflab".as_ref()))?;
    let mut changed = restrict(dir, 0o700);
    let beside = |suffix: &str| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    for file in [
        db.to_path_buf(),
        beside("-wal"),
        beside("-shm"),
        beside("-journal"),
        beside(".claims"),
        dir.join("fingerprint.key"),
    ] {
        changed |= restrict(&file, 0o600);
    }
    changed.then(|| dir.to_path_buf())
}

/// Sets `path` to `mode` when others or its group may reach it; whether it did.
fn restrict(path: &Path, mode: u32) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if meta.file_type().is_symlink() || meta.permissions().mode() & 0o077 == 0 {
        return false;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn an_earlier_default_directory_is_made_private_once() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("perflab");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let db = dir.join("results.db");
        for f in [&db, &dir.join("results.db.claims")] {
            std::fs::write(f, "").unwrap();
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        assert_eq!(tighten(&db), Some(dir.clone()));
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&dir.join("results.db.claims")), 0o600);
        assert_eq!(tighten(&db), None, "nothing left to change: no second note");
        // A database elsewhere is the user's to place.
        let other = home.path().join("lab/results.db");
        std::fs::create_dir(other.parent().unwrap()).unwrap();
        std::fs::write(&other, "").unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(tighten(&other), None);
        assert_eq!(mode(&other), 0o644);
    }
}
