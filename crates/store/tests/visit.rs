//! The streaming read: `visit_measurements` hands out exactly what `measurements` reads,
//! in the same order, across chunk boundaries, and a visitor's error stops it.

mod common;

use perflab_store::StoreError;

use common::backends::TestDb;
use common::{failed, new_run, record};

/// More measurements than one chunk holds, with gaps in the recorded seqs (a failed and
/// an unrecorded one), so chunk edges fall between and on them.
fn visiting_reads_what_measurements_reads(db: TestDb) {
    let mut store = db.store();
    let n = 600;
    let run = new_run(n);
    let id = store.create_run(&run, 1.0).unwrap();
    for p in &run.plan {
        match p.seq {
            // Never recorded: a gap the chunks must step over.
            s if s % 97 == 5 => {}
            s if s % 41 == 3 => store.record(id, &failed(p, "died")).unwrap(),
            _ => store.record(id, &record(p, 3)).unwrap(),
        }
    }
    let whole = store.measurements(id).unwrap();
    assert!(whole.len() > 300 && whole.len() < n as usize);
    let mut visited = Vec::new();
    store
        .visit_measurements(id, &mut |m| {
            visited.push(m);
            Ok(())
        })
        .unwrap();
    assert_eq!(visited, whole);
}

fn a_visitors_error_stops_the_read(db: TestDb) {
    let mut store = db.store();
    let run = new_run(4);
    let id = store.create_run(&run, 1.0).unwrap();
    for p in &run.plan {
        store.record(id, &record(p, 1)).unwrap();
    }
    let mut seen = 0;
    let e = store
        .visit_measurements(id, &mut |_| {
            seen += 1;
            Err(StoreError::Visitor("disk full".into()))
        })
        .unwrap_err();
    assert_eq!(seen, 1);
    assert!(matches!(&e, StoreError::Visitor(inner) if inner.to_string() == "disk full"));
    // The read left no transaction open: the store is usable.
    assert_eq!(store.measurements(id).unwrap().len(), 4);
}

fn visiting_a_missing_run_names_it(db: TestDb) {
    let store = db.store();
    let e = store.visit_measurements(99, &mut |_| Ok(())).unwrap_err();
    assert!(matches!(e, StoreError::NoRun { id: 99, .. }), "{e}");
}

both_backends!(
    visiting_reads_what_measurements_reads,
    a_visitors_error_stops_the_read,
    visiting_a_missing_run_names_it,
);
