//! Reading a database this process cannot write (a read-only file, directory or mount):
//! it opens read-only, writes nothing (not even a -wal or -shm), and refuses what would
//! need a write with a message that says so.
//!
//! The reads happen in a helper process that sees the directory read-only (a read-only
//! bind mount in a private mount namespace as root; write bits removed otherwise).

use crate::common;

use std::path::{Path, PathBuf};

use perflab_store::{MeasurementRecord, Store, StoreError};
use perflab_testkit::{helper_env, ReadOnlyView};

use common::{bytes, new_run, record};

const DB_VAR: &str = "PERFLAB_TEST_READONLY_DB";
const EXPECT_VAR: &str = "PERFLAB_TEST_READONLY_EXPECT";

/// What the helper must find: a JSON list of every measurement of run 1, or an error text.
fn expect_file(dir: &Path) -> PathBuf {
    dir.with_extension("expect.json")
}

/// Runs the helper on `db` seeing its directory read-only; its stderr when it failed.
fn read_in_helper(db: &Path, expect: &str) -> Option<Result<(), String>> {
    let dir = db.parent().unwrap();
    let expect_path = expect_file(dir);
    std::fs::write(&expect_path, expect).unwrap();
    let view = ReadOnlyView::of(dir)?;
    let out = view
        .command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "readonly::helper_reads_read_only",
            "--ignored",
            "--nocapture",
        ])
        .env(DB_VAR, db)
        .env(EXPECT_VAR, &expect_path)
        .output()
        .unwrap();
    drop(view);
    let said = String::from_utf8_lossy(&out.stdout);
    Some(if out.status.success() {
        // A filter that matched nothing would pass too.
        assert!(said.contains("1 passed"), "the helper did not run: {said}");
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    })
}

#[test]
#[ignore = "helper process: run by the read-only tests with the database's directory read-only"]
fn helper_reads_read_only() {
    let db = PathBuf::from(helper_env(DB_VAR, "the read-only tests"));
    let expect = std::fs::read_to_string(helper_env(EXPECT_VAR, "the read-only tests")).unwrap();
    // Writing is what this view forbids: the store says why, naming the file.
    assert!(Store::open(&db).is_err());
    if expect.starts_with('[') {
        // Compared as JSON text: the same values print the same, while parsing the text
        // back may round a float by one unit in the last place.
        let n = serde_json::from_str::<Vec<serde_json::Value>>(&expect)
            .unwrap()
            .len();
        let store = Store::open_existing(&db).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.runs().unwrap().len(), 1);
        assert_eq!(store.run(1).unwrap().done, n as u32);
        let got = serde_json::to_string(&store.measurements(1).unwrap()).unwrap();
        assert!(
            got == expect,
            "the measurements read back differ from those recorded"
        );
        assert!(store.plan(1).unwrap().len() >= n);
    } else {
        let e = Store::open_existing(&db).unwrap_err();
        assert!(e.is_input(), "{e}");
        assert!(e.to_string().contains(expect.trim()), "{e}");
    }
}

/// A database with run 1 holding `n` measurements, closed cleanly; the records.
fn database(db: &Path, n: u32) -> Vec<MeasurementRecord> {
    let mut store = Store::open(db).unwrap();
    let run = new_run(n + 2);
    let id = store.create_run(&run, 1.0).unwrap();
    let recs: Vec<_> = run.plan[..n as usize]
        .iter()
        .map(|p| record(p, 6))
        .collect();
    for r in &recs {
        store.record(id, r).unwrap();
    }
    recs
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                bytes(&e.path()),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_read_only_database_is_read_and_left_as_it_was() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("results.db");
    let recs = database(&db, 5);
    assert!(!dir.join("results.db-wal").exists(), "closed cleanly");
    let before = files(&dir);
    let Some(outcome) = read_in_helper(&db, &serde_json::to_string(&recs).unwrap()) else {
        return;
    };
    outcome.unwrap();
    assert_eq!(files(&dir), before, "a read-only open wrote something");
}

/// A copy taken while perflab was writing: the -wal file holds commits, and there is no
/// -shm (SQLite needs to create one to read the log, and cannot). It opens `immutable`,
/// reading what the main file holds.
#[test]
fn a_wal_database_without_its_shm_file_still_opens() {
    let top = tempfile::tempdir().unwrap();
    let live = top.path().join("live");
    let dir = top.path().join("ro");
    std::fs::create_dir_all(&live).unwrap();
    std::fs::create_dir(&dir).unwrap();
    let src = live.join("results.db");
    let recs = database(&src, 3);
    // Everything checkpointed into the main file, then one more commit left in the log by
    // a writer still open.
    let mut writer = Store::open(&src).unwrap();
    {
        let c = rusqlite::Connection::open(&src).unwrap();
        c.pragma_update(None, "wal_checkpoint", "TRUNCATE").ok();
        let _: i64 = c
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .unwrap();
    }
    let extra = record(&writer.plan(1).unwrap()[3], 1);
    writer.record(1, &extra).unwrap();
    std::fs::copy(&src, dir.join("results.db")).unwrap();
    std::fs::copy(live.join("results.db-wal"), dir.join("results.db-wal")).unwrap();
    assert!(std::fs::metadata(dir.join("results.db-wal")).unwrap().len() > 0);
    drop(writer);
    let before = files(&dir);
    let Some(outcome) = read_in_helper(
        &dir.join("results.db"),
        &serde_json::to_string(&recs).unwrap(),
    ) else {
        return;
    };
    outcome.unwrap();
    assert_eq!(files(&dir), before);
}

#[test]
fn an_older_read_only_database_is_refused_saying_to_copy_it() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("results.db");
    database(&db, 1);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        // Back to version 4: without what versions 5 (run uids), 6 (histogram ranges) and 7
        // (disturbed marks)
        // added, so the migration finds the file as a version-4 perflab left it.
        "ALTER TABLE measurements DROP COLUMN disturbed; \
         DROP INDEX runs_uid; ALTER TABLE runs DROP COLUMN uid; \
         ALTER TABLE histograms DROP COLUMN above; \
         ALTER TABLE histograms DROP COLUMN above_count; \
         UPDATE meta SET value = '4' WHERE key = 'schema_version';",
    )
    .unwrap();
    drop(c);
    let before = files(&dir);
    let Some(outcome) = read_in_helper(&db, "copy it somewhere writable") else {
        return;
    };
    outcome.unwrap();
    assert_eq!(files(&dir), before);
    // Writable again, the same file is migrated as usual.
    assert!(Store::open_existing(&db).is_ok());
    let _ = StoreError::Missing { path: db };
}
