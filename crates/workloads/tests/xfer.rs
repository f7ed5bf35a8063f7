//! The xfer workload on this machine: every engine × state × {4k, thp} at two sizes,
//! the hugetlb refusal without a pool, and the stop flag.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use perflab_core::{resolve, MeasureCtx, Params, SysRoot, Workload, WorkloadError, WorkloadOutput};
use perflab_workloads::Xfer;

fn params(pairs: &[(&str, &str)]) -> Params {
    let given: BTreeMap<String, String> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    resolve("xfer", Xfer.info().params, &given).unwrap()
}

fn run(pairs: &[(&str, &str)]) -> Result<WorkloadOutput, WorkloadError> {
    let p = params(pairs);
    Xfer.run(
        &p,
        &MeasureCtx::new(SysRoot::host(), Xfer.cpus(&p).unwrap()),
    )
}

fn metric(out: &WorkloadOutput, name: &str) -> f64 {
    out.metric(name)
        .unwrap_or_else(|| panic!("no {name} in {out:?}"))
        .value
}

/// (engine, direction) pairs: pvm in both directions.
const ENGINES: &[(&str, &str)] = &[
    ("memcpy", "read"),
    ("fill", "read"),
    ("pvm", "read"),
    ("pvm", "write"),
];

#[test]
fn every_engine_state_and_backing_moves_whole_buffers() {
    for &(engine, direction) in ENGINES {
        for state in ["pinned", "unpinned"] {
            for backing in ["4k", "thp"] {
                for (size, bytes) in [("64K", 64u64 << 10), ("1M", 1 << 20)] {
                    let what = format!("{engine} {direction} {state} {backing} {size}");
                    let ctx = MeasureCtx::new(SysRoot::host(), Vec::new());
                    let p = params(&[
                        ("engine", engine),
                        ("direction", direction),
                        ("state", state),
                        ("backing", backing),
                        ("size", size),
                        ("duration", "0.05s"),
                    ]);
                    let out = Xfer.run(&p, &ctx).unwrap_or_else(|e| panic!("{what}: {e}"));
                    let rate = metric(&out, "bandwidth_mib_s");
                    let iters = metric(&out, "iterations");
                    let timed = metric(&out, "timed_s");
                    assert!(rate > 0.0 && rate.is_finite(), "{what}: {out:?}");
                    assert!(iters >= 1.0, "{what}");
                    assert_eq!(metric(&out, "bytes"), iters * bytes as f64, "{what}");
                    assert!(timed >= 0.05, "{what}: timed {timed}");
                    // The rate is the bytes over the timed window, in MiB/s.
                    let want = iters * bytes as f64 / timed / 1048576.0;
                    assert!(
                        (rate - want).abs() <= 1e-6 * want,
                        "{what}: {rate} vs {want}"
                    );
                    let huge = metric(&out, "huge_fraction");
                    assert!((0.0..=1.0).contains(&huge), "{what}: {huge}");
                    if backing == "4k" {
                        assert_eq!(huge, 0.0, "{what}");
                    } else if huge < 1.0 {
                        assert!(
                            out.notes.iter().any(|n| n.contains("huge_fraction")),
                            "{what}: {:?}",
                            out.notes
                        );
                    }
                    if state == "unpinned" {
                        let h = out
                            .histograms
                            .iter()
                            .find(|h| h.name == "iteration_ns")
                            .unwrap_or_else(|| panic!("{what}: no histogram"));
                        assert_eq!(h.count as f64, iters, "{what}");
                    }
                    let recs = ctx.threads.take();
                    assert_eq!(recs.len(), 1, "{what}");
                    assert_eq!(recs[0].role, "xfer");
                    assert_eq!(recs[0].bytes, Some(iters as u64 * bytes), "{what}");
                }
            }
        }
    }
}

/// The free pages of one hugetlb pool on this machine, if it has the pool.
fn free_pages(kb: u64) -> Option<u64> {
    perflab_sys::hugepages::pools(&SysRoot::host())
        .ok()?
        .into_iter()
        .find(|p| p.size_kb == kb)
        .map(|p| p.free)
}

#[test]
fn hugetlb_without_a_pool_is_refused_naming_the_pool() {
    for (backing, kb, knob) in [
        ("2m", 2048, "hugepages=2M:auto"),
        ("1g", 1048576, "hugepages=1G:auto"),
    ] {
        if free_pages(kb).unwrap_or(0) > 0 {
            perflab_testkit::skip(
                &format!("no-free-hugepages-{kb}kB"),
                format!(
                    "{backing} left out: this machine has free {kb} kB huge pages, so the \
                     refusal cannot be provoked without changing system settings"
                ),
            );
            continue;
        }
        for engine in ["memcpy", "pvm"] {
            let r = run(&[
                ("engine", engine),
                ("backing", backing),
                ("size", "64K"),
                ("duration", "0.05s"),
            ]);
            let msg = match r {
                Err(WorkloadError::Failed(m)) => m,
                other => panic!("{engine} {backing}: expected a refusal, got {other:?}"),
            };
            assert!(msg.contains(&format!("hugepages-{kb}kB")), "{msg}");
            assert!(msg.contains(knob), "{msg}");
            assert!(msg.contains(&format!("{backing} backing")), "{msg}");
            assert!(msg.contains("64K"), "{msg}");
        }
    }
}

#[test]
fn stop_flag_ends_a_long_run_promptly() {
    for engine in ["memcpy", "pvm"] {
        for state in ["pinned", "unpinned"] {
            let p = params(&[
                ("engine", engine),
                ("state", state),
                ("size", "256K"),
                ("duration", "600s"),
            ]);
            let ctx = MeasureCtx::new(SysRoot::host(), Vec::new());
            let stop = ctx.stop.clone();
            let t0 = Instant::now();
            let setter = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                stop.store(true, Ordering::Relaxed);
            });
            let r = Xfer.run(&p, &ctx);
            setter.join().unwrap();
            assert!(
                matches!(r, Err(WorkloadError::Interrupted)),
                "{engine} {state}: {r:?}"
            );
            // Far from the 600 s asked for, with room for a loaded machine.
            assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
        }
    }
}

#[test]
fn pinned_run_reports_its_cpu() {
    let p = params(&[("cpu", "0"), ("size", "64K"), ("duration", "0.02s")]);
    let ctx = MeasureCtx::new(SysRoot::host(), Xfer.cpus(&p).unwrap());
    Xfer.run(&p, &ctx).unwrap();
    let rec = &ctx.threads.take()[0];
    assert_eq!(rec.pinned_cpu, Some(0));
    assert!(rec.cpu_samples.iter().all(|&(c, _)| c == 0), "{rec:?}");
}
