//! Resource limits and bounds (issue 21): a grid too large to expand is refused from its
//! axes' lengths alone, numeric options outside their documented ranges are refused, and
//! odd `--monitors` and `--db` values get one plain line. Each refusal is exit 2 with one
//! line, and no database is created.

mod common;

use common::{text, Lab};

/// The billion-point grid of the issue: nine axes of ten values on `xfer`.
fn billion_point_grid() -> Vec<&'static str> {
    vec![
        "run",
        "--workload",
        "xfer",
        "-p",
        "size=1K,2K,3K,4K,5K,6K,7K,8K,9K,10K",
        "-p",
        "channels=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "threads_per_channel=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "buffers_per_thread=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "total_buffers=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "irq_period=1us,2us,3us,4us,5us,6us,7us,8us,9us,10us",
        "-p",
        "transfers_per_thread=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "duration=1s,2s,3s,4s,5s,6s,7s,8s,9s,10s",
        "-p",
        "cpu=-1,0,1,2,3,4,5,6,7,8",
    ]
}

/// Runs perflab under a 1 GiB address-space limit: expanding the grid before counting it
/// needs tens of gigabytes, so the old behaviour dies of allocation failure here instead of
/// taking the machine's memory. Time is not measured: the memory bound says the same.
fn run_limited(lab: &Lab, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new("sh");
    c.arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_perflab"))
        .args(args)
        .env("PERFLAB_DB", lab.db())
        .env("PERFLAB_JOURNAL", lab.journal())
        .current_dir(lab.dir.path());
    c.output().unwrap()
}

#[test]
fn a_billion_point_grid_is_refused_from_its_axes_before_it_is_built() {
    let lab = Lab::new();
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut args = billion_point_grid();
        args.extend_from_slice(extra);
        let o = run_limited(&lab, &args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}\n{out}\n{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("the parameter grid has 1000000000 (10^9) points (buffers_per_thread 10 × channels 10 × cpu 10 × duration 10 × ")
                && err.contains("at most 100000"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
        assert!(!lab.db().exists());
    }
}
