//! Opening a PostgreSQL store: what `open` creates, and what it refuses and leaves as it
//! was (someone else's database, a newer perflab's, an unreachable server).

use crate::common;

use perflab_store::schema::SCHEMA_VERSION;
use perflab_store::{Location, Store, StoreError};

use common::backends::{postgres, TestDb};
use common::{new_run, record};

fn meta(db: &TestDb, key: &str) -> Option<String> {
    let Location::Postgres(url) = &db.loc else {
        unreachable!()
    };
    let mut c = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    c.query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
        .unwrap()
        .map(|r| r.get(0))
}

/// Every table of the public schema with its row count: what "untouched" compares.
fn tables(db: &TestDb) -> Vec<(String, i64)> {
    let Location::Postgres(url) = &db.loc else {
        unreachable!()
    };
    let mut c = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let names: Vec<String> = c
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'public' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    names
        .into_iter()
        .map(|t| {
            let n: i64 = c
                .query_one(&format!("SELECT count(*) FROM \"{t}\""), &[])
                .unwrap()
                .get(0);
            (t, n)
        })
        .collect()
}

#[test]
fn a_new_database_gets_the_schema_and_keeps_what_was_recorded() {
    let Some(db) = postgres() else { return };
    // Reading commands do not build tables on a server: an empty database is refused.
    let e = Store::open_existing_location(&db.loc).unwrap_err();
    assert!(matches!(e, StoreError::NotPerflab { .. }), "{e}");
    assert!(tables(&db).is_empty());

    let mut store = db.store();
    assert_eq!(meta(&db, "application").as_deref(), Some("perflab"));
    assert_eq!(
        meta(&db, "schema_version"),
        Some(SCHEMA_VERSION.to_string())
    );
    let run = new_run(3);
    let id = store.create_run(&run, 5.0).unwrap();
    store.record(id, &record(&run.plan[0], 4)).unwrap();
    drop(store);
    let again = db.existing();
    assert_eq!(again.run(id).unwrap().done, 1);
    assert_eq!(again.location(), &db.loc);
    assert_eq!(again.path(), None);
}

#[test]
fn another_applications_database_is_refused_untouched() {
    let Some(db) = postgres() else { return };
    db.execute("CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner TEXT); INSERT INTO accounts VALUES (1, 'x');");
    let before = tables(&db);
    for e in [
        Store::open_location(&db.loc).unwrap_err(),
        Store::open_existing_location(&db.loc).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::NotPerflab { .. }), "{e}");
        assert!(
            e.to_string().contains("without perflab's meta table"),
            "{e}"
        );
        assert!(e.is_input());
    }
    // A meta table of someone else's shape, and one naming another application.
    db.execute("CREATE TABLE meta (k INT, v INT);");
    let e = Store::open_location(&db.loc).unwrap_err();
    assert!(e.to_string().contains("not perflab's"), "{e}");
    db.execute("DROP TABLE meta; CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('application', 'other');");
    let e = Store::open_location(&db.loc).unwrap_err();
    assert!(e.to_string().contains("\"other\""), "{e}");
    let mut after = tables(&db);
    after.retain(|(t, _)| t != "meta");
    assert_eq!(after, before);
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let Some(db) = postgres() else { return };
    drop(db.store());
    let newer = SCHEMA_VERSION + 7;
    db.execute(&format!(
        "UPDATE meta SET value = '{newer}' WHERE key = 'schema_version'"
    ));
    let before = tables(&db);
    for e in [
        Store::open_location(&db.loc).unwrap_err(),
        Store::open_existing_location(&db.loc).unwrap_err(),
    ] {
        match &e {
            StoreError::NewerSchema {
                db: at,
                found,
                supported,
            } => {
                assert_eq!(at, &db.loc);
                assert_eq!((*found, *supported), (newer, SCHEMA_VERSION));
            }
            other => panic!("expected NewerSchema, got {other}"),
        }
        assert!(e.to_string().contains("upgrade perflab"), "{e}");
    }
    assert_eq!(tables(&db), before);
    assert_eq!(meta(&db, "schema_version"), Some(newer.to_string()));
}

/// Several perflab processes opening one new database at once: the advisory lock lets
/// one create the schema, and every one of them opens it.
#[test]
fn openers_racing_on_a_new_database_all_succeed() {
    let Some(db) = postgres() else { return };
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let loc = db.loc.clone();
            std::thread::spawn(move || {
                let mut s = Store::open_location(&loc)?;
                s.create_run(&new_run(1), 1.0)
            })
        })
        .collect();
    let mut ids: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
    assert_eq!(
        meta(&db, "schema_version"),
        Some(SCHEMA_VERSION.to_string())
    );
}

/// A server that cannot be reached is the user's to fix: an input error, one line, that
/// names the server without its password.
#[test]
fn an_unreachable_server_is_an_input_error_without_the_password() {
    // A port nothing listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://alice:s3cret-pw@127.0.0.1:{port}/results");
    for e in [
        Store::open_location(&Location::parse(&url)).unwrap_err(),
        Store::open_existing_location(&Location::parse(&url)).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::Connect { .. }), "{e}");
        assert!(e.is_input());
        let text = e.to_string();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(!format!("{e:?}").contains("s3cret"), "{e:?}");
        assert!(
            text.contains(&format!("postgres://alice:***@127.0.0.1:{port}/results")),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }
    let e = Store::open_location(&Location::parse("postgres://h:notaport/db")).unwrap_err();
    assert!(matches!(e, StoreError::Connect { .. }), "{e}");
    assert!(e.to_string().contains("not a usable PostgreSQL URL"), "{e}");
}

/// The health check holds on PostgreSQL as on a file (issue 31 item 10): a run row whose
/// spec does not read back, or a table gone, refuses a writer before it writes anything,
/// and a reader is told which run and still reads the others.
#[test]
fn a_damaged_database_is_refused_for_writing_and_read_around() {
    let Some(db) = postgres() else { return };
    let Location::Postgres(url) = &db.loc else {
        unreachable!()
    };
    let mut store = db.store();
    let first = store.create_run(&new_run(1), 1.0).unwrap();
    let bad = store.create_run(&new_run(1), 2.0).unwrap();
    drop(store);
    let mut c = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    c.execute("UPDATE runs SET spec = '{bad' WHERE id = $1", &[&bad])
        .unwrap();
    let before = tables(&db);
    let Err(e) = Store::open_location(&db.loc) else {
        panic!("a writer is let into a damaged database");
    };
    assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("run {bad}: its spec does not read back")),
        "{e}"
    );
    assert_eq!(tables(&db), before);
    let reader = Store::open_existing_location(&db.loc).unwrap();
    assert_eq!(reader.health().bad_runs.len(), 1);
    let (runs, unreadable) = reader.readable_runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [first]);
    assert_eq!(unreadable[0].0, bad);
    drop(reader);

    c.execute(
        "UPDATE runs SET spec = (SELECT spec FROM runs WHERE id = $1)",
        &[&first],
    )
    .unwrap();
    c.batch_execute("DROP TABLE threads").unwrap();
    let Err(e) = Store::open_location(&db.loc) else {
        panic!("a writer is let into a damaged database");
    };
    assert!(e.to_string().contains("table threads is missing"), "{e}");
}
