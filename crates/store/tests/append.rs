//! Appending to a run's plan (adaptive repetitions): order and repetition numbers continue,
//! the planned count grows, and what was appended is pending until measured.

use crate::common;

use perflab_store::{PlannedMeasurement, StoreError};

use common::backends::TestDb;
use common::{new_run, params, record, VARIANTS};

/// One more repetition of both variants at `point`, starting at `seq`.
fn extra(seq: u32, point: u32, rep: u32) -> Vec<PlannedMeasurement> {
    VARIANTS
        .iter()
        .enumerate()
        .map(|(i, v)| PlannedMeasurement {
            seq: seq + i as u32,
            point,
            params: params(point),
            variant: v.to_string(),
            rep,
            role: Default::default(),
        })
        .collect()
}

fn appended_measurements_continue_the_plan_and_are_pending(db: TestDb) {
    let mut store = db.store();
    // Two points × two variants × three reps: seqs 0..12, reps 0..3 per point and variant.
    let id = store.create_run(&new_run(12), 1.0).unwrap();
    for p in store.plan(id).unwrap() {
        store.record(id, &record(&p, 2)).unwrap();
    }
    assert!(store.pending(id).unwrap().is_empty());

    let more = extra(12, 1, 3);
    assert_eq!(store.append_plan(id, &more).unwrap(), 14);
    let info = store.run(id).unwrap();
    assert_eq!((info.planned, info.done), (14, 12));
    assert_eq!(store.pending(id).unwrap(), more);
    let plan = store.plan(id).unwrap();
    assert_eq!(plan.len(), 14);
    assert_eq!(&plan[12..], &more[..]);

    // Appended measurements are recorded like planned ones.
    store.record(id, &record(&more[0], 0)).unwrap();
    assert_eq!(store.pending(id).unwrap(), more[1..].to_vec());
    let again = extra(14, 1, 4);
    assert_eq!(store.append_plan(id, &again).unwrap(), 16);
    assert_eq!(store.pending(id).unwrap().len(), 3);
    assert_eq!(store.run(id).unwrap().done, 13);
}

fn appends_that_would_reorder_or_repeat_are_refused(db: TestDb) {
    let mut store = db.store();
    let id = store.create_run(&new_run(12), 1.0).unwrap();
    let before = store.plan(id).unwrap();
    // A seq inside the existing plan would change its execution order.
    let e = store.append_plan(id, &extra(11, 0, 3)).unwrap_err();
    assert!(matches!(e, StoreError::InvalidPlan(_)), "{e}");
    assert!(e.to_string().contains("seq 11"), "{e}");
    // A repetition number already planned at the point and variant.
    let e = store.append_plan(id, &extra(12, 0, 2)).unwrap_err();
    assert!(e.to_string().contains("rep 2 is already planned"), "{e}");
    // The same seq twice within one append.
    let mut twice = extra(12, 0, 3);
    twice[1].seq = 12;
    assert!(store.append_plan(id, &twice).is_err());
    // Nothing of a refused append is kept.
    assert_eq!(store.plan(id).unwrap(), before);
    let e = store.append_plan(id + 1, &extra(12, 0, 3)).unwrap_err();
    assert!(matches!(e, StoreError::NoRun { .. }), "{e}");
    // Appending nothing changes nothing.
    assert_eq!(store.append_plan(id, &[]).unwrap(), 12);
}

both_backends!(
    appended_measurements_continue_the_plan_and_are_pending,
    appends_that_would_reorder_or_repeat_are_refused,
);
