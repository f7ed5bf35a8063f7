//! The streaming read: `visit_measurements` hands out exactly what `measurements` reads,
//! in the same order, across chunk boundaries, and a visitor's error stops it.

use crate::common;

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
        .visit_measurements(id, &mut |_| true, &mut |m| {
            visited.push(m);
            Ok(())
        })
        .unwrap();
    assert_eq!(visited, whole);
}

/// Telemetry rows come only with the records the filter takes (asked in seq order), and
/// nothing else of a record changes.
fn the_telemetry_filter_leaves_out_only_telemetry(db: TestDb) {
    let mut store = db.store();
    let run = new_run(700);
    let id = store.create_run(&run, 1.0).unwrap();
    for p in &run.plan {
        store.record(id, &record(p, 4)).unwrap();
    }
    let whole = store.measurements(id).unwrap();
    let mut asked = Vec::new();
    let mut visited = Vec::new();
    // The first 300 and every 7th: whole chunks without any, and chunks with some.
    let mut wanted = |m: &perflab_store::MeasurementRecord| {
        asked.push(m.seq);
        m.seq < 300 || m.seq.is_multiple_of(7)
    };
    store
        .visit_measurements(id, &mut wanted, &mut |m| {
            visited.push(m);
            Ok(())
        })
        .unwrap();
    let seqs: Vec<u32> = whole.iter().map(|m| m.seq).collect();
    assert_eq!(asked, seqs);
    assert_eq!(visited.len(), whole.len());
    for (v, w) in visited.iter().zip(&whole) {
        let mut w = w.clone();
        if !(w.seq < 300 || w.seq.is_multiple_of(7)) {
            w.telemetry.clear();
        }
        assert!(!v.telemetry.is_empty() || w.telemetry.is_empty());
        assert_eq!(*v, w);
    }
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
        .visit_measurements(id, &mut |_| true, &mut |_| {
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
    let e = store
        .visit_measurements(99, &mut |_| true, &mut |_| Ok(()))
        .unwrap_err();
    assert!(matches!(e, StoreError::NoRun { id: 99, .. }), "{e}");
}

both_backends!(
    visiting_reads_what_measurements_reads,
    the_telemetry_filter_leaves_out_only_telemetry,
    a_visitors_error_stops_the_read,
    visiting_a_missing_run_names_it,
);
