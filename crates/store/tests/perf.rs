//! Recording and loading a realistic run of 1,000 measurements with 50 telemetry rows each.
//! Prints timings (run with --release --nocapture to see them); asserts correctness only.

use crate::common;

use std::time::Instant;

use common::backends::TestDb;
use common::{new_run, record};

fn thousand_measurements_record_and_load(db: TestDb) {
    const N: u32 = 1000;
    let mut store = db.store();
    let run = new_run(N);
    let t = Instant::now();
    let id = store.create_run(&run, 1.0).unwrap();
    let create = t.elapsed();
    let recs: Vec<_> = run.plan.iter().map(|p| record(p, 50)).collect();

    let mut each = Vec::with_capacity(recs.len());
    let t = Instant::now();
    for rec in &recs {
        let one = Instant::now();
        store.record(id, rec).unwrap();
        each.push(one.elapsed());
    }
    let recording = t.elapsed();
    each.sort();
    let at = |q: f64| each[((each.len() - 1) as f64 * q) as usize];

    let t = Instant::now();
    let back = store.measurements(id).unwrap();
    let load = t.elapsed();
    assert_eq!(back.len(), recs.len());
    assert!(
        back == recs,
        "loaded measurements differ from the recorded ones"
    );

    let t = Instant::now();
    let info = store.run(id).unwrap();
    let pending = store.pending(id).unwrap();
    let summary = t.elapsed();
    assert_eq!((info.planned, info.done, info.failed), (N, N, 0));
    assert!(pending.is_empty());

    // The file and its log, for SQLite (a server's size is not this run's alone).
    let size = store.path().map_or(0, |p| {
        let wal = p.with_extension("db-wal");
        [p, wal.as_path()]
            .iter()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum::<u64>()
    });
    eprintln!(
        "{}: create_run with {N} planned: {create:?}; record: mean {:?} per measurement \
         (median {:?}, p90 {:?}, worst {:?}, total {recording:?}); load {N} measurements: \
         {load:?}; run()+pending(): {summary:?}; db+wal {:.1} MiB",
        if db.is_postgres() {
            "postgres"
        } else {
            "sqlite"
        },
        recording / N,
        at(0.5),
        at(0.9),
        at(1.0),
        size as f64 / (1024.0 * 1024.0)
    );
}

both_backends!(thousand_measurements_record_and_load);
