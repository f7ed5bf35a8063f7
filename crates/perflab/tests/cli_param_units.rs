//! A parameter's value reads the same wherever a person sees it: the progress lines of
//! `perflab run`, the dry run's plan, the adaptive status, and `show`'s tables and fixed
//! parameters all write a size as the report's rows do (`size=64 KiB`), by the role the
//! workload declares. They wrote `size=64K`, `size=65536` or `size=1024` before, each by
//! a way of its own.

use crate::common;

use common::{run_id, text, Lab};

/// xfer at two sizes, one repetition each, without monitors: quick and unprivileged.
const XFER: [&str; 13] = [
    "run",
    "--workload",
    "xfer",
    "--warmup",
    "0",
    "-p",
    "size=64K,128K",
    "--duration",
    "10ms",
    "--monitors",
    "none",
    "--reps",
    "1",
];

/// The point a progress line names: `  2/2 eta 0s  size=128 KiB [default] rep 0: …`.
fn progress_point(stderr: &str) -> String {
    let line = stderr
        .lines()
        .rfind(|l| l.contains("] rep "))
        .unwrap_or_else(|| panic!("no progress line: {stderr}"));
    let after_eta = line.split_once("s  ").map_or(line, |(_, rest)| rest);
    after_eta.split(" [").next().unwrap_or_default().to_string()
}

#[test]
fn a_progress_line_names_the_point_as_the_table_s_row_does() {
    let lab = Lab::new();
    let o = lab.run(&XFER);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let point = progress_point(&err);
    assert_eq!(point, "size=128 KiB", "{err}");
    let o = lab.run(&["show", &run_id(&err)]);
    let (shown, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        shown.lines().any(|l| l.starts_with(&format!("{point}  "))),
        "no row labelled {point:?}:\n{shown}"
    );
}

#[test]
fn the_dry_run_s_plan_writes_sizes_and_durations_in_their_units() {
    let lab = Lab::new();
    let mut args = XFER.to_vec();
    args.push("--dry-run");
    let o = lab.run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let first = out
        .lines()
        .find(|l| l.trim_start().starts_with("#0 "))
        .unwrap_or_else(|| panic!("no plan line: {out}"));
    assert!(
        first.contains(" size=64 KiB ") && first.contains(" duration=10 ms "),
        "{first}"
    );
}

#[test]
fn the_adaptive_status_names_points_as_the_table_s_rows_do() {
    let lab = Lab::new();
    let mut args = XFER.to_vec();
    args[12] = "2";
    // A target no two repetitions reach: both points stop at the cap, named.
    args.extend(["--target-ci", "0.001", "--max-reps", "3"]);
    let o = lab.run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("target ±0.001%"))
        .unwrap_or_else(|| panic!("no adaptive line: {out}\n{err}"));
    assert!(
        line.contains("cap of 3 repetitions: size=64 KiB (±"),
        "{line}"
    );
}

#[test]
fn show_s_fixed_parameters_write_a_size_as_the_rows_do() {
    // netrr over loopback needs no root; its latency table says the parameters fixed
    // throughout once, above its sections.
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "-p",
        "size=1K",
        "-p",
        "proto=udp,tcp",
        "--duration",
        "50ms",
        "--monitors",
        "none",
        "--reps",
        "1",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let o = lab.run(&["show", &run_id(&err)]);
    let (shown, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let intro = shown
        .lines()
        .find(|l| l.starts_with("Round trips in µs (run "))
        .unwrap_or_else(|| panic!("no latency table: {shown}"));
    assert!(intro.contains(" size=1 KiB)"), "{intro}");
}
