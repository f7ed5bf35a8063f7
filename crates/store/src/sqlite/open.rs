//! Opening (and creating) the database file, or reading one this process cannot write.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::inspect::inspect;
use super::SqliteEngine;
use crate::engine::Engine;
use crate::error::At;
use crate::migrate::{bring_up_to_date, newer, refuse_newer, supported, DbState};
use crate::schema::MIGRATIONS;
use crate::StoreError;

/// How long a writer waits for another process's transaction (a concurrent `perflab run`
/// or `label`) before giving up; commits are short, so this only trips on a stuck process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

impl SqliteEngine {
    /// Opens the database at `path`, creating it and its directories if missing, and
    /// migrating an older schema. A file that is not a perflab database, or one from a newer
    /// perflab, is refused and left untouched.
    pub(crate) fn open(path: &Path) -> Result<SqliteEngine, StoreError> {
        check_file_path(path)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            super::private::create_dirs(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        super::private::create_file(path);
        // A database this process may not write is refused before SQLite is asked to
        // open it for writing (it would answer "unable to open database file").
        if path.exists() && !writable(path) {
            return Err(StoreError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        open_with(path, OpenFlags::SQLITE_OPEN_CREATE, Purpose::Write)
    }

    /// Opens a database that must already exist, for commands that only look at results.
    /// One this process cannot write (a read-only file or mount, an immutable file) is
    /// opened read-only: nothing is written to it, not even a pragma, and it is not
    /// migrated — an older schema is refused with [`StoreError::ReadOnlyOld`].
    pub(crate) fn open_existing(path: &Path) -> Result<SqliteEngine, StoreError> {
        check_file_path(path)?;
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        if !writable(path) {
            return open_read_only(path);
        }
        match open_with(path, OpenFlags::empty(), Purpose::Read) {
            // A file the permission check let through can still refuse writes (a
            // directory where the -wal and -shm files cannot be created).
            Err(StoreError::Sql { source, .. }) if is_read_only_error(&source) => {
                open_read_only(path)
            }
            other => other,
        }
    }
}

/// Refuses what cannot be an SQLite file before SQLite is asked: a directory (SQLite
/// answers "disk I/O error"), a file too short to be a database (below), or a URL of a
/// database perflab does not speak (`mysql://…` would otherwise become directories
/// `mysql:/…` and a file).
pub fn check_file_path(path: &Path) -> Result<(), StoreError> {
    if path.is_dir() {
        return Err(StoreError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    too_short(path)?;
    dangling_link(path)?;
    let text = path.to_string_lossy();
    if in_memory(&text) {
        return Err(StoreError::InMemory {
            path: path.to_path_buf(),
        });
    }
    if let Some((scheme, _)) = text.split_once("://") {
        let is_scheme = scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
        if is_scheme {
            return Err(StoreError::UnsupportedScheme {
                scheme: scheme.to_string(),
            });
        }
    }
    Ok(())
}

/// The smallest SQLite database that is not empty: one page of the smallest page size.
const SMALLEST_DATABASE: u64 = 512;

/// Refuses a file of 1 to 511 bytes: no SQLite database is that long, and SQLite itself
/// reports a 1-byte file as empty (its Unix layer's workaround for a filesystem that
/// needed one byte written to a new file), so it would have become a new perflab
/// database over whatever the byte was. An empty file is a database not created yet.
fn too_short(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && (1..SMALLEST_DATABASE).contains(&m.len()) => {
            Err(crate::migrate::not_perflab(
                &path.into(),
                format!(
                    "it is not an SQLite database: {} byte{} long, where a database is empty \
                     or at least {SMALLEST_DATABASE} bytes",
                    m.len(),
                    if m.len() == 1 { "" } else { "s" }
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// Refuses a symbolic link whose target lies in a directory that does not exist, for
/// reading and writing alike (SQLite would answer "unable to open database file" to one,
/// "no results database" to the other). A link to a missing file in a directory that
/// exists is a database not created yet: a run creates it there.
fn dangling_link(path: &Path) -> Result<(), StoreError> {
    let is_link = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    if !is_link || path.exists() {
        return Ok(());
    }
    let Ok(target) = std::fs::read_link(path) else {
        return Ok(());
    };
    let full = match path.parent() {
        Some(dir) if target.is_relative() => dir.join(&target),
        _ => target.clone(),
    };
    match full.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(StoreError::DanglingLink {
                path: path.to_path_buf(),
                target,
            })
        }
        _ => Ok(()),
    }
}

/// SQLite's names for a database in memory: `:memory:`, and (SQLite reads `file:` names as
/// URIs) `file::memory:` or any `file:` name with `mode=memory`.
fn in_memory(text: &str) -> bool {
    text == ":memory:"
        || text
            .strip_prefix("file:")
            .is_some_and(|uri| uri.starts_with(":memory:") || uri.contains("mode=memory"))
}

/// The name SQLite is given for `path`: the path itself, except that a relative path
/// starting with `file:` gets a leading `./`, since SQLite (built to read URIs) would take
/// `file:x.db` as the URI of `x.db` while every other part of perflab (the claims file
/// beside it, the messages) means the file `file:x.db`.
fn sqlite_name(path: &Path) -> std::borrow::Cow<'_, Path> {
    if path.to_string_lossy().starts_with("file:") {
        std::borrow::Cow::Owned(Path::new(".").join(path))
    } else {
        std::borrow::Cow::Borrowed(path)
    }
}

/// Whether this process may write the file: `access(2)` answers for root too where it
/// matters (a read-only mount is EROFS, an immutable file EPERM), unlike the mode bits.
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

fn is_read_only_error(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied)
    )
}

/// A read-only connection that writes nothing. A WAL database whose `-shm` file is
/// missing beside a directory this process cannot write cannot be read that way
/// (SQLite must create the `-shm` to read the log); it is opened `immutable=1` then,
/// which reads the main file only — what a cleanly closed database holds entirely.
fn open_read_only(path: &Path) -> Result<SqliteEngine, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(sqlite_name(path), flags).at(path)?;
    let (conn, state) = match inspect(&conn, path) {
        Ok(state) => (conn, state),
        Err(StoreError::Sql { source, .. }) if is_read_only_error(&source) => {
            drop(conn);
            let conn = Connection::open_with_flags(
                immutable_uri(path),
                flags | OpenFlags::SQLITE_OPEN_URI,
            )
            .at(path)?;
            let state = inspect(&conn, path)?;
            (conn, state)
        }
        Err(e) => return Err(e),
    };
    conn.busy_timeout(BUSY_TIMEOUT).at(path)?;
    let target = supported(MIGRATIONS);
    match state {
        DbState::Empty => Err(StoreError::NotPerflab {
            db: path.into(),
            reason: "it is an empty database".into(),
        }),
        DbState::Perflab { version } if version > target => {
            Err(newer(&path.into(), version, MIGRATIONS))
        }
        DbState::Perflab { version } if version < target => Err(StoreError::ReadOnlyOld {
            path: path.to_path_buf(),
            found: version,
            supported: target,
        }),
        DbState::Perflab { version } => {
            let mut engine = SqliteEngine::new(conn, path);
            engine.health = super::health::check(&engine, version);
            Ok(engine)
        }
    }
}

/// `file:<absolute path>?immutable=1`, with the characters a URI gives meaning to escaped.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        match b {
            b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(b as char),
            b if b.is_ascii_alphanumeric() => uri.push(b as char),
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// What a read-write connection is opened for: both get the same health check; only a
/// command that records is refused a damaged file, one that reads may still get out of it
/// what can be read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Write,
    Read,
}

fn open_with(path: &Path, extra: OpenFlags, purpose: Purpose) -> Result<SqliteEngine, StoreError> {
    // A file named "file:..." is a file, not a URI (see `sqlite_name`).
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra;
    let conn = Connection::open_with_flags(sqlite_name(path), flags).at(path)?;
    conn.busy_timeout(BUSY_TIMEOUT).at(path)?;
    conn.pragma_update(None, "foreign_keys", true).at(path)?;

    // Everything up to here is per-connection; the file is first written below, after it is
    // known to be ours and not newer.
    let state = refuse_newer(&path.into(), inspect(&conn, path)?, MIGRATIONS)?;
    let mut backend = SqliteEngine::new(conn, path);
    if let DbState::Perflab { version } = state {
        backend.health = super::health::check(&backend, version);
        if !backend.health.is_sound() {
            // Nothing is written into a damaged file: a writer is refused; a reader reads
            // it as it is, neither switched to WAL nor migrated (an older one cannot be
            // read without migrating, so it is refused as a writer is).
            if purpose == Purpose::Write || version < supported(MIGRATIONS) {
                backend.health.refuse_writes(&backend.location)?;
            }
            return Ok(backend);
        }
    }
    // WAL lets readers run beside the writer; with synchronous=NORMAL a commit appends to
    // the log without an fsync, which keeps a commit per measurement cheap.
    use_wal(&backend.conn, path)?;
    backend
        .conn
        .pragma_update(None, "synchronous", "NORMAL")
        .at(path)?;
    bring_up_to_date(backend.begin()?, MIGRATIONS)?;
    Ok(backend)
}

/// Puts the database in WAL mode unless it is already. Switching needs the file to itself
/// for a moment, and SQLite answers SQLITE_BUSY at once, without calling the busy handler,
/// while another connection reads it: exactly what happens when several processes create
/// the same new database together. So a busy switch is retried until [`BUSY_TIMEOUT`].
/// A file system without WAL support keeps its mode; that is not an error.
fn use_wal(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    loop {
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .at(path)?;
        if mode.eq_ignore_ascii_case("wal") {
            return Ok(());
        }
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(e) if is_busy(&e) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(e).at(path),
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}
