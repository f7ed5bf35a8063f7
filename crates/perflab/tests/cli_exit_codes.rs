//! Exit codes and output that scripts and CI can trust: a run whose measurements all failed
//! exits 1, one with some failures exits 3 and says so last, `run --format json` prints one
//! JSON document on stdout, a cross-check outside its tolerance exits 4, and an HTML report
//! to a missing directory is bad input (2) that writes nothing.

use crate::common;

use common::{run_id, text, Lab};
use serde_json::Value;

/// The counts are the subject here: monitors that need no telemetry repetitions.
const MONITORS: [&str; 2] = ["--monitors", "interrupts,cpu_time"];

fn null_run(lab: &Lab, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--workload", "null", MONITORS[0], MONITORS[1]];
    args.extend_from_slice(extra);
    lab.run(&args)
}

#[test]
fn a_run_whose_measurements_all_failed_exits_1_and_is_kept() {
    let lab = Lab::new();
    let o = null_run(&lab, &["-p", "fail_every=1", "--reps", "3"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    assert_eq!(
        err.lines().last().unwrap(),
        format!(
            "run {id}: complete, but all 3 measurements failed: no numbers (see perflab show {id})"
        ),
        "{err}"
    );
    // The failures are results too: stored, listed, shown.
    let doc = lab.export(&id);
    assert_eq!(doc["measurements"].as_array().unwrap().len(), 3);
}

/// With two variants the end of the run compared them, found no metric, and ended a
/// run that failed as bad input (exit 2, issue 31 item 8): like one variant, it exits 1,
/// shows each variant's failures and says so last, in text and in JSON.
#[test]
fn a_run_of_two_variants_whose_measurements_all_failed_exits_1() {
    let lab = Lab::new();
    let args = [
        "-p",
        "fail_every=1",
        "--variant",
        "a:",
        "--variant",
        "b:",
        "--reps",
        "2",
    ];
    let o = null_run(&lab, &args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    assert_eq!(
        err.lines().last().unwrap(),
        format!(
            "run {id}: complete, but all 4 measurements failed: no numbers (see perflab show {id})"
        ),
        "{err}"
    );
    assert!(out.contains("no measurement succeeded"), "{out}");
    let o = null_run(&lab, &[&args[..], &["--format", "json"]].concat());
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    let doc = json_stdout(&o);
    assert_eq!((&doc["exit_code"], &doc["failed"]), (&1.into(), &4.into()));
}

#[test]
fn a_run_with_some_failures_exits_3_and_says_so_in_its_last_line() {
    let lab = Lab::new();
    let o = null_run(&lab, &["-p", "fail_every=2", "--reps", "4"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    assert_eq!(
        err.lines().last().unwrap(),
        format!("run {id}: complete, 2 of 4 measurements failed (see perflab show {id})")
    );
    // The tables still come, on stdout, before that line.
    assert!(out.contains("value"), "{out}");
}

/// A run that compares variants, one of which cannot be had here (the fake knob is not on
/// this machine's /sys), measured only the other: complete, but no comparison happened,
/// and a script must tell that from success.
#[test]
fn a_run_whose_compared_variant_was_unavailable_exits_5_and_says_so_last() {
    let lab = Lab::new();
    let o = null_run(
        &lab,
        &["--variant", "a:", "--variant", "x:fake=1", "--reps", "2"],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(5), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "run {id}: complete, but not compared as planned: variant x ("
        )) && last.ends_with(&format!(
            ") unavailable on this machine (see perflab show {id})"
        )),
        "{err}"
    );
    // The same in the JSON document a script reads.
    let o = null_run(
        &lab,
        &[
            "--variant",
            "a:",
            "--variant",
            "x:fake=1",
            "--reps",
            "2",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(5), "{:?}", text(&o));
    let doc = json_stdout(&o);
    assert_eq!(doc["exit_code"], 5, "{doc}");
    // One variant compares nothing: its being the only one is no missing comparison.
    let o = null_run(&lab, &["--variant", "a:", "--reps", "2"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

#[test]
fn a_clean_run_exits_0_without_a_failure_line() {
    let lab = Lab::new();
    let o = null_run(&lab, &["--reps", "2"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("measurements failed"), "{err}");
}

/// stdout of `run --format json` must be exactly one JSON document.
fn json_stdout(o: &std::process::Output) -> Value {
    let (out, err) = text(o);
    serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{out}\nstderr: {err}"))
}

/// Two variants of the null workload (100 against 110, 1% noise), `fail_every` as given.
fn two_variant_file(lab: &Lab, fail_every: u32) -> String {
    let path = lab.dir.path().join("nulls.toml");
    std::fs::write(
        &path,
        format!(
            r#"
name = "nulls"
workload = "null"
repetitions = 6
monitors = ["interrupts", "cpu_time"]
[params]
noise_pct = 1
fail_every = {fail_every}
[[variants]]
name = "a"
params = {{ value = 100 }}
[[variants]]
name = "b"
params = {{ value = 110 }}
"#
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn format_json_prints_one_document_with_counts_verdicts_and_the_database() {
    let lab = Lab::new();
    let file = two_variant_file(&lab, 0);
    let o = lab.run(&["run", &file, "--format", "json"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc = json_stdout(&o);
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(
        (
            &doc["planned"],
            &doc["measured"],
            &doc["failed"],
            &doc["left"]
        ),
        (&12.into(), &12.into(), &0.into(), &0.into())
    );
    assert!(doc.get("message").is_none(), "{doc}");
    let db = std::fs::canonicalize(lab.db()).unwrap();
    assert_eq!(doc["database"], db.to_str().unwrap());
    // The comparison the text output prints: b against the baseline a, 10% better.
    let cmp = &doc["comparisons"][0]["comparison"];
    assert_eq!((&cmp["base"], &cmp["other"]), (&"a".into(), &"b".into()));
    let row = &cmp["rows"][0]["cmp"];
    let change = row["change_pct"].as_f64().unwrap();
    assert!((change - 10.0).abs() < 3.0, "{row}");
    assert!(
        row["verdict"].is_string() || row["verdict"].is_object(),
        "{row}"
    );
    // Progress went to stderr, and the run id there is the document's.
    assert_eq!(run_id(&err), doc["run"].to_string());
}

#[test]
fn format_json_with_failures_still_prints_one_document_and_the_exit_code() {
    let lab = Lab::new();
    let file = two_variant_file(&lab, 4);
    let o = lab.run(&["run", &file, "--format", "json"]);
    assert_eq!(o.status.code(), Some(3), "{:?}", text(&o));
    let doc = json_stdout(&o);
    assert_eq!(doc["exit_code"], 3);
    assert_eq!((&doc["failed"], &doc["measured"]), (&3.into(), &9.into()));
    assert!(
        doc["message"]
            .as_str()
            .unwrap()
            .ends_with("3 of 12 measurements failed (see perflab show 1)"),
        "{doc}"
    );

    let o = null_run(&lab, &["-p", "fail_every=1", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
    let doc = json_stdout(&o);
    assert_eq!((&doc["measured"], &doc["failed"]), (&0.into(), &3.into()));
    assert_eq!(doc["comparisons"], serde_json::json!([]));
    assert!(doc["summary"].is_object(), "{doc}");
}

#[test]
fn a_dry_run_in_json_is_one_document_with_the_plan() {
    let lab = Lab::new();
    let file = two_variant_file(&lab, 0);
    let o = lab.run(&["run", &file, "--dry-run", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let doc = json_stdout(&o);
    let order: Vec<&str> = doc["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["variant"].as_str().unwrap())
        .collect();
    assert_eq!(order.len(), 12);
    assert!(order.chunks(2).all(|c| c == ["a", "b"]), "{order:?}");
    assert!(!lab.db().exists(), "a dry run created the database");
}

#[test]
fn a_crosscheck_outside_its_tolerance_exits_4() {
    // A fake `perf` that reports a memcpy of 1 KB/s: against any real memcpy the ratio is
    // millions, far outside ±3%, so nothing here compares two measured speeds.
    let lab = Lab::new();
    let bin = lab.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let perf = bin.join("perf");
    std::fs::write(
        &perf,
        "#!/bin/sh\n\
         case \"$*\" in *--help*) echo '    -l, --nr_loops <n>    loops'; exit 0;; esac\n\
         printf '%s\\n' \"# Running 'mem/memcpy' benchmark:\" \
         \"# function 'default' (Default memcpy() provided by glibc)\" '' \
         '      0.000001 GB/sec'\n",
    )
    .unwrap();
    let mut p = std::fs::metadata(&perf).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
    std::fs::set_permissions(&perf, p).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = lab
        .cmd()
        .env("PATH", path)
        .args([
            "crosscheck",
            "memcpy",
            "--sizes",
            "64K",
            "--duration",
            "0.05s",
        ])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(4), "stdout: {out}\nstderr: {err}");
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("OUTSIDE TOLERANCE: 1 of 1 checked: size 64K ratio"),
        "{out}"
    );
}

#[test]
fn crosscheck_tolerance_flag_is_checked() {
    let lab = Lab::new();
    let o = lab.run(&["crosscheck", "memcpy", "--tolerance", "-1"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("--tolerance -1"), "{:?}", text(&o));
    let o = lab.run(&["crosscheck", "runner", "--tolerance", "3"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("not to runner"), "{:?}", text(&o));
}

#[test]
fn report_html_into_a_missing_directory_is_bad_input_and_writes_nothing() {
    let lab = Lab::new();
    let o = null_run(&lab, &["--reps", "2"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let id = run_id(&text(&o).1);
    let before = common::snapshot(lab.dir.path());
    let target = lab.dir.path().join("missing/sub/r.html");
    let o = lab.run(&["report", &id, "--html", target.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("--html {}", target.display())) && err.contains("does not exist"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!lab.dir.path().join("missing").exists());
    // Nothing else changed either (the database is only read).
    let after = common::snapshot(lab.dir.path());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );

    // `export -o` says the same kind of thing with the same code.
    let o = lab.run(&["export", &id, "-o", target.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

#[test]
fn help_lists_every_exit_code() {
    let lab = Lab::new();
    let o = lab.run(&["--help"]);
    // clap wraps the text to the terminal width; compare with the line breaks squeezed out.
    let out = text(&o).0.split_whitespace().collect::<Vec<_>>().join(" ");
    // The summaries are the first clauses of the codes' docs in exit.rs (cli_man checks
    // that every code defined there is listed).
    for needle in [
        "Exit codes: 0 success;",
        "1 a failure while running;",
        "2 bad input",
        "3 a run that completed with some of its measurements failed;",
        "4 a cross-check whose ratio or cost is outside its stated tolerance;",
        "5 a run that could not compare as planned;",
        "6 busy, another perflab holds a setting the run changes;",
        "7 a row of `compare --fail-on` read a verdict the gate fails on;",
        "8 a run that completed with some measurements ineffective;",
        "130 stopped by a signal",
        "`perflab man` says more of each.",
    ] {
        assert!(out.contains(needle), "{needle:?} not in {out}");
    }
}

#[test]
fn a_dry_run_of_a_preset_in_json_prints_only_json_and_notes_go_to_stderr() {
    let lab = Lab::new();
    // `quick` on any machine: the counters monitor's note (telemetry repetitions, or
    // counters left out without a PMU) is printed, on stderr.
    let o = lab.run(&["run", "quick", "--dry-run", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let doc = json_stdout(&o);
    assert_eq!(doc["dry_run"], true);
    let plan = doc["plan"].as_array().unwrap();
    assert_eq!(doc["measurements"].as_u64(), Some(plan.len() as u64));
    assert!(!plan.is_empty());
    assert_eq!(doc["spec"]["workload"], "ctxsw", "{doc}");
    assert!(doc["timed_seconds"].as_f64().unwrap() > 0.0, "{doc}");
    let (_, err) = text(&o);
    assert!(err.contains("counters"), "the note is on stderr: {err}");
    // The text form stays the default and is not JSON.
    let o = lab.run(&["run", "quick", "--dry-run"]);
    let (out, _) = text(&o);
    assert!(out.contains(" measurements"), "{out}");
    assert!(serde_json::from_str::<Value>(&out).is_err());
    assert!(!lab.db().exists(), "a dry run created the database");
    // A dry run of a resume would run it: refused as bad input.
    let o = lab.run(&["run", "--resume", "1", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}
