//! Writing and reading back: exact round trips, counts, resume, errors naming the run.

use crate::common;

use perflab_core::{Better, Metric, TelemetryRow, Unit};
use std::time::Duration;

use perflab_store::{Location, MeasurementStatus, Role, RunStatus, StoreError};

use common::backends::TestDb;
use common::{failed, new_run, record};

fn a_run_round_trips(db: TestDb) {
    let mut store = db.store();
    let run = new_run(12);
    let id = store.create_run(&run, 1_718_000_000.5).unwrap();
    // Stored as running; it reads so while a process claims it (see
    // concurrent::a_running_run_nobody_claims_reads_as_interrupted).
    let claim = store.claim(id).unwrap();
    let info = store.run(id).unwrap();
    drop(claim);
    assert_eq!(info.id, id);
    assert_eq!(info.created_at, 1_718_000_000.5);
    assert_eq!(info.study, run.study);
    assert_eq!(info.workload, run.workload);
    assert_eq!(info.label, run.label);
    assert_eq!(info.status, RunStatus::Running);
    assert_eq!(info.spec, run.spec);
    assert_eq!(info.fingerprint, run.fingerprint);
    assert_eq!(info.unavailable, run.unavailable);
    assert_eq!((info.planned, info.done, info.failed), (12, 0, 0));
    assert_eq!(store.plan(id).unwrap(), run.plan);
    assert_eq!(store.pending(id).unwrap(), run.plan);
}

fn measurements_round_trip_exactly(db: TestDb) {
    let mut store = db.store();
    let mut run = new_run(6);
    run.plan[5].role = Role::Telemetry;
    let id = store.create_run(&run, 1.0).unwrap();
    assert_eq!(store.plan(id).unwrap(), run.plan);
    let mut recs: Vec<_> = run.plan.iter().map(|p| record(p, 50)).collect();
    recs[4].status = MeasurementStatus::Ineffective(
        "cpuidle=poll-only: state1 (haltpoll) entered 3 times".into(),
    );
    recs[0].monitors.clear();
    // Edge values: infinity, -0, huge and tiny floats, totals (cpu None), empty labels.
    recs[1].output.metrics.push(Metric::new(
        "inf",
        f64::INFINITY,
        Unit::Count,
        Better::Neither,
    ));
    recs[1]
        .output
        .metrics
        .push(Metric::new("max", f64::MAX, Unit::Bytes, Better::Higher));
    recs[1].telemetry.push(TelemetryRow::new(
        "softirqs",
        "NET_RX",
        "",
        None,
        -0.0,
        Unit::Count,
    ));
    recs[2].output = Default::default();
    recs[2].telemetry.clear();
    recs[3].status = MeasurementStatus::Failed("wakee never woke: timeout after 10 s — ✗".into());
    // Samples past a fixed range (cyclictest's overflows) come back with their range.
    recs[5].output.histograms[0].above = Some(perflab_core::AboveRange {
        limit: 50.0,
        count: 952,
    });
    // Recorded out of order: reading back is by seq.
    for i in [3, 0, 5, 1, 4, 2] {
        store.record(id, &recs[i]).unwrap();
    }
    let back = store.measurements(id).unwrap();
    assert_eq!(back.len(), recs.len());
    for (a, b) in back.iter().zip(&recs) {
        assert_eq!(a, b, "seq {}", b.seq);
    }
    assert!(!back[0].output.histograms[0].encoded.is_empty());
    assert_eq!(
        back[5].output.histograms[0].above.map(|a| a.count),
        Some(952)
    );
    assert_eq!(back[0].output.histograms[0].above, None);
    let info = store.run(id).unwrap();
    assert_eq!((info.planned, info.done, info.failed), (6, 5, 1));
}

fn nan_comes_back_as_nan(db: TestDb) {
    let mut store = db.store();
    let run = new_run(1);
    let id = store.create_run(&run, f64::NAN).unwrap();
    let mut rec = record(&run.plan[0], 2);
    rec.output.metrics[0].value = f64::NAN;
    rec.telemetry[0].value = f64::NAN;
    rec.elapsed_s = f64::NAN;
    store.record(id, &rec).unwrap();
    let back = &store.measurements(id).unwrap()[0];
    assert!(back.output.metrics[0].value.is_nan());
    assert!(back.telemetry[0].value.is_nan());
    assert!(back.elapsed_s.is_nan());
    assert!(store.run(id).unwrap().created_at.is_nan());
    assert_eq!(back.output.metrics[1], rec.output.metrics[1]);
}

fn pending_lists_what_a_resume_must_do(db: TestDb) {
    let mut store = db.store();
    let run = new_run(8);
    let id = store.create_run(&run, 1.0).unwrap();
    for p in &run.plan[..3] {
        store.record(id, &record(p, 5)).unwrap();
    }
    store.record(id, &failed(&run.plan[5], "EPERM")).unwrap();
    let pending: Vec<u32> = store.pending(id).unwrap().iter().map(|p| p.seq).collect();
    assert_eq!(pending, [3, 4, 5, 6, 7]);
    assert_eq!(store.pending(id).unwrap()[0], run.plan[3]);
    store.set_status(id, RunStatus::Interrupted).unwrap();
    let info = store.run(id).unwrap();
    assert_eq!(info.status, RunStatus::Interrupted);
    assert_eq!((info.planned, info.done, info.failed), (8, 3, 1));
}

fn a_failed_measurement_is_replaced_an_ok_one_is_not(db: TestDb) {
    let mut store = db.store();
    let run = new_run(3);
    let id = store.create_run(&run, 1.0).unwrap();
    let mut first = failed(&run.plan[1], "first try failed");
    first.telemetry.push(TelemetryRow::new(
        "interrupts",
        "LOC",
        "",
        Some(0),
        1.0,
        Unit::Count,
    ));
    store.record(id, &first).unwrap();
    store
        .record(id, &failed(&run.plan[1], "second try failed"))
        .unwrap();
    let back = store.measurements(id).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(
        back[0].status,
        MeasurementStatus::Failed("second try failed".into())
    );
    assert!(
        back[0].telemetry.is_empty(),
        "the old failure's rows must go with it"
    );

    let ok = record(&run.plan[1], 20);
    store.record(id, &ok).unwrap();
    assert_eq!(store.measurements(id).unwrap(), vec![ok.clone()]);
    assert_eq!(store.run(id).unwrap().failed, 0);

    for again in [ok.clone(), failed(&run.plan[1], "late failure")] {
        let e = store.record(id, &again).unwrap_err();
        assert!(
            matches!(e, StoreError::AlreadyRecorded { run, seq: 1, .. } if run == id),
            "{e}"
        );
        assert!(e.to_string().contains("never replaced"), "{e}");
    }
    assert_eq!(store.measurements(id).unwrap(), vec![ok]);
}

fn records_must_match_their_plan(db: TestDb) {
    let mut store = db.store();
    let run = new_run(3);
    let id = store.create_run(&run, 1.0).unwrap();
    let mut rec = record(&run.plan[0], 1);
    rec.variant = "snooze-only".into();
    let e = store.record(id, &rec).unwrap_err();
    assert!(e.to_string().contains("variant"), "{e}");
    let mut rec = record(&run.plan[0], 1);
    rec.params = common::params(9);
    assert!(matches!(
        store.record(id, &rec),
        Err(StoreError::PlanMismatch { .. })
    ));
    let mut rec = record(&run.plan[0], 1);
    rec.seq = 99;
    let e = store.record(id, &rec).unwrap_err();
    assert!(matches!(e, StoreError::NotPlanned { seq: 99, .. }), "{e}");
    let e = store.record(id + 1, &record(&run.plan[0], 1)).unwrap_err();
    assert!(matches!(e, StoreError::NoRun { .. }), "{e}");
    // None of the refused records left anything behind.
    assert!(store.measurements(id).unwrap().is_empty());
}

fn a_plan_with_duplicate_seqs_is_refused_whole(db: TestDb) {
    let mut store = db.store();
    let mut run = new_run(3);
    run.plan[2].seq = 0;
    let e = store.create_run(&run, 1.0).unwrap_err();
    assert!(e.to_string().contains("seq 0 appears twice"), "{e}");
    assert!(store.runs().unwrap().is_empty());
}

fn missing_runs_are_named(db: TestDb) {
    let mut store = db.store();
    let e = store.run(42).unwrap_err();
    assert_eq!(e.to_string(), format!("no run 42 in {}", db.loc));
    assert!(e.is_input());
    assert!(matches!(
        store.plan(42),
        Err(StoreError::NoRun { id: 42, .. })
    ));
    assert!(matches!(
        store.pending(42),
        Err(StoreError::NoRun { id: 42, .. })
    ));
    assert!(matches!(
        store.measurements(42),
        Err(StoreError::NoRun { id: 42, .. })
    ));
    assert!(matches!(
        store.set_label(42, Some("x")),
        Err(StoreError::NoRun { id: 42, .. })
    ));
    assert!(matches!(
        store.set_status(42, RunStatus::Complete),
        Err(StoreError::NoRun { .. })
    ));
    assert!(matches!(
        store.delete_run(42),
        Err(StoreError::NoRun { id: 42, .. })
    ));
}

fn runs_are_listed_newest_first_and_can_be_labelled_and_deleted(db: TestDb) {
    let mut store = db.store();
    let a = store.create_run(&new_run(2), 10.0).unwrap();
    let mut second = new_run(4);
    second.label = None;
    second.unavailable.clear();
    let b = store.create_run(&second, 20.0).unwrap();
    let c = store.create_run(&new_run(1), 30.0).unwrap();
    let ids: Vec<_> = store.runs().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, [c, b, a]);
    let listed = store.runs().unwrap();
    assert_eq!(listed[1], store.run(b).unwrap());
    assert!(listed[1].unavailable.is_empty());
    assert_eq!(listed[2].unavailable.len(), 1);

    store.set_label(b, Some("baseline ✓")).unwrap();
    assert_eq!(store.run(b).unwrap().label.as_deref(), Some("baseline ✓"));
    store.set_label(b, None).unwrap();
    assert_eq!(store.run(b).unwrap().label, None);

    for p in &second.plan {
        store.record(b, &record(p, 10)).unwrap();
    }
    store.set_status(b, RunStatus::Complete).unwrap();
    store.delete_run(b).unwrap();
    assert!(matches!(store.run(b), Err(StoreError::NoRun { .. })));
    let ids: Vec<_> = store.runs().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, [c, a]);
    // No orphans, and a deleted run's number is not reused.
    for table in [
        "plan",
        "measurements",
        "metrics",
        "histograms",
        "threads",
        "telemetry",
    ] {
        assert_eq!(db.rows(table, b), 0, "{table}");
    }
    let d = store.create_run(&new_run(1), 40.0).unwrap();
    assert!(d > c);
}

/// Every run has a uid of its own; one given (a copied run) is kept, and finds the run.
fn runs_have_uids_that_find_them(db: TestDb) {
    let mut store = db.store();
    let a = store.create_run(&new_run(1), 1.0).unwrap();
    let b = store.create_run(&new_run(1), 1.0).unwrap();
    let (ua, ub) = (store.run(a).unwrap().uid, store.run(b).unwrap().uid);
    assert_ne!(ua, ub);
    for u in [&ua, &ub] {
        assert_eq!(u.len(), 32, "{u}");
        assert!(
            u.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
            "{u}"
        );
    }
    let mut copied = new_run(2);
    copied.uid = Some("0123456789abcdef0123456789abcdef".into());
    let c = store.create_run(&copied, 1.0).unwrap();
    assert_eq!(
        store.run(c).unwrap().uid,
        "0123456789abcdef0123456789abcdef"
    );
    assert_eq!(store.run_by_uid(&ua).unwrap(), Some(a));
    assert_eq!(
        store
            .run_by_uid("0123456789abcdef0123456789abcdef")
            .unwrap(),
        Some(c)
    );
    assert_eq!(store.run_by_uid("nope").unwrap(), None);
    // A second run with a uid already there is refused, and nothing of it is kept.
    let e = store.create_run(&copied, 1.0).unwrap_err();
    assert!(
        matches!(&e, StoreError::DuplicateUid { existing, .. } if *existing == c),
        "{e}"
    );
    assert_eq!(store.runs().unwrap().len(), 3);
    assert_eq!(store.runs().unwrap()[0].uid, store.run(c).unwrap().uid);
}

/// Runs `sql` in a transaction of another session that commits `hold` after it ran;
/// returns once it ran, with the thread that commits.
fn uncommitted(db: &TestDb, sql: &'static str, hold: Duration) -> std::thread::JoinHandle<()> {
    let loc = db.loc.clone();
    let (ran, wait) = std::sync::mpsc::channel();
    let other = std::thread::spawn(move || match loc {
        Location::Sqlite(p) => {
            let c = rusqlite::Connection::open(p).unwrap();
            c.execute_batch(&format!("BEGIN IMMEDIATE; {sql}")).unwrap();
            ran.send(()).unwrap();
            std::thread::sleep(hold);
            c.execute_batch("COMMIT").unwrap();
        }
        Location::Postgres(url) => {
            let mut c = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
            let mut tx = c.transaction().unwrap();
            tx.batch_execute(sql).unwrap();
            ran.send(()).unwrap();
            std::thread::sleep(hold);
            tx.commit().unwrap();
        }
    });
    wait.recv().unwrap();
    other
}

/// Two copies of one run at once: another session creates a run of the same uid and
/// commits it only while this one is creating it. It is found, not made twice (SQLite's
/// write lock makes this one wait and look; on PostgreSQL the insert waits and does
/// nothing).
fn a_run_created_meanwhile_elsewhere_is_found_not_made_twice(db: TestDb) {
    let mut store = db.store();
    let mut run = new_run(2);
    run.uid = Some("feedfacefeedfacefeedfacefeedface".into());
    let other = uncommitted(
        &db,
        "INSERT INTO runs (created_at, study, workload, status, spec, fingerprint, uid) \
         VALUES (1.0, 's', 'w', 'running', '{}', '{}', 'feedfacefeedfacefeedfacefeedface')",
        Duration::from_millis(300),
    );
    let e = store.create_run(&run, 2.0).unwrap_err();
    other.join().unwrap();
    let existing = store
        .run_by_uid("feedfacefeedfacefeedfacefeedface")
        .unwrap();
    assert!(
        matches!(&e, StoreError::DuplicateUid { existing: id, .. } if Some(*id) == existing),
        "{e}"
    );
    assert_eq!(
        db.rows("plan", existing.unwrap()),
        0,
        "nothing of it is kept"
    );
}

both_backends!(
    a_run_created_meanwhile_elsewhere_is_found_not_made_twice,
    runs_have_uids_that_find_them,
    a_run_round_trips,
    measurements_round_trip_exactly,
    nan_comes_back_as_nan,
    pending_lists_what_a_resume_must_do,
    a_failed_measurement_is_replaced_an_ok_one_is_not,
    records_must_match_their_plan,
    a_plan_with_duplicate_seqs_is_refused_whole,
    missing_runs_are_named,
    runs_are_listed_newest_first_and_can_be_labelled_and_deleted,
);
