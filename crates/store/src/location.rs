//! Where a results database lives: an SQLite file or a PostgreSQL server.

use std::fmt;
use std::path::{Path, PathBuf};

/// A results database, as `--db` or `PERFLAB_DB` names it.
///
/// A PostgreSQL URL may carry a password; [`Display`](fmt::Display) never shows it, so a
/// location can go into any message or log line as it is.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://user:password@host:port/database?…`),
    /// kept whole because connecting needs it.
    Postgres(String),
}

impl Location {
    /// `postgres://` and `postgresql://` URLs (any letter case) are PostgreSQL; anything
    /// else is a file path, so a file that happens to contain a colon stays a file.
    pub fn parse(text: &str) -> Location {
        let lower = text.get(..13).unwrap_or(text).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text))
        }
    }

    /// The same rules over an OS string (`--db` arrives as a path): a URL must be UTF-8
    /// to be one, so a non-UTF-8 argument is a path.
    pub fn from_os(text: &std::ffi::OsStr) -> Location {
        match text.to_str() {
            Some(t) => Location::parse(t),
            None => Location::Sqlite(PathBuf::from(text)),
        }
    }

    /// The file, for an SQLite database.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }
}

impl From<&Location> for Location {
    fn from(l: &Location) -> Self {
        l.clone()
    }
}

impl From<PathBuf> for Location {
    fn from(p: PathBuf) -> Self {
        Location::Sqlite(p)
    }
}

impl From<&PathBuf> for Location {
    fn from(p: &PathBuf) -> Self {
        Location::Sqlite(p.clone())
    }
}

impl From<&Path> for Location {
    fn from(p: &Path) -> Self {
        Location::Sqlite(p.to_path_buf())
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// Debug goes through the redaction as well: a `{:?}` of an error must not leak either.
impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => f.debug_tuple("Sqlite").field(p).finish(),
            Location::Postgres(_) => f.debug_tuple("Postgres").field(&self.to_string()).finish(),
        }
    }
}

/// The URL with any password replaced by `***` (the rule every output of perflab uses).
fn redact(url: &str) -> String {
    perflab_core::secret::redact_url(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_postgres_and_everything_else_a_path() {
        for url in [
            "postgres://h/db",
            "postgresql://u@h/db",
            "POSTGRES://h",
            "postgres:///db?host=/run/pg",
        ] {
            assert!(Location::parse(url).is_postgres(), "{url}");
        }
        for p in [
            "results.db",
            "/x/postgres/r.db",
            "postgres:r.db",
            "file:x.db",
            "",
        ] {
            assert_eq!(
                Location::parse(p),
                Location::Sqlite(PathBuf::from(p)),
                "{p}"
            );
        }
    }

    #[test]
    fn passwords_are_never_shown() {
        let cases = [
            (
                "postgres://alice:s3cret@db.lab:5433/perf",
                "postgres://alice:***@db.lab:5433/perf",
            ),
            (
                "postgresql://alice:p@ss@h/db",
                "postgresql://alice:***@h/db",
            ),
            ("postgres://alice@h/db", "postgres://alice@h/db"),
            (
                "postgres://h/db?user=a&password=s3cret&sslmode=disable",
                "postgres://h/db?user=a&password=***&sslmode=disable",
            ),
            ("postgres://:s3cret@h", "postgres://:***@h"),
        ];
        for (url, shown) in cases {
            let loc = Location::parse(url);
            assert_eq!(loc.to_string(), shown);
            assert!(!format!("{loc:?}").contains("s3cret"));
            assert!(!format!("{loc:?}").contains("ss@"));
        }
        assert_eq!(Location::parse("/a/b.db").to_string(), "/a/b.db");
    }
}
