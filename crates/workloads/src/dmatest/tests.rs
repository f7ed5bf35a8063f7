//! dmatest against fixture trees (constructed in the kernel's formats; see
//! tests/fixtures/make_dmatest_fixtures.py) with a thread standing in for the kernel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use perflab_core::{resolve, SysRoot};
use perflab_knobs::{journal, Journal, JOURNAL_FACT};
use perflab_parsers::dmatest_log::scan;
use perflab_testkit::{copy_tree, fixture};

const PARAMS_DIR: &str = "sys/module/dmatest/parameters";

/// Every parameter file of the tree with its bytes.
fn parameters(root: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(root.join(PARAMS_DIR))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// A copy of the fixture, and a measurement context whose journal is in it.
fn fixture_copy() -> (tempfile::TempDir, MeasureCtx, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("dmatest-4chan"), dir.path());
    let journal = dir.path().join("state/journal.json");
    let mut ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
    ctx.facts
        .insert(JOURNAL_FACT.into(), journal.to_string_lossy().into_owned());
    (dir, ctx, journal)
}

fn params(pairs: &[(&str, &str)]) -> Params {
    let given = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    resolve("dmatest", PARAMS, &given).unwrap()
}

#[test]
fn settings_follow_the_parameters() {
    let s = settings(&params(&[
        ("channel", "dma0chan0, dma1chan1"),
        ("iterations", "2000"),
        ("threads_per_chan", "4"),
        ("transfer", "memset"),
        ("noverify", "false"),
    ]))
    .unwrap();
    assert_eq!(s.channels, vec!["dma0chan0", "dma1chan1"]);
    let get = |k: &str| {
        s.params
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("iterations"), Some("2000"));
    assert_eq!(get("threads_per_chan"), Some("4"));
    assert_eq!(get("test_buf_size"), Some("16384"));
    assert_eq!(get("dmatest"), Some("1"));
    assert_eq!(get("noverify"), Some("N"));
    assert_eq!(get("norandom"), Some("Y"));
    assert!(Dmatest
        .validate(&params(&[("channel", "dma0chan0;rm")]))
        .is_err());
    assert!(Dmatest
        .validate(&params(&[("channel", "dma0chan0,dma1chan0")]))
        .is_ok());
}

/// What the stand-in kernel saw when the test was started: the parameters then.
type Started = Option<BTreeMap<String, Vec<u8>>>;

/// Stands in for the kernel: once `run` is set, notes the parameters it runs with,
/// appends the run's records to dev/kmsg and clears `run`. Gives up (None) after 30 s:
/// room for a loaded machine.
fn fake_kernel(root: PathBuf, records: &'static str) -> std::thread::JoinHandle<Started> {
    std::thread::spawn(move || {
        let run = root.join("sys/module/dmatest/parameters/run");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            let v = std::fs::read_to_string(&run).unwrap_or_default();
            if v.trim() == "1" {
                let seen = parameters(&root);
                let kmsg = root.join("dev/kmsg");
                let mut log = std::fs::read_to_string(&kmsg).unwrap();
                log.push_str(records);
                std::fs::write(&kmsg, log).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(60));
                std::fs::write(&run, "N\n").unwrap();
                return Some(seen);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        None
    })
}

/// The parameters as found, but for `channel`: a command, not a setting (see driver.rs).
fn settings_of(mut p: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    p.remove("channel");
    p
}

#[test]
fn a_run_on_the_fixture_sets_parameters_and_judges_the_threads() {
    let (dir, ctx, journal_path) = fixture_copy();
    let before = parameters(dir.path());
    let records: &'static str = Box::leak(
        std::fs::read_to_string(fixture("dmatest-4chan/log/run-4x4.kmsg"))
            .unwrap()
            .into_boxed_str(),
    );
    let kernel = fake_kernel(dir.path().to_path_buf(), records);
    let p = params(&[("threads_per_chan", "4"), ("iterations", "2000")]);
    let out = Dmatest.run(&p, &ctx).unwrap();
    let seen = kernel.join().unwrap().expect("the test never wrote run=1");
    assert_eq!(seen["iterations"], b"2000");
    assert_eq!(seen["threads_per_chan"], b"4");
    assert_eq!(seen["noverify"], b"Y");
    // Once it is over, every setting is as it was, and the journal is empty again.
    assert_eq!(settings_of(parameters(dir.path())), settings_of(before));
    assert!(journal::entries(&journal_path).unwrap().is_empty());
    let threads = ctx.threads.take();
    assert_eq!(threads.len(), 16);
    let m = |n: &str| out.metric(n).unwrap().value;
    assert_eq!(m("threads"), 16.0);
    assert_eq!(m("tests"), 32_000.0);
    // The summed bandwidth is the sum of the kernel's own per-thread KB/s.
    let text = std::fs::read(fixture("dmatest-4chan/log/run-4x4.kmsg")).unwrap();
    let kernel_sum: f64 = scan(&text[..], None)
        .summaries
        .iter()
        .map(|s| s.kib_s / 1024.0)
        .sum();
    assert!((m("summed_mib_s") - kernel_sum).abs() < 0.01 * kernel_sum / 100.0);
    // dma1chan1-copy3 started after the others had ended: no summing.
    assert_eq!(m("sum_valid"), 0.0);
    assert!(m("summed_mib_s") > 1.5 * m("aggregate_mib_s"));
    let verdict = out
        .notes
        .iter()
        .find(|n| n.starts_with("summing per-thread"))
        .unwrap();
    assert!(
        verdict.contains("thread dma1chan1-copy3 started") && verdict.contains("ended"),
        "{verdict}"
    );
    assert!(out
        .notes
        .iter()
        .any(|n| n.contains("channel=") && n.contains("run=1")));
}

#[test]
fn unavailable_without_the_module_or_a_dma_engine() {
    let ctx = MeasureCtx::new(SysRoot::at(fixture("dmatest-absent")), Vec::new());
    match Dmatest.run(&params(&[]), &ctx) {
        Err(WorkloadError::Unavailable(u)) => {
            assert!(u.reason.contains("dmatest module is not loaded"), "{u:?}");
            assert!(u.hint.unwrap().contains("modprobe dmatest"));
        }
        other => panic!("{other:?}"),
    }
    let ctx = MeasureCtx::new(SysRoot::at(fixture("kvm-2vcpu")), Vec::new());
    match Dmatest.run(&params(&[]), &ctx) {
        Err(WorkloadError::Unavailable(u)) => {
            assert!(u.reason.contains("no DMA engine channels"), "{u:?}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_channel_the_machine_lacks_is_named() {
    let ctx = MeasureCtx::new(SysRoot::at(fixture("dmatest-4chan")), Vec::new());
    let e = Dmatest
        .run(&params(&[("channel", "dma7chan0")]), &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no DMA channel dma7chan0"), "{e}");
    assert!(
        e.contains("dma0chan0, dma0chan1, dma1chan0, dma1chan1"),
        "{e}"
    );
}

#[test]
fn a_failed_run_puts_the_parameters_back_too() {
    // No stand-in kernel: `run` never clears, and perflab stops the test after `wait`.
    let (dir, ctx, journal_path) = fixture_copy();
    let before = parameters(dir.path());
    let p = params(&[("iterations", "7"), ("wait", "0.2s")]);
    let e = Dmatest.run(&p, &ctx).unwrap_err().to_string();
    assert!(e.contains("still running after"), "{e}");
    assert_eq!(settings_of(parameters(dir.path())), settings_of(before));
    assert!(journal::entries(&journal_path).unwrap().is_empty());
}

#[test]
fn the_parameters_are_journaled_before_they_change() {
    // While the test runs (the stand-in kernel has not cleared `run`), the journal holds
    // the original of every parameter written, for `perflab restore` after a kill.
    let (dir, ctx, journal_path) = fixture_copy();
    let before = parameters(dir.path());
    let root = dir.path().to_path_buf();
    let watcher = {
        let journal_path = journal_path.clone();
        std::thread::spawn(move || {
            let run = root.join(PARAMS_DIR).join("run");
            for _ in 0..400 {
                if std::fs::read_to_string(&run).unwrap_or_default().trim() == "1" {
                    let entries = journal::entries(&journal_path).unwrap();
                    std::fs::write(&run, "N\n").unwrap();
                    return entries;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Vec::new()
        })
    };
    let p = params(&[("iterations", "9")]);
    // No log records: the run itself fails, after the parameters were written.
    let _ = Dmatest.run(&p, &ctx);
    let entries = watcher.join().unwrap();
    let originals: BTreeMap<String, Vec<u8>> = entries
        .iter()
        .map(|e| {
            assert_eq!(e.knob, driver::JOURNALED_AS);
            let name = e.path.rsplit('/').next().unwrap().to_string();
            match &e.action {
                perflab_knobs::Action::Write { original } => (name, original.as_bytes().to_vec()),
                other => panic!("{other:?}"),
            }
        })
        .collect();
    for name in [
        "iterations",
        "threads_per_chan",
        "noverify",
        "device",
        "run",
    ] {
        assert_eq!(originals.get(name), before.get(name), "{name}");
    }
    assert!(!originals.contains_key("channel"));
    assert_eq!(settings_of(parameters(dir.path())), settings_of(before));
}

#[test]
fn parameters_another_perflab_holds_are_refused_and_left_alone() {
    let (dir, ctx, _journal_path) = fixture_copy();
    let before = parameters(dir.path());
    let other = Journal::open(dir.path().join("other.json")).unwrap();
    let sys = SysRoot::at(dir.path());
    let _held = perflab_knobs::journal_files(
        &sys,
        &other,
        "dmatest workload",
        &["sys/module/dmatest/parameters/iterations"],
    )
    .unwrap();
    let e = Dmatest
        .run(&params(&[("iterations", "5"), ("wait", "0.2s")]), &ctx)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parameters/iterations: in use by perflab pid"),
        "{e}"
    );
    assert_eq!(parameters(dir.path()), before);
}
