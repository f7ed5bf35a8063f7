//! One health check for every command, reading or writing, run when a database is opened
//! and before anything is written to it: a damaged database that still opens would
//! otherwise take new runs (every later read of it failing, theirs included), a table
//! gone missing would leave every new run interrupted at its first measurement, and
//! writing into a damaged b-tree can spread the damage.
//!
//! What it finds is the same for every command; what a command does with it differs: one
//! that writes is refused ([`StoreError::Damaged`]) and writes nothing, one that reads is
//! told and gets what can still be read (`ls` lists every run but those named as bad).
//!
//! This part holds for every backend: the tables of the schema are there, and every run's
//! own row reads back. SQLite adds a check of the file's pages (`crate::sqlite`).

use crate::migrate::supported;
use crate::read::readable_runs;
use crate::schema::MIGRATIONS;
use crate::sql::{Dialect, Query, QueryExt};
use crate::{Location, RunId, StoreError};

/// The tables every schema version from 1 on has.
const TABLES: [&str; 9] = [
    "meta",
    "runs",
    "unavailable",
    "plan",
    "measurements",
    "metrics",
    "histograms",
    "threads",
    "telemetry",
];

/// What the check found wrong with a database; nothing, for a sound one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Health {
    /// Damage to the database as a whole: a page that does not check, a table missing.
    pub damage: Vec<String>,
    /// Runs whose own row does not read back, each with why; the other runs read as ever.
    pub bad_runs: Vec<(RunId, String)>,
}

impl Health {
    pub fn is_sound(&self) -> bool {
        self.damage.is_empty() && self.bad_runs.is_empty()
    }

    /// Everything found, on one line.
    pub fn summary(&self) -> String {
        let runs = self
            .bad_runs
            .iter()
            .map(|(id, why)| format!("run {id}: {why}"));
        self.damage
            .iter()
            .cloned()
            .chain(runs)
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The refusal of a write into this database, or `Ok` for a sound one.
    pub(crate) fn refuse_writes(&self, db: &Location) -> Result<(), StoreError> {
        if self.is_sound() {
            return Ok(());
        }
        Err(StoreError::Damaged {
            db: db.clone(),
            reason: self.summary(),
        })
    }

    /// Notes a bad run once (the SQLite text check and the decoding may both find it).
    pub(crate) fn bad_run(&mut self, id: RunId, why: String) {
        if !self.bad_runs.iter().any(|(seen, _)| *seen == id) {
            self.bad_runs.push((id, why));
        }
    }
}

/// The checks every backend shares, added to `health`: the schema's tables are there
/// (for a database at schema version 1 or later) and every run's row reads back (in a
/// database at this build's version: an older one's rows lack columns the reader reads,
/// until its migration adds them).
pub(crate) fn check_schema_and_runs(
    q: &mut dyn Query,
    version: u32,
    health: &mut Health,
) -> Result<(), StoreError> {
    if version == 0 {
        return Ok(());
    }
    let present = q.query_all(tables_sql(q.dialect()), &[], |r| r.text(0))?;
    let missing: Vec<&str> = TABLES
        .into_iter()
        .filter(|t| !present.iter().any(|p| p == t))
        .collect();
    if !missing.is_empty() {
        let (tables, are) = match missing.len() {
            1 => ("table", "is"),
            _ => ("tables", "are"),
        };
        health
            .damage
            .push(format!("{tables} {} {are} missing", missing.join(", ")));
        // The runs cannot be read whole without them; the damage says enough.
        return Ok(());
    }
    if version < supported(MIGRATIONS) {
        return Ok(());
    }
    let (_, bad) = readable_runs(q)?;
    for (id, why) in bad {
        health.bad_run(id, why);
    }
    Ok(())
}

/// The names of the tables in the schema the database's unqualified names resolve to.
fn tables_sql(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "SELECT name FROM sqlite_schema WHERE type = 'table'",
        Dialect::Postgres => {
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = current_schema()"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_damage_then_each_bad_run_once() {
        let mut h = Health::default();
        assert!(h.is_sound());
        assert!(h.refuse_writes(&Location::parse("x.db")).is_ok());
        h.damage.push("table metrics is missing".into());
        h.bad_run(2, "its spec does not read back".into());
        h.bad_run(2, "again".into());
        assert_eq!(
            h.summary(),
            "table metrics is missing; run 2: its spec does not read back"
        );
        let e = h.refuse_writes(&Location::parse("x.db")).unwrap_err();
        assert!(e.is_input(), "{e}");
        assert!(
            e.to_string().contains("x.db is damaged (table metrics"),
            "{e}"
        );
    }
}
