//! End-to-end: `dmatest` where the machine has no DMA channel. It used to create a run,
//! show it "complete" with 0 of 4 measured and every measurement failed; it is refused
//! before a run exists: one line, exit 2, nothing in the database. On the fixture tree of
//! a machine with four channels the same command plans its run.

use crate::common;

use common::{text, Lab};

/// `dmatest` on the fixture tree `tree`: exit 2, one line starting `why`, no run stored.
fn refused(tree: &str, why: &str) {
    let lab = Lab::new();
    let root = lab.fixture_copy(tree);
    let o = lab.run(&[
        "--sysroot",
        root.to_str().unwrap(),
        "run",
        "--workload",
        "dmatest",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stdout: {out}\nstderr: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "perflab: workload dmatest cannot run on this machine: {why}"
        )),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
    let o = lab.run(&["ls"]);
    let (out, _) = text(&o);
    assert!(
        !lab.db().exists() || out.starts_with("no runs"),
        "a run was stored: {out}"
    );
}

#[test]
fn dmatest_without_a_dma_channel_is_refused_before_a_run_is_created() {
    refused("kvm-2vcpu", "no DMA engine channels");
}

#[test]
fn dmatest_without_its_module_is_refused_before_a_run_is_created() {
    refused("dmatest-absent", "the dmatest module is not loaded");
}

#[test]
fn dmatest_with_dma_channels_plans_its_run() {
    let lab = Lab::new();
    let root = lab.fixture_copy("dmatest-4chan");
    let o = lab.run(&[
        "--sysroot",
        root.to_str().unwrap(),
        "run",
        "--workload",
        "dmatest",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

/// `show` counts failures one way: the header counts every measurement (telemetry
/// repetitions too), the table's note says it counts the headline ones.
#[test]
fn show_says_which_failures_its_note_counts() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "-p",
        "fail_every=1",
        "--reps",
        "3",
    ]);
    let id = common::run_id(&text(&o).1);
    let o = lab.run(&["show", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("3 headline measurements failed"), "{out}");
}
