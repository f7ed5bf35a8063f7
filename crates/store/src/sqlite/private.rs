//! What a results database holds (commands, `env` values, hook commands) is its user's
//! business: the directories perflab makes for it are 0700 and the file 0600. SQLite
//! gives the `-wal` and `-shm` files it makes beside a database the database file's
//! mode, and the claims file is made 0600 too (`claim.rs`).

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Makes `dir` and its missing ancestors, each 0700 (less the umask).
pub(crate) fn create_dirs(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Makes the database file, empty and 0600, when there is none, before SQLite (which
/// would make it 0644) opens it. Best effort: whatever stops this (a dangling link, a
/// directory that cannot be written) SQLite meets and reports in its own words.
pub(crate) fn create_file(path: &Path) {
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use crate::Store;

    fn mode(p: &std::path::Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_database_and_its_directories_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("share/perflab/results.db");
        let store = Store::open(&db).unwrap();
        // Kept open: the -wal and -shm files exist while a connection has them.
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(db.parent().unwrap()), 0o700);
        assert_eq!(mode(&dir.path().join("share")), 0o700);
        for side in ["results.db-wal", "results.db-shm"] {
            let p = db.parent().unwrap().join(side);
            assert!(p.exists(), "{side} missing: WAL not in use?");
            assert_eq!(mode(&p), 0o600, "{side}");
        }
        let claim = store.claim(1).unwrap();
        assert_eq!(mode(&crate::claims_path(&db)), 0o600);
        drop(claim);
    }
}
