//! A reader (`perflab show`) looking at a run while `perflab run` records into it.

use crate::common;

use std::sync::mpsc;
use std::thread;

use perflab_store::{RunStatus, Store};

use common::backends::TestDb;
use common::{new_run, record};

fn a_reader_sees_consistent_snapshots_while_the_writer_writes(db: TestDb) {
    const N: u32 = 300;
    let run = new_run(N);
    let expected: Vec<_> = run.plan.iter().map(|p| record(p, 20)).collect();
    let mut writer = db.store();
    let id = writer.create_run(&run, 1.0).unwrap();

    let (half_done, wait_half) = mpsc::channel::<()>();
    let (seen_half, wait_seen) = mpsc::channel::<()>();
    let (all_done, wait_all) = mpsc::channel::<()>();
    let reader = {
        let loc = db.loc.clone();
        let expected = expected.clone();
        thread::spawn(move || {
            let reader = Store::open_existing_location(&loc).unwrap();
            wait_half.recv().unwrap();
            // The writer keeps its connection open and waits: we read its committed half.
            let got = reader.measurements(id).unwrap();
            assert_eq!(got.as_slice(), &expected[..N as usize / 2]);
            assert_eq!(reader.run(id).unwrap().done, N / 2);
            seen_half.send(()).unwrap();
            // Now read continuously while the second half is written.
            let mut reads = 0;
            let mut last = got.len();
            loop {
                let finished = wait_all.try_recv().is_ok();
                let got = reader.measurements(id).unwrap();
                assert!(got.len() >= last, "a committed measurement vanished");
                last = got.len();
                // Each snapshot is a prefix of the run, every record complete.
                assert_eq!(got.as_slice(), &expected[..got.len()]);
                reads += 1;
                if finished {
                    assert_eq!(got.len(), N as usize);
                    return reads;
                }
            }
        })
    };

    for rec in &expected[..N as usize / 2] {
        writer.record(id, rec).unwrap();
    }
    half_done.send(()).unwrap();
    wait_seen.recv().unwrap();
    for rec in &expected[N as usize / 2..] {
        writer.record(id, rec).unwrap();
    }
    all_done.send(()).unwrap();
    let reads = reader.join().expect("reader thread panicked");
    assert!(reads >= 1);
    eprintln!(
        "reader took {reads} snapshots while the writer recorded {} measurements",
        N / 2
    );
}

/// A run is measured by one process at a time: a second claim of it is refused, with the
/// words `perflab run --resume` shows, until the first is dropped; other runs are free.
fn a_run_is_claimed_by_one_holder_at_a_time(db: TestDb) {
    let mut store = db.store();
    let a = store.create_run(&new_run(2), 1.0).unwrap();
    let b = store.create_run(&new_run(2), 1.0).unwrap();
    let other = db.existing();
    let first = store.claim(a).unwrap();
    let e = other.claim(a).unwrap_err();
    assert!(e.is_input(), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "run {a} is being measured by another perflab process; \
             wait for it to finish or stop it, then resume"
        )
    );
    // The holder's own store cannot claim it twice either.
    assert!(store.claim(a).is_err());
    let on_b = other.claim(b).unwrap();
    drop(first);
    let again = other.claim(a).unwrap();
    drop((on_b, again));
}

/// A run stored as running is shown so only while its claim is held: a killed perflab
/// never marks its run interrupted, but its claim goes with it.
fn a_running_run_nobody_claims_reads_as_interrupted(db: TestDb) {
    let mut store = db.store();
    let a = store.create_run(&new_run(2), 1.0).unwrap();
    store.set_status(a, RunStatus::Running).unwrap();
    let reader = db.existing();
    let claim = store.claim(a).unwrap();
    assert!(reader.is_claimed(a).unwrap());
    assert_eq!(reader.run(a).unwrap().status, RunStatus::Running);
    assert_eq!(reader.runs().unwrap()[0].status, RunStatus::Running);
    drop(claim);
    assert!(!reader.is_claimed(a).unwrap());
    assert_eq!(reader.run(a).unwrap().status, RunStatus::Interrupted);
    assert_eq!(reader.runs().unwrap()[0].status, RunStatus::Interrupted);
    // Looking did not take the claim.
    drop(store.claim(a).unwrap());
}

both_backends!(
    a_reader_sees_consistent_snapshots_while_the_writer_writes,
    a_run_is_claimed_by_one_holder_at_a_time,
    a_running_run_nobody_claims_reads_as_interrupted,
);
