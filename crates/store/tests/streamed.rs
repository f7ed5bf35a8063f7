//! Plans too large to hold: written from an iterator in batches, and read back pending
//! a chunk at a time, so neither a run's creation nor its runner holds the whole plan.

use crate::common;

use perflab_store::{RunStatus, StoreError};

use common::backends::TestDb;
use common::{failed, new_run, plan, record};

/// More rows than one insert batch (4,096), so the batches meet.
const N: u32 = 10_000;

fn a_streamed_plan_reads_back_as_a_plan_given_whole(db: TestDb) {
    let mut store = db.store();
    let mut run = new_run(0);
    let id = store
        .create_run_streamed(&run, plan(N).into_iter().map(Ok), 1.0)
        .unwrap();
    assert_eq!(store.plan(id).unwrap(), plan(N));
    assert_eq!(store.run(id).unwrap().planned, N);
    // The plan comes from the iterator only.
    run.plan = plan(1);
    let e = store
        .create_run_streamed(&run, std::iter::empty(), 1.0)
        .unwrap_err();
    assert!(matches!(e, StoreError::InvalidPlan(_)), "{e}");
}

fn a_streamed_plan_that_fails_part_way_stores_nothing(db: TestDb) {
    let mut store = db.store();
    let run = new_run(0);
    // A seq that does not rise, after two batches went in.
    let mut rows = plan(N);
    rows[9_000].seq = 8_999;
    let e = store
        .create_run_streamed(&run, rows.into_iter().map(Ok), 1.0)
        .unwrap_err();
    assert!(
        e.to_string().contains("seq 8999 comes after seq 8999"),
        "{e}"
    );
    // The iterator's own error, after a batch went in.
    let rows = plan(N).into_iter().map(|p| match p.seq {
        5_000 => Err(StoreError::InvalidPlan("the file changed".into())),
        _ => Ok(p),
    });
    let e = store.create_run_streamed(&run, rows, 1.0).unwrap_err();
    assert!(e.to_string().contains("the file changed"), "{e}");
    assert!(store.runs().unwrap().is_empty(), "a run was left");
}

fn pending_is_read_a_chunk_at_a_time(db: TestDb) {
    let mut store = db.store();
    let run = new_run(20);
    let id = store.create_run(&run, 1.0).unwrap();
    for p in &run.plan[..3] {
        store.record(id, &record(p, 1)).unwrap();
    }
    store.record(id, &failed(&run.plan[5], "EPERM")).unwrap();
    let seqs = |after, limit| -> Vec<u32> {
        let chunk = store.pending_after(id, after, limit).unwrap();
        chunk.iter().map(|p| p.seq).collect()
    };
    assert_eq!(seqs(None, 4), [3, 4, 5, 6]);
    assert_eq!(seqs(Some(6), 4), [7, 8, 9, 10]);
    assert_eq!(seqs(Some(17), 4), [18, 19]);
    assert!(seqs(Some(19), 4).is_empty());
    assert_eq!(store.pending_after(id, None, 1).unwrap()[0], run.plan[3]);
    // 17 pending: 8 of the first variant (seqs 4 6 … 18), 9 of the second.
    assert_eq!(
        store.pending_variants(id).unwrap(),
        [
            ("all-states".to_string(), 8),
            ("snooze-only".to_string(), 9)
        ]
    );
    store.set_status(id, RunStatus::Interrupted).unwrap();
    assert!(matches!(
        store.pending_after(id + 1, None, 4),
        Err(StoreError::NoRun { .. })
    ));
}

both_backends!(
    a_streamed_plan_reads_back_as_a_plan_given_whole,
    a_streamed_plan_that_fails_part_way_stores_nothing,
    pending_is_read_a_chunk_at_a_time,
);
