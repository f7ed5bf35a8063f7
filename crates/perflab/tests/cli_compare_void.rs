//! `perflab compare RUN_A RUN_B` judges void rows as `run` does (issue 32 item 4): two
//! runs of one variant whose `cpuidle` setting was changed between them, on a fixture tree
//! whose idle counters never move, compared nothing. Before, the row read `undecided` with
//! "about 3 repetitions per side would decide it", and compare exited 0.

use crate::common::{run_id, text, Lab};

/// `perflab --sysroot ROOT run --workload ctxsw` on CPUs 0 and 1 with `variants`
/// (`name:cpuidle=SETTING`), which must exit `code`; its run id.
fn ctxsw_run(lab: &Lab, root: &std::path::Path, variants: &[&str], code: i32) -> String {
    let mut args = vec![
        "--sysroot",
        root.to_str().unwrap(),
        "run",
        "--workload",
        "ctxsw",
        "-p",
        "cpu_a=0",
        "-p",
        "cpu_b=1",
        "-p",
        "duration=100ms",
        "--reps",
        "2",
    ];
    for v in variants {
        args.extend(["--variant", v]);
    }
    let o = lab.run(&args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(code), "stdout: {out}\nstderr: {err}");
    run_id(&err)
}

/// Whether CPUs 0 and 1 exist; if not, the skip is said.
fn two_cpus() -> bool {
    let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    if !two {
        perflab_testkit::skip("2-cpus", "the workload runs on CPUs 0 and 1");
    }
    two
}

#[test]
fn two_runs_whose_changed_setting_moved_nothing_compare_void() {
    if !two_cpus() {
        return;
    }
    let lab = Lab::new();
    let root = lab.fixture_copy("x86-intel-idle");
    let a = ctxsw_run(&lab, &root, &["v:cpuidle=poll-only"], 0);
    let b = ctxsw_run(&lab, &root, &["v:cpuidle=all"], 0);
    let o = lab.run(&["compare", &a, &b]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(9), "stdout: {out}\nstderr: {err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("0-1 "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.trim_end().ends_with(" void"), "{row}");
    assert!(!out.contains("would decide it"), "{out}");
    // Listed after the tables, and counted on the last line.
    let listing = out
        .split("Void comparisons (tested nothing")
        .nth(1)
        .unwrap_or_else(|| panic!("no listing: {out}"));
    assert!(
        listing.contains(&format!(
            "  void: run {b} vs run {a} (v) at 0-1: no idle entries in either variant"
        )),
        "{listing}"
    );
    // Where the states were enabled (run B's v) is said, as is the other side.
    assert!(
        listing.contains(&format!("v in run {b} entered"))
            && listing.contains("(enabled there)")
            && listing.contains(&format!("v in run {a} never")),
        "{listing}"
    );
    assert_eq!(
        err.lines().last().unwrap_or_default(),
        format!(
            "perflab: run {b} vs run {a}: 1 of 1 rows tested nothing (void: a setting changed \
             nothing its telemetry shows, listed above; more repetitions would not help)"
        )
    );
    // JSON carries the verdict and the reason; the exit code is the same.
    let o = lab.run(&["compare", &a, &b, "--format", "json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(9), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = doc["comparison"]["rows"].as_array().unwrap();
    assert_eq!(rows[0]["cmp"]["verdict"], "void", "{doc}");
    assert!(rows[0]["cmp"]["decision"]["void"]
        .as_str()
        .unwrap()
        .starts_with("no idle entries in either variant"));
    // A void row is no undecided one: the gate does not trip, the void code stands.
    let o = lab.run(&["compare", &a, &b, "--fail-on", "undecided,worse"]);
    assert_eq!(o.status.code(), Some(9), "{}", text(&o).1);
}

/// Two variants of one run that compared nothing at every point: `compare RUN` lists them
/// and exits 9 as `run` did (it printed the void rows and exited 0).
#[test]
fn variants_of_one_run_void_throughout_exit_9_from_compare_too() {
    if !two_cpus() {
        return;
    }
    let lab = Lab::new();
    let root = lab.fixture_copy("x86-intel-idle");
    let id = ctxsw_run(&lab, &root, &["p:cpuidle=poll-only", "a:cpuidle=all"], 9);
    let o = lab.run(&["compare", &id]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(9), "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains("\n  void: a vs p at 0-1: no idle entries in either variant"),
        "{out}"
    );
    assert!(
        err.trim_end().ends_with(
            "a vs p: 1 of 1 rows tested nothing (void: a setting changed nothing its \
                        telemetry shows, listed above; more repetitions would not help)"
        ),
        "{err}"
    );
}
