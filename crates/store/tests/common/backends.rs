//! The same test on every backend: a test written as `fn name(db: TestDb)` and listed in
//! [`both_backends!`] runs as `sqlite::name` on a file in a temporary directory and as
//! `postgres::name` on a database of its own on the test server (skipped, saying why,
//! where there is none — see perflab-testkit's `pg`).

use perflab_store::{Location, RunId, Store};
use perflab_testkit::PgDatabase;

/// A database for one test; dropped with the test (directory removed, database dropped).
pub struct TestDb {
    pub loc: Location,
    _dir: Option<tempfile::TempDir>,
    pg: Option<PgDatabase>,
}

impl TestDb {
    /// Opens (creating or migrating) the store, as `perflab run` does.
    pub fn store(&self) -> Store {
        Store::open_location(&self.loc).unwrap_or_else(|e| panic!("opening {}: {e}", self.loc))
    }

    /// Opens the store as the reading commands do.
    pub fn existing(&self) -> Store {
        Store::open_existing_location(&self.loc)
            .unwrap_or_else(|e| panic!("opening {}: {e}", self.loc))
    }

    pub fn is_postgres(&self) -> bool {
        self.pg.is_some()
    }

    /// Rows of `table` that belong to `run`, counted with the backend's own client.
    pub fn rows(&self, table: &str, run: RunId) -> i64 {
        match &self.loc {
            Location::Sqlite(p) => rusqlite::Connection::open(p)
                .unwrap()
                .query_row(
                    &format!("SELECT count(*) FROM {table} WHERE run_id = ?1"),
                    [run],
                    |r| r.get(0),
                )
                .unwrap(),
            Location::Postgres(url) => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                c.query_one(
                    &format!("SELECT count(*) FROM {table} WHERE run_id = $1"),
                    &[&run],
                )
                .unwrap()
                .get(0)
            }
        }
    }

    /// Runs SQL on the database directly (a test that prepares a state the API would
    /// never leave).
    pub fn execute(&self, sql: &str) {
        match &self.loc {
            Location::Sqlite(p) => rusqlite::Connection::open(p)
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            Location::Postgres(url) => postgres::Client::connect(url, postgres::NoTls)
                .unwrap()
                .batch_execute(sql)
                .unwrap(),
        }
    }
}

pub fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().unwrap();
    TestDb {
        loc: Location::Sqlite(dir.path().join("results.db")),
        _dir: Some(dir),
        pg: None,
    }
}

/// A fresh PostgreSQL database; `None` (with the skip reported) where no server is.
#[track_caller]
pub fn postgres() -> Option<TestDb> {
    let pg = perflab_testkit::pg_database()?;
    Some(TestDb {
        loc: Location::Postgres(pg.url.clone()),
        _dir: None,
        pg: Some(pg),
    })
}

/// Declares `sqlite::NAME` and `postgres::NAME` tests for each `fn NAME(db: TestDb)`.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name($crate::common::backends::sqlite())
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if let Some(db) = $crate::common::backends::postgres() {
                        super::$name(db)
                    }
                }
            )*
        }
    };
}
