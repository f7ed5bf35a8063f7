//! Copying runs between stores (`perflab push`, imports, a fleet's stream): the copy is the
//! run (uid, plan, figures) and copying again adds only what the destination lacks. Run
//! for each direction between the backends.

use crate::common;

use perflab_store::{
    copy_records, copy_run, ensure_run, CopyReport, MeasurementStatus, PlannedMeasurement, RunId,
    RunStatus, Store,
};

use common::backends::{self, TestDb};
use common::{failed, new_run, params, record};

/// The destination holds the same run as the source: everything but its number.
fn assert_same(src: &Store, a: RunId, dst: &Store, b: RunId) {
    let mut left = src.run(a).unwrap();
    let right = dst.run(b).unwrap();
    left.id = right.id;
    assert_eq!(left, right);
    assert_eq!(src.plan(a).unwrap(), dst.plan(b).unwrap());
    assert_eq!(src.measurements(a).unwrap(), dst.measurements(b).unwrap());
}

fn more_plan(from: u32, n: u32) -> Vec<PlannedMeasurement> {
    (from..from + n)
        .map(|seq| PlannedMeasurement {
            seq,
            point: 7,
            params: params(7),
            variant: "all-states".into(),
            rep: seq,
            role: Default::default(),
        })
        .collect()
}

fn copies_are_idempotent_and_incremental(from: TestDb, to: TestDb) {
    let mut src = from.store();
    let mut dst = to.store();
    // Another run first, so the copied run's number differs between the two.
    dst.create_run(&new_run(1), 1.0).unwrap();
    let run = new_run(12);
    let id = src.create_run(&run, 1_718_000_000.25).unwrap();
    for p in &run.plan[..6] {
        src.record(id, &record(p, 8)).unwrap();
    }
    src.record(id, &failed(&run.plan[6], "EPERM")).unwrap();
    let mut ineffective = record(&run.plan[7], 3);
    ineffective.status = MeasurementStatus::Ineffective("thp read back never".into());
    src.record(id, &ineffective).unwrap();
    src.set_status(id, RunStatus::Interrupted).unwrap();

    let first = copy_run(&src, id, &mut dst).unwrap();
    assert!(first.created);
    assert_eq!((first.appended, first.copied, first.skipped), (0, 8, 0));
    assert_ne!(first.run, id);
    assert_same(&src, id, &dst, first.run);
    assert_eq!(
        dst.run_by_uid(&src.run(id).unwrap().uid).unwrap(),
        Some(first.run)
    );

    // Again: nothing new.
    let again = copy_run(&src, id, &mut dst).unwrap();
    assert_eq!(
        again,
        CopyReport {
            run: first.run,
            created: false,
            appended: 0,
            copied: 0,
            skipped: 8,
        }
    );
    assert_same(&src, id, &dst, first.run);

    // The source goes on: the failure retried, more measured, the plan grown, done.
    src.record(id, &record(&run.plan[6], 2)).unwrap();
    for p in &run.plan[8..] {
        src.record(id, &record(p, 2)).unwrap();
    }
    let extra = more_plan(12, 2);
    src.append_plan(id, &extra).unwrap();
    src.record(id, &record(&extra[0], 1)).unwrap();
    src.set_status(id, RunStatus::Complete).unwrap();
    src.set_label(id, Some("after the retry")).unwrap();
    let third = copy_run(&src, id, &mut dst).unwrap();
    assert!(!third.created);
    // The retried seq 6 replaces the failure; 8..12 and 12 are new; 0..6 and 7 were there.
    assert_eq!((third.appended, third.copied, third.skipped), (2, 6, 7));
    assert_same(&src, id, &dst, first.run);
}

fn an_ok_measurement_in_the_destination_is_never_replaced(from: TestDb, to: TestDb) {
    let mut src = from.store();
    let mut dst = to.store();
    let run = new_run(3);
    let id = src.create_run(&run, 1.0).unwrap();
    let report = copy_run(&src, id, &mut dst).unwrap();
    // The destination measured seq 0 itself (a fleet host streaming), the source failed it.
    let ok = record(&run.plan[0], 2);
    dst.record(report.run, &ok).unwrap();
    src.record(id, &failed(&run.plan[0], "late failure"))
        .unwrap();
    src.record(id, &record(&run.plan[1], 2)).unwrap();
    let r = copy_run(&src, id, &mut dst).unwrap();
    assert_eq!((r.copied, r.skipped), (1, 1));
    let back = dst.measurements(report.run).unwrap();
    assert_eq!(back[0], ok);
    assert_eq!(back[1], record(&run.plan[1], 2));
}

/// A stream (a run header, then records one by one, some retried) ends as the source.
fn a_stream_of_records_ends_as_the_source(from: TestDb, to: TestDb) {
    let mut src = from.store();
    let mut dst = to.store();
    let run = new_run(4);
    let id = src.create_run(&run, 1.0).unwrap();
    let info = src.run(id).unwrap();
    let there = ensure_run(&mut dst, &info, &run.plan).unwrap();
    assert_eq!(ensure_run(&mut dst, &info, &run.plan).unwrap(), there);
    let batch = vec![
        failed(&run.plan[0], "first try"),
        record(&run.plan[1], 1),
        record(&run.plan[0], 1),
        failed(&run.plan[1], "a stale failure after the success"),
    ];
    for r in &batch {
        src.record(id, r).ok();
    }
    let r = copy_records(&mut dst, there, &batch).unwrap();
    assert_eq!((r.copied, r.skipped), (3, 1));
    assert_eq!(
        dst.measurements(there).unwrap(),
        src.measurements(id).unwrap()
    );
    // A plan that disagrees with the destination's is another run, refused.
    let mut wrong = run.plan.clone();
    wrong[2].variant = "snooze-only-but-not".into();
    let e = ensure_run(&mut dst, &info, &wrong).unwrap_err();
    assert!(e.to_string().contains("not the same run"), "{e}");
}

/// Copies of one run racing into one database (two pushes, hosts streaming the same run)
/// end as one run holding each measurement once.
fn racing_copies_of_one_run_make_one_run(to: TestDb) {
    let from = backends::sqlite();
    let run = new_run(6);
    let id = {
        let mut src = from.store();
        let id = src.create_run(&run, 1.0).unwrap();
        for p in &run.plan[..4] {
            src.record(id, &record(p, 3)).unwrap();
        }
        id
    };
    let race = || -> Vec<CopyReport> {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (src, dst) = (from.loc.clone(), to.loc.clone());
                std::thread::spawn(move || {
                    let src = Store::open_existing_location(&src).unwrap();
                    let mut dst = Store::open_location(&dst).unwrap();
                    copy_run(&src, id, &mut dst)
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap().unwrap())
            .collect()
    };
    // First the copies race to create the run...
    let reports = race();
    let dst = to.existing();
    assert_eq!(dst.runs().unwrap().len(), 1);
    assert!(reports.iter().all(|r| r.run == reports[0].run));
    assert_eq!(reports.iter().filter(|r| r.created).count(), 1);
    // ...each measurement going in once, whichever copy put it there.
    assert_eq!(reports.iter().map(|r| r.copied).sum::<u32>(), 4);
    assert_same(&from.store(), id, &dst, reports[0].run);

    // Then the source grows, and the copies race to append the same plan rows.
    let extra = more_plan(6, 3);
    {
        let mut src = from.store();
        src.append_plan(id, &extra).unwrap();
        src.record(id, &record(&extra[0], 1)).unwrap();
    }
    let reports = race();
    assert_eq!(reports.iter().map(|r| r.copied).sum::<u32>(), 1);
    assert_eq!(reports.iter().map(|r| r.appended).sum::<u32>(), 3);
    assert_eq!(dst.runs().unwrap().len(), 1);
    assert_same(&from.store(), id, &dst, reports[0].run);
}

both_backends!(racing_copies_of_one_run_make_one_run);

macro_rules! pairs {
    ($($name:ident),* $(,)?) => {
        mod sqlite_to_sqlite {
            $( #[test] fn $name() { super::$name(super::backends::sqlite(), super::backends::sqlite()) } )*
        }
        mod sqlite_to_postgres {
            $( #[test] fn $name() {
                if let Some(pg) = super::backends::postgres() { super::$name(super::backends::sqlite(), pg) }
            } )*
        }
        mod postgres_to_sqlite {
            $( #[test] fn $name() {
                if let Some(pg) = super::backends::postgres() { super::$name(pg, super::backends::sqlite()) }
            } )*
        }
    };
}

pairs!(
    copies_are_idempotent_and_incremental,
    an_ok_measurement_in_the_destination_is_never_replaced,
    a_stream_of_records_ends_as_the_source,
);
