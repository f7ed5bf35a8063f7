//! The key secret fingerprints are made with ([`crate::secret::fingerprint`]): 32 random
//! bytes in a file only its user can read (`fingerprint.key` in perflab's data
//! directory, made 0600 in a 0700 directory on first use), so that two runs of one user
//! give one secret the same fingerprint, and a fingerprint that leaves the machine (a
//! database copied, a report mailed) cannot be checked against guesses.
//!
//! The binary says where the file is ([`use_key_file`]) before anything is fingerprinted;
//! the file is read or made on the first fingerprint only. Without a file (none named,
//! or it cannot be read or made) the key is random for this process: fingerprints then
//! still hide the secret but differ between processes, so a run resumed elsewhere must
//! be given its secret again ([`problem`] says why).

use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Bytes of key.
const LEN: usize = 32;

/// Where the key comes from, and who must own a file made for it (a `sudo perflab`
/// keeps its key in the invoking user's directory, as it does their database).
struct Source {
    path: PathBuf,
    owner: Option<(u32, u32)>,
}

static SOURCE: OnceLock<Source> = OnceLock::new();
static KEY: OnceLock<[u8; LEN]> = OnceLock::new();
static PROBLEM: OnceLock<String> = OnceLock::new();

/// Names the key file (and the user a new one is given to). False when the key is already
/// in use or a file was named before: the first choice stays.
pub fn use_key_file(path: PathBuf, owner: Option<(u32, u32)>) -> bool {
    KEY.get().is_none() && SOURCE.set(Source { path, owner }).is_ok()
}

/// The key, read or made on first use.
pub fn key() -> &'static [u8] {
    KEY.get_or_init(|| {
        let Some(src) = SOURCE.get() else {
            let _ = PROBLEM.set("no fingerprint key file was named".into());
            return random().unwrap_or([0; LEN]);
        };
        match load_or_create(&src.path, src.owner) {
            Ok(k) => k,
            Err(e) => {
                let _ = PROBLEM.set(format!("fingerprint key {}: {e}", src.path.display()));
                random().unwrap_or([0; LEN])
            }
        }
    })
}

/// Why this process's key is its own random one (fingerprints then differ from other
/// processes'), once [`key`] has been used; `None` when it came from the key file.
pub fn problem() -> Option<&'static str> {
    PROBLEM.get().map(String::as_str)
}

/// The key in `path` (64 hex digits on its first line), made with fresh random bytes when
/// the file is missing: written to a private temporary file and linked into place, so
/// that two processes starting together both end up with the one that won.
pub fn load_or_create(path: &Path, owner: Option<(u32, u32)>) -> std::io::Result<[u8; LEN]> {
    match read(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        other => return other,
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Every directory made here is private and, under sudo, the user's.
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .collect();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        for d in missing {
            chown(d, owner)?;
        }
    }
    let key = random()?;
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let text: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let written = f
        .write_all(format!("{text}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| chown(&tmp, owner));
    drop(f);
    let linked = written.and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key),
        // Another process made it first: theirs is the key.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => read(path),
        Err(e) => Err(e),
    }
}

fn read(path: &Path) -> std::io::Result<[u8; LEN]> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(4096)
        .read_to_string(&mut text)?;
    let line = text.lines().next().unwrap_or("").trim();
    let bad = || std::io::Error::new(ErrorKind::InvalidData, "not 64 hex digits");
    if line.len() != 2 * LEN {
        return Err(bad());
    }
    let mut key = [0u8; LEN];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(line.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16)
            .map_err(|_| bad())?;
    }
    Ok(key)
}

fn chown(path: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
    match owner {
        Some((uid, gid)) => std::os::unix::fs::chown(path, Some(uid), Some(gid)),
        None => Ok(()),
    }
}

fn random() -> std::io::Result<[u8; LEN]> {
    let mut buf = [0u8; LEN];
    let mut got = 0;
    while got < LEN {
        // SAFETY: getrandom writes at most LEN - got bytes into the buffer we own.
        let n = unsafe { libc::getrandom(buf[got..].as_mut_ptr().cast(), LEN - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_key_file_is_made_private_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/perflab/fingerprint.key");
        let a = load_or_create(&path, None).unwrap();
        let b = load_or_create(&path, None).unwrap();
        assert_eq!(a, b, "the second use reads the first's key");
        assert_ne!(a, [0; LEN]);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["fingerprint.key"]);
    }

    #[test]
    fn a_damaged_key_file_is_an_error_not_a_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fingerprint.key");
        std::fs::write(&path, "not hex\n").unwrap();
        let e = load_or_create(&path, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not hex\n");
    }
}
