//! Opening (and creating) the database file.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::At;
use crate::migrate::{bring_up_to_date, inspect, supported, DbState};
use crate::schema::MIGRATIONS;
use crate::{Store, StoreError};

/// How long a writer waits for another process's transaction (a concurrent `perflab run`
/// or `label`) before giving up; commits are short, so this only trips on a stuck process.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

impl Store {
    /// Opens the database at `path`, creating it and its directories if missing, and
    /// migrating an older schema. A file that is not a perflab database, or one from a newer
    /// perflab, is refused and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        open_with(path, OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Opens a database that must already exist, for commands that only look at results.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        open_with(path, OpenFlags::empty())
    }
}

fn open_with(path: &Path, extra: OpenFlags) -> Result<Store, StoreError> {
    // No SQLITE_OPEN_URI: a file named "file:..." is a file, not a URI.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra;
    let mut conn = Connection::open_with_flags(path, flags).at(path)?;
    conn.busy_timeout(BUSY_TIMEOUT).at(path)?;
    conn.pragma_update(None, "foreign_keys", true).at(path)?;

    // Everything up to here is per-connection; the file is first written below, after it is
    // known to be ours and not newer.
    if let DbState::Perflab { version } = inspect(&conn, path)? {
        let target = supported(MIGRATIONS);
        if version > target {
            return Err(StoreError::NewerSchema {
                path: path.to_path_buf(),
                found: version,
                supported: target,
            });
        }
    }
    // WAL lets readers run beside the writer; with synchronous=NORMAL a commit appends to
    // the log without an fsync, which keeps a commit per measurement cheap.
    use_wal(&conn, path)?;
    conn.pragma_update(None, "synchronous", "NORMAL").at(path)?;
    bring_up_to_date(&mut conn, path, MIGRATIONS)?;
    Ok(Store {
        conn,
        path: path.to_path_buf(),
    })
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
