//! End-to-end: gpuxfer through `perflab run` on the stand-in CUDA driver library, and the
//! one-line refusals (exit 2) for no driver, no GPU, and buffers larger than the device.

use crate::common;

use common::{text, Lab};
use perflab_testkit::cuda::standin_library;

fn gpu_run(lab: &Lab, env: &[(&str, &str)], extra: &[&str]) -> std::process::Output {
    let mut c = lab.cmd();
    c.env("PERFLAB_LIBCUDA", standin_library());
    for (k, v) in env {
        c.env(k, v);
    }
    c.args([
        "run",
        "--workload",
        "gpuxfer",
        "--monitors",
        "cpu_time",
        "--reps",
        "1",
    ])
    .args(extra)
    .output()
    .expect("run perflab")
}

#[test]
fn a_bidir_scan_runs_on_the_standin_and_is_stored() {
    let lab = Lab::new();
    let o = gpu_run(
        &lab,
        &[],
        &[
            "-p",
            "size=64K,1M",
            "-p",
            "direction=h2d,bidir",
            "-p",
            "backing=pinned,4k",
            "-p",
            "duration=5ms",
        ],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(err.contains("8 of 8 measurements"), "{err}");
}

/// (environment, extra flags, the line perflab must print).
type Case = (
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    &'static str,
);

#[test]
fn no_driver_no_gpu_and_too_big_are_one_line_and_exit_2() {
    let lab = Lab::new();
    let cases: [Case; 3] = [
        (
            &[("PERFLAB_LIBCUDA", "/nonexistent/libcuda.so.1")],
            &[],
            "no CUDA driver: cannot load /nonexistent/libcuda.so.1",
        ),
        (
            &[("CUDA_STANDIN_DEVICES", "0")],
            &[],
            "no GPU: cuInit failed: CUDA_ERROR_NO_DEVICE",
        ),
        (
            &[],
            &["-p", "size=3G", "-p", "direction=bidir"],
            "bidir needs 2 device buffer(s) of 3G (6G), GPU 0 has 4G free",
        ),
    ];
    for (env, args, want) in cases {
        let o = gpu_run(&lab, env, args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{want}: {out}\n{err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}

/// A hugetlb backing on a machine whose pool is empty (the captured 2-vCPU guest's tree),
/// with no `hugepages` knob in the variant: refused before the run exists, naming the
/// knob that fills the pool; the study's own variant carries that knob and is not refused.
#[test]
fn a_hugetlb_backing_the_pool_cannot_give_is_one_line_and_exit_2() {
    let _host = crate::common::host_settings();
    let lab = Lab::new();
    let root = lab.fixture_copy("kvm-2vcpu");
    let root = root.to_str().unwrap();
    let o = gpu_run(
        &lab,
        &[],
        &["--sysroot", root, "-p", "backing=2m", "-p", "size=4M"],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(
        err.contains("need 2 huge pages of 2M, and the 2M hugetlb pool can give 0 (0 free of 0)")
            && err.contains("`hugepages=2M:auto`"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        !lab.db().exists(),
        "a refused run leaves no database behind"
    );
}
