//! The journal file on disk: read under a shared flock, changed under an exclusive one
//! and replaced atomically (temporary file, fsync, rename, fsync of the directory).
//! Target locks read other holders' journals through here too, without a handle.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::record::{parse, Entry, JournalFile};
use crate::error::KnobError;

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

pub(super) fn load(path: &Path) -> Result<JournalFile, KnobError> {
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
pub(super) struct Lock {
    _file: Option<File>,
}

impl Lock {
    pub(super) fn exclusive(journal: &Path) -> Result<Self, KnobError> {
        let path = sidecar(journal, ".lock");
        let file = open_lock_file(&path).map_err(|e| KnobError::io(&path, e))?;
        flock(&file, libc::LOCK_EX).map_err(|e| KnobError::io(&path, e))?;
        Ok(Self { _file: Some(file) })
    }

    /// A reader that may not create the lock file (a user reading root's journal) reads
    /// without it: the atomic rename already guarantees it sees a whole journal.
    pub(super) fn shared(journal: &Path) -> Result<Self, KnobError> {
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
