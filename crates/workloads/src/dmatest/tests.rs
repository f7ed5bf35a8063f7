//! dmatest against fixture trees (constructed in the kernel's formats; see
//! tests/fixtures/make_dmatest_fixtures.py) with a thread standing in for the kernel.

use std::path::PathBuf;

use super::*;
use perflab_core::{resolve, SysRoot};
use perflab_parsers::dmatest_log::scan;
use perflab_testkit::{copy_tree, fixture};

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
    ]));
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

/// Stands in for the kernel: once `run` is set, appends the run's records to dev/kmsg
/// and clears `run`. Gives up (false) after 30 s: room for a loaded machine.
fn fake_kernel(root: PathBuf, records: &'static str) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let run = root.join("sys/module/dmatest/parameters/run");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            let v = std::fs::read_to_string(&run).unwrap_or_default();
            if v.trim() == "1" {
                let kmsg = root.join("dev/kmsg");
                let mut log = std::fs::read_to_string(&kmsg).unwrap();
                log.push_str(records);
                std::fs::write(&kmsg, log).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(60));
                std::fs::write(&run, "N\n").unwrap();
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        false
    })
}

#[test]
fn a_run_on_the_fixture_sets_parameters_and_judges_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("dmatest-4chan"), dir.path());
    let records: &'static str = Box::leak(
        std::fs::read_to_string(fixture("dmatest-4chan/log/run-4x4.kmsg"))
            .unwrap()
            .into_boxed_str(),
    );
    let kernel = fake_kernel(dir.path().to_path_buf(), records);
    let ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
    let p = params(&[("threads_per_chan", "4"), ("iterations", "2000")]);
    let out = Dmatest.run(&p, &ctx).unwrap();
    assert!(kernel.join().unwrap(), "the test never wrote run=1");
    let read = |k: &str| {
        std::fs::read_to_string(dir.path().join("sys/module/dmatest/parameters").join(k)).unwrap()
    };
    assert_eq!(read("iterations"), "2000");
    assert_eq!(read("threads_per_chan"), "4");
    assert_eq!(read("noverify"), "Y");
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
