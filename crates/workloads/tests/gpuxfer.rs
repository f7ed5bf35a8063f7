//! gpuxfer against the stand-in CUDA driver library: the real loading path (dlopen by
//! `PERFLAB_LIBCUDA`), every direction × host memory kind × a few sizes, both directions
//! at once, and driver calls that fail midway. No GPU needed; no test compares two
//! measured times (the stand-in's bandwidths mean nothing).
//!
//! The 2m points need free 2 MiB hugetlb pages: as root the tests reserve them through the
//! `hugepages` knob ([`hugepool`]) and give them back; elsewhere the 2m points are checked
//! to fail with the pool named, and the skip says so.

use crate::hugepool;

use std::collections::BTreeMap;

use perflab_core::{resolve, MeasureCtx, Params, SysRoot, Workload, WorkloadError, WorkloadOutput};
use perflab_testkit::cuda::Standin;
use perflab_workloads::GpuXfer;

fn params(pairs: &[(&str, &str)]) -> Params {
    let given: BTreeMap<String, String> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let info = GpuXfer.info();
    resolve(info.name, info.params, &given).unwrap()
}

fn run(pairs: &[(&str, &str)]) -> Result<WorkloadOutput, WorkloadError> {
    let ctx = MeasureCtx::new(SysRoot::host(), Vec::new());
    GpuXfer.run(&params(pairs), &ctx)
}

/// What a test lacking a pool needs: root to reserve one, or (as root) the memory.
fn needs() -> &'static str {
    if perflab_testkit::is_root() {
        "hugepages"
    } else {
        "root"
    }
}

fn metric(out: &WorkloadOutput, name: &str) -> f64 {
    out.metric(name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", out.metrics))
        .value
}

#[test]
fn every_direction_backing_and_size_copies_through_the_standin_and_frees_everything() {
    let s = Standin::take();
    let base = s.live();
    // Two 3M buffers on 2 MiB pages: 4 pages for bidir. Reserved after taking the
    // stand-in, whose lock keeps the tests that use the pool apart.
    let pool = hugepool::reserve(4);
    let pool_why = pool.as_ref().err().cloned();
    let mut skipped_2m = false;
    for direction in ["h2d", "d2h", "d2d", "bidir"] {
        for backing in ["4k", "thp", "2m", "pinned"] {
            for size in ["4K", "100000", "3M"] {
                let p = [
                    ("direction", direction),
                    ("backing", backing),
                    ("size", size),
                    ("duration", "3ms"),
                ];
                let what = format!("{direction} {backing} {size}");
                if backing == "2m" && direction != "d2d" && pool.is_err() {
                    let e = run(&p).unwrap_err().to_string();
                    assert!(
                        e.contains("hugetlb") && e.contains("hugepages=2M:auto"),
                        "{what}: {e}"
                    );
                    assert_eq!(s.live(), base, "{what}: leaked after the pool failure");
                    skipped_2m = true;
                    continue;
                }
                let out = run(&p).unwrap_or_else(|e| panic!("{what}: {e}"));
                let size_b: f64 = match size {
                    "4K" => 4096.0,
                    "3M" => 3.0 * 1048576.0,
                    n => n.parse().unwrap(),
                };
                let copies = metric(&out, "iterations");
                assert!(copies >= 1.0, "{what}");
                assert_eq!(metric(&out, "bytes"), copies * size_b, "{what}");
                assert!(metric(&out, "bandwidth_mib_s") > 0.0, "{what}");
                let h = out
                    .histograms
                    .iter()
                    .find(|h| h.name == "iteration_ns")
                    .unwrap();
                assert_eq!(h.count as f64, copies, "{what}: one interval per copy");
                match (direction, backing) {
                    ("d2d", _) | (_, "pinned") => {
                        assert!(out.metric("huge_fraction").is_none(), "{what}")
                    }
                    (_, "4k") => assert_eq!(metric(&out, "huge_fraction"), 0.0, "{what}"),
                    (_, "2m") => assert_eq!(metric(&out, "huge_fraction"), 1.0, "{what}"),
                    _ => assert!(
                        (0.0..=1.0).contains(&metric(&out, "huge_fraction")),
                        "{what}"
                    ),
                }
                assert_eq!(
                    s.live(),
                    base,
                    "{what}: the stand-in holds objects after the run"
                );
            }
        }
    }
    // The pool given back, an empty pool is checked to fail the 2m point by name here too.
    let reserved = pool.is_ok();
    drop(pool);
    if reserved && hugepool::free_pages() == 0 {
        let e = run(&[("backing", "2m"), ("size", "3M"), ("duration", "3ms")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("hugepages=2M:auto"), "{e}");
        assert_eq!(s.live(), base, "leaked after the pool failure");
    }
    if let (true, Some(why)) = (skipped_2m, &pool_why) {
        perflab_testkit::skip(
            needs(),
            format!(
                "no 2 MiB hugetlb pool with 4 free pages ({why}): the 2m points were checked \
                 to fail with the pool named, not to copy"
            ),
        );
    }
}

#[test]
fn bidir_reports_the_aggregate_per_direction_bandwidths_and_the_engine_verdict() {
    let _s = Standin::take();
    let ctx = MeasureCtx::new(SysRoot::host(), Vec::new());
    let out = GpuXfer
        .run(
            &params(&[
                ("direction", "bidir"),
                ("backing", "pinned"),
                ("size", "1M"),
                ("duration", "20ms"),
            ]),
            &ctx,
        )
        .unwrap();
    // Each direction is stored as a thread record, so reports judge the stored run.
    let roles: Vec<String> = ctx.threads.take().into_iter().map(|r| r.role).collect();
    assert_eq!(roles, ["h2d", "d2h"]);
    for name in perflab_workloads::parallel::METRIC_NAMES {
        assert!(out.metric(name).is_some(), "{name}");
    }
    for name in ["h2d_mib_s", "d2h_mib_s", "h2d_solo_mib_s", "d2h_solo_mib_s"] {
        assert!(metric(&out, name) > 0.0, "{name}");
    }
    assert_eq!(metric(&out, "threads"), 2.0);
    assert_eq!(metric(&out, "busy_measured"), 1.0);
    assert_eq!(
        metric(&out, "bandwidth_mib_s"),
        metric(&out, "aggregate_mib_s")
    );
    let overlap = metric(&out, "overlap");
    assert!((0.0..=1.0).contains(&overlap), "{overlap}");
    // The aggregate is all bytes over the union window, by definition.
    let window = metric(&out, "window_s");
    let agg = metric(&out, "bytes") / window / 1048576.0;
    assert!(
        (agg - metric(&out, "aggregate_mib_s")).abs() <= agg * 1e-9,
        "{agg}"
    );
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("summing the two directions' bandwidths")
                && n.contains("2 copy engines")
                && !n.contains("thread")
                && !n.contains("CPU")),
        "{:?}",
        out.notes
    );
}

#[test]
fn a_driver_call_failing_midway_fails_the_measurement_with_the_drivers_error_and_frees_all() {
    let s = Standin::take();
    let base = s.live();
    // (call, successful calls before it fails, direction, backing)
    let cases = [
        ("cuDevicePrimaryCtxRetain", 0, "h2d", "4k"),
        ("cuMemAlloc_v2", 1, "d2d", "4k"),
        ("cuMemAllocHost_v2", 1, "bidir", "pinned"),
        ("cuStreamCreate", 1, "h2d", "pinned"),
        ("cuMemcpyHtoDAsync_v2", 3, "h2d", "thp"),
        ("cuMemcpyDtoHAsync_v2", 5, "d2h", "4k"),
        ("cuMemcpyDtoDAsync_v2", 2, "d2d", "4k"),
        ("cuEventRecord", 10, "bidir", "4k"),
        ("cuEventElapsedTime", 4, "h2d", "pinned"),
        ("cuEventSynchronize", 2, "d2h", "pinned"),
    ];
    for (call, after, direction, backing) in cases {
        s.fail(call, after);
        let e = run(&[
            ("direction", direction),
            ("backing", backing),
            ("size", "64K"),
            ("duration", "5ms"),
        ])
        .unwrap_err()
        .to_string();
        s.clear_failure();
        assert!(e.contains(call), "{call}: {e}");
        assert!(e.contains("CUDA_ERROR_UNKNOWN (999)"), "{call}: {e}");
        assert!(e.contains("injected by the stand-in"), "{call}: {e}");
        assert_eq!(
            s.live(),
            base,
            "{call}: the stand-in holds objects after the failure"
        );
    }
}

#[test]
fn a_hugetlb_registration_that_fails_unmaps_its_buffer_and_says_why() {
    let s = Standin::take();
    let _pool = match hugepool::reserve(1) {
        Ok(p) => p,
        Err(why) => return perflab_testkit::skip(needs(), format!("no free 2 MiB page: {why}")),
    };
    let base = s.live();
    s.fail("cuMemHostRegister", 0);
    let e = run(&[("backing", "2m"), ("size", "64K"), ("duration", "5ms")])
        .unwrap_err()
        .to_string();
    s.clear_failure();
    assert!(
        e.contains("source host buffer: cuMemHostRegister_v2 failed"),
        "{e}"
    );
    assert_eq!(s.live(), base);
}

#[test]
fn points_that_do_not_fit_the_device_are_refused_before_anything_runs() {
    let _s = Standin::take();
    // The stand-in's device has 4 GiB.
    assert!(GpuXfer
        .validate(&params(&[("size", "1G"), ("direction", "bidir")]))
        .is_ok());
    let e = GpuXfer
        .validate(&params(&[("size", "3G"), ("direction", "bidir")]))
        .unwrap_err();
    assert!(
        e.contains("bidir needs 2 device buffer(s) of 3G (6G), GPU 0 has 4G free"),
        "{e}"
    );
    let e = GpuXfer.validate(&params(&[("device", "3")])).unwrap_err();
    assert!(e.contains("no CUDA device 3"), "{e}");
    assert_eq!(
        GpuXfer.memory_bytes(&params(&[
            ("size", "3M"),
            ("backing", "2m"),
            ("direction", "bidir")
        ])),
        Ok(8 << 20)
    );
    assert_eq!(
        GpuXfer.memory_bytes(&params(&[("size", "3M"), ("direction", "d2d")])),
        Ok(0)
    );
}
