//! Where a target's lock lives: the key that names a target system wide (its canonical
//! path) and the lock file made from it, in a directory only its user can change.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use perflab_sys::SysRoot;

use crate::error::KnobError;

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
pub(super) fn lock_file_name(key: &Path) -> String {
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

/// The lock file of a target (which exists only while it is held, or was left by a holder
/// that did not finish).
pub fn lock_file(target: &Path) -> Result<PathBuf, KnobError> {
    Ok(lock_dir()?.join(lock_file_name(target)))
}

#[cfg(test)]
mod tests {
    use super::*;
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

    proptest! {
        #[test]
        fn lock_file_names_are_plain_file_names(s in "\\PC{0,300}") {
            let name = lock_file_name(Path::new(&s));
            prop_assert!(!name.contains('/') && name.len() < 255 && name.ends_with(".lock"));
        }
    }
}
