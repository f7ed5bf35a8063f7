//! Opening: creation, refusals that leave files untouched, migrations from older versions.

use crate::common;

use std::path::Path;

use perflab_store::schema::SCHEMA_VERSION;
use perflab_store::{Store, StoreError};
use proptest::prelude::*;

use common::{bytes, new_run, record};

fn meta(path: &Path, key: &str) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .unwrap()
}

#[test]
fn creates_missing_directories_and_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/results.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), Some(path.as_path()));
    assert!(store.runs().unwrap().is_empty());
    drop(store);
    assert_eq!(meta(&path, "application"), "perflab");
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
    // Opening again keeps what is there.
    let mut store = Store::open(&path).unwrap();
    let id = store.create_run(&new_run(3), 1.0).unwrap();
    drop(store);
    assert_eq!(Store::open(&path).unwrap().run(id).unwrap().planned, 3);
}

#[test]
fn uses_wal_and_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let _store = Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn an_empty_file_becomes_a_database() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let store = Store::open(file.path()).unwrap();
    assert!(store.runs().unwrap().is_empty());
}

#[test]
fn open_existing_says_how_to_get_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nothing.db");
    let e = Store::open_existing(&path).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }));
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("(run `perflab run` first)"), "{msg}");
    assert!(!path.exists(), "open_existing must not create the file");
    drop(Store::open(&path).unwrap());
    assert!(Store::open_existing(&path).is_ok());
}

#[test]
fn newer_schema_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut store = Store::open(&path).unwrap();
    let run = new_run(4);
    let id = store.create_run(&run, 1.0).unwrap();
    store.record(id, &common::record(&run.plan[0], 10)).unwrap();
    drop(store);
    let newer = SCHEMA_VERSION + 7;
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            [newer.to_string()],
        )
        .unwrap();
    }
    let before = bytes(&path);
    for e in [
        Store::open(&path).unwrap_err(),
        Store::open_existing(&path).unwrap_err(),
    ] {
        match &e {
            StoreError::NewerSchema {
                db,
                found,
                supported,
            } => {
                assert_eq!(db.path(), Some(path.as_path()));
                assert_eq!(*found, newer);
                assert_eq!(*supported, SCHEMA_VERSION);
            }
            other => panic!("expected NewerSchema, got {other}"),
        }
        assert!(e.to_string().contains("upgrade perflab"), "{e}");
        assert!(e.is_input());
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    }
    assert!(bytes(&path) == before, "a newer database was modified");
}

#[test]
fn a_rollback_journal_database_from_a_newer_perflab_keeps_its_journal_mode() {
    // The refusal must happen before journal_mode=WAL, which rewrites the file header.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO meta VALUES ('application', 'perflab'), ('schema_version', '999');
             CREATE TABLE future (x);",
        )
        .unwrap();
    }
    let before = bytes(&path);
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::NewerSchema { found: 999, .. })
    ));
    assert!(bytes(&path) == before);
    assert!(!dir.path().join("r.db-wal").exists());
}

#[test]
fn garbage_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in [
        (
            "big.db",
            (0..8192u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect::<Vec<u8>>(),
        ),
        ("small.db", b"hello, not a database\n".to_vec()),
        ("text.db", b"SQLite format 2\0 but not really".repeat(20)),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &content).unwrap();
        let e = Store::open(&path).unwrap_err();
        assert!(matches!(e, StoreError::NotPerflab { .. }), "{name}: {e}");
        assert!(
            e.to_string().contains("not a perflab results database"),
            "{e}"
        );
        assert!(e.to_string().contains(name), "{e}");
        assert!(bytes(&path) == content, "{name} was modified");
        assert!(Store::open_existing(&path).is_err());
        assert!(bytes(&path) == content, "{name} was modified");
    }
}

#[test]
fn another_applications_sqlite_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("places.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');",
        )
        .unwrap();
    }
    let before = bytes(&path);
    let e = Store::open(&path).unwrap_err();
    assert!(
        e.to_string().contains("without perflab's meta table"),
        "{e}"
    );
    assert!(bytes(&path) == before);
}

#[test]
fn an_older_schema_is_migrated_on_open() {
    // Version 0: a database that has perflab's meta but none of the tables yet.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
             INSERT INTO meta VALUES ('application', 'perflab'), ('schema_version', '0');",
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let id = store.create_run(&new_run(2), 5.0).unwrap();
    assert_eq!(store.run(id).unwrap().planned, 2);
    drop(store);
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
}

/// What version 7 added (disturbed marks), taken away again.
const UNDO_V7: &str = "ALTER TABLE measurements DROP COLUMN disturbed;";

/// What version 6 added (histogram ranges), taken away again, with what came later.
const UNDO_V6: &str = "ALTER TABLE measurements DROP COLUMN disturbed;
     ALTER TABLE histograms DROP COLUMN above;
     ALTER TABLE histograms DROP COLUMN above_count;";

/// What version 5 added (run uids), taken away again, with what came later.
const UNDO_V5: &str = "ALTER TABLE measurements DROP COLUMN disturbed;
     ALTER TABLE histograms DROP COLUMN above;
     ALTER TABLE histograms DROP COLUMN above_count;
     DROP INDEX runs_uid; ALTER TABLE runs DROP COLUMN uid;";

/// What version 4 added (roles, ineffective marks, monitor lists), taken away again.
const UNDO_V4: &str = "ALTER TABLE measurements DROP COLUMN disturbed;
     ALTER TABLE histograms DROP COLUMN above;
     ALTER TABLE histograms DROP COLUMN above_count;
     DROP INDEX runs_uid; ALTER TABLE runs DROP COLUMN uid;
     ALTER TABLE plan DROP COLUMN role;
     ALTER TABLE measurements DROP COLUMN ineffective;
     ALTER TABLE measurements DROP COLUMN monitors;";

/// A database at `path` holding `run` with `rec` recorded, then taken back to an older
/// schema by `downgrade` (SQL), as a perflab of that version would have left it.
fn older_database(
    path: &std::path::Path,
    run: &perflab_store::NewRun,
    rec: &perflab_store::MeasurementRecord,
    downgrade: &str,
) {
    {
        let mut store = Store::open(path).unwrap();
        let id = store.create_run(run, 5.0).unwrap();
        store.record(id, rec).unwrap();
    }
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(downgrade).unwrap();
}

/// A version-2 database (threads without a CPU path) with a measurement in it: opening
/// adds the column, and its threads read back with an empty path and all else intact.
#[test]
fn a_version_2_database_keeps_its_threads_and_gains_cpu_paths() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    let run = new_run(1);
    let rec = record(&run.plan[0], 1);
    older_database(
        &path,
        &run,
        &rec,
        &format!(
            "ALTER TABLE threads DROP COLUMN cpu_path; {UNDO_V4}
             UPDATE meta SET value = '2' WHERE key = 'schema_version';"
        ),
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
    let back = store.measurements(1).unwrap().remove(0);
    let mut expected = rec.output.threads.clone();
    for t in &mut expected {
        t.cpu_path = Default::default();
    }
    assert_eq!(back.output.threads, expected);
    assert!(rec.output.threads.iter().any(|t| !t.cpu_path.is_empty()));
}

/// SQLite reports a 1-byte file as empty and would have written a new database over it:
/// found by `random_files_never_panic_and_are_never_modified` (its shrunk case: `[0]`).
/// Every short file is refused, for reading and writing alike, and left as it was.
#[test]
fn a_file_shorter_than_any_database_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    for content in [&b"\0"[..], b"A", b"SQLite format 3\0", &[7u8; 511]] {
        let path = dir.path().join("short.db");
        std::fs::write(&path, content).unwrap();
        let Err(e) = Store::open(&path) else {
            panic!("a file of {} bytes opened for writing", content.len());
        };
        assert!(e.to_string().contains("not an SQLite database"), "{e}");
        assert!(Store::open_existing(&path).is_err(), "opened for reading");
        assert_eq!(bytes(&path), content, "{} bytes changed", content.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_files_never_panic_and_are_never_modified(content in proptest::collection::vec(any::<u8>(), 1..3000)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        std::fs::write(&path, &content).unwrap();
        let _ = Store::open(&path);
        prop_assert!(bytes(&path) == content);
    }
}

/// A version-3 database (before roles, ineffective marks and monitor lists): its
/// measurements read back as headline results with no monitors recorded, and new ones
/// of both roles can be added.
#[test]
fn a_version_3_database_reads_back_as_headline_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    let run = new_run(2);
    let rec = record(&run.plan[0], 1);
    older_database(
        &path,
        &run,
        &rec,
        &format!("{UNDO_V4} UPDATE meta SET value = '3' WHERE key = 'schema_version';"),
    );
    let mut store = Store::open(&path).unwrap();
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
    let back = store.measurements(1).unwrap().remove(0);
    assert_eq!(back.role, perflab_store::Role::Headline);
    assert!(back.monitors.is_empty());
    assert_eq!(back.status, perflab_store::MeasurementStatus::Ok);
    assert_eq!(back.output, rec.output);
    let mut second = record(&run.plan[1], 1);
    second.status = perflab_store::MeasurementStatus::Ineffective("thp read back never".into());
    store.record(1, &second).unwrap();
    assert_eq!(store.measurements(1).unwrap()[1].status, second.status);
}

/// A version-4 database (before uids): each run gets a uid of its own on opening, and the
/// run can be found by it.
#[test]
fn a_version_4_database_gives_each_run_a_uid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    let run = new_run(2);
    let rec = record(&run.plan[0], 1);
    older_database(
        &path,
        &run,
        &rec,
        &format!("{UNDO_V5} UPDATE meta SET value = '4' WHERE key = 'schema_version';"),
    );
    {
        let mut store = Store::open(&path).unwrap();
        store.create_run(&run, 6.0).unwrap();
    }
    // The second run was added after the migration; the first got its uid from it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "{UNDO_V5} UPDATE meta SET value = '4' WHERE key = 'schema_version';"
    ))
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0].uid, runs[1].uid);
    for r in &runs {
        assert_eq!(r.uid.len(), 32, "{}", r.uid);
        assert!(r.uid.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(store.run_by_uid(&r.uid).unwrap(), Some(r.id));
    }
    assert_eq!(store.measurements(1).unwrap()[0].output, rec.output);
}

/// The stored spec is read back as the typed `RunSpec`: a run whose spec text is not
/// one (hand-edited, or damaged) is one line naming the run and what is wrong, to a
/// reader (the health check names it too, and refuses a writer), and the keys a sparse
/// spec lacks read as their defaults.
#[test]
fn a_spec_that_does_not_read_back_names_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.create_run(&new_run(2), 1.0).unwrap();
    drop(store);
    let set = |spec: &str| {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE runs SET spec = ?1", [spec]).unwrap();
    };
    set(r#"{"name": "s", "repetitions": "three"}"#);
    let reader = Store::open_existing(&path).unwrap();
    assert_eq!(reader.health().bad_runs.len(), 1, "{:?}", reader.health());
    let e = reader.run(id).unwrap_err().to_string();
    assert!(
        e.contains(&format!("run {id}")) && e.contains("its spec does not read back"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    set(r#"{"primary_metric": "bw"}"#);
    let info = Store::open(&path).unwrap().run(id).unwrap();
    assert_eq!(info.spec.primary_metric, "bw");
    assert!(info.spec.points.is_empty() && info.spec.adaptive.is_none());
}

/// A version-5 database (histograms without a fixed range): opening adds the columns, and
/// its histograms read back as they were, with no range.
#[test]
fn a_version_5_database_gains_histogram_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    let run = new_run(1);
    let rec = record(&run.plan[0], 1);
    older_database(
        &path,
        &run,
        &rec,
        &format!("{UNDO_V6} UPDATE meta SET value = '5' WHERE key = 'schema_version';"),
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
    let back = store.measurements(1).unwrap().remove(0);
    assert_eq!(back.output.histograms, rec.output.histograms);
}

/// A version-6 database (no disturbed marks): opening adds the column, its measurement
/// reads back as it was, and a disturbed one recorded afterwards reads back disturbed
/// and is counted.
#[test]
fn a_version_6_database_gains_disturbed_marks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.db");
    let run = new_run(2);
    let rec = record(&run.plan[0], 1);
    older_database(
        &path,
        &run,
        &rec,
        &format!("{UNDO_V7} UPDATE meta SET value = '6' WHERE key = 'schema_version';"),
    );
    let mut store = Store::open(&path).unwrap();
    assert_eq!(meta(&path, "schema_version"), SCHEMA_VERSION.to_string());
    assert_eq!(store.measurements(1).unwrap()[0].status, rec.status);
    assert_eq!(store.disturbed(1).unwrap(), 0);
    let mut busy = record(&run.plan[1], 1);
    busy.status = perflab_store::MeasurementStatus::Disturbed("other work took 48%".into());
    store.record(1, &busy).unwrap();
    assert_eq!(store.measurements(1).unwrap()[1].status, busy.status);
    assert_eq!(store.disturbed(1).unwrap(), 1);
    // A disturbed measurement ran: a resume does not redo it.
    assert!(store.pending(1).unwrap().is_empty());
}
