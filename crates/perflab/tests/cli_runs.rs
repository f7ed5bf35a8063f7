//! End-to-end: runs of the deterministic `null` workload through the real binary, the
//! store commands over them, and resume after an interrupt.

use crate::common;

use common::{run_id, text, Lab};

#[test]
fn null_run_is_stored_listed_shown_and_exported() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "-p",
        "value=10,20",
        "--reps",
        "3",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    // A first-time user must learn where the numbers went without reading the docs.
    let db = std::fs::canonicalize(lab.db()).unwrap();
    assert!(
        err.contains(&format!("results stored in {}", db.display())),
        "{err}"
    );

    let o = lab.run(&["ls"]);
    let (out, _) = text(&o);
    assert!(
        // 2 points x 3 repetitions, and one telemetry repetition per point for the
        // default counters monitor, which disturbs the workload and so runs apart.
        out.contains("null") && out.contains("complete") && out.contains("8/8"),
        "{out}"
    );

    let doc = lab.export(&id);
    let ms = doc["measurements"].as_array().unwrap();
    let roles: Vec<&str> = ms.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles.iter().filter(|r| **r == "headline").count(), 6);
    assert_eq!(roles.iter().filter(|r| **r == "telemetry").count(), 2);
    let counters = |m: &serde_json::Value| {
        m["monitors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "counters")
    };
    assert!(ms.iter().all(|m| counters(m) == (m["role"] == "telemetry")));
    // The stored spec is the fully expanded one: both grid points are explicit.
    assert_eq!(doc["run"]["spec"]["points"].as_array().unwrap().len(), 2);
    assert!(doc["run"]["fingerprint"]["kernel"].as_str().unwrap().len() > 1);

    let o = lab.run(&["export", &id, "--format", "csv"]);
    let (csv, _) = text(&o);
    assert_eq!(csv.lines().count(), 1 + 8, "{csv}");
    assert!(csv.lines().next().unwrap().ends_with(",role"), "{csv}");
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .starts_with("run,seq,point,variant"));

    let o = lab.run(&["show", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("value=10") && out.contains("value=20"),
        "{out}"
    );
}

#[test]
fn failed_repetitions_are_recorded_as_failures_not_numbers() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "-p",
        "fail_every=2",
        "--reps",
        "4",
    ]);
    let (_, err) = text(&o);
    // Complete, with some measurements failed: exit code 3, not a clean 0.
    assert_eq!(o.status.code(), Some(3), "{err}");
    let id = run_id(&err);
    let doc = lab.export(&id);
    let failed: Vec<_> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["status"]["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 2, "{doc}");
    assert!(failed
        .iter()
        .all(|m| m["output"]["metrics"].as_array().unwrap().is_empty()));
}

/// A null run of `reps` repetitions of 100 ms each, its stderr piped for the run id.
fn slow_null_run(lab: &Lab, reps: &str) -> std::process::Child {
    lab.cmd()
        .args([
            "run",
            "--workload",
            "null",
            "-p",
            "sleep=100ms",
            "--reps",
            reps,
            // Resume is the subject here: no telemetry repetitions in the counts.
            "--telemetry-reps",
            "0",
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The run's first line on stderr ("run N: M measurements to go"); notes (the counters
/// monitor left out) may come before it.
fn first_run_line(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> String {
    lines
        .map(|l| l.unwrap())
        .find(|l| l.contains("measurements to go"))
        .expect("the run says how many measurements it has to go")
}

/// The number of measurements run `id` has stored so far.
fn stored(lab: &Lab, id: &str) -> usize {
    lab.export(id)["measurements"].as_array().unwrap().len()
}

/// Waits until run `id` has stored a measurement (a minute at most: a loaded machine may
/// be slow to start perflab, but not that slow).
fn wait_for_a_measurement(lab: &Lab, id: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while stored(lab, id) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "run {id} stored nothing in a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn sigint_keeps_measurements_and_resume_finishes_without_redoing() {
    use std::io::{BufRead, BufReader};
    let lab = Lab::new();
    let mut child = slow_null_run(&lab, "30");
    // Interrupted once something is stored, not after a fixed time: on a loaded machine
    // perflab may not have measured anything yet a second in.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let id = run_id(&first_run_line(&mut lines));
    wait_for_a_measurement(&lab, &id);
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let err: String = lines.map(|l| l.unwrap() + "\n").collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    // Without --db the hint names none: the same default ($PERFLAB_DB here) applies again.
    assert!(
        err.contains(&format!("resume with: perflab run --resume {id}\n")),
        "{err}"
    );

    let doc = lab.export(&id);
    let before = doc["measurements"].as_array().unwrap().len();
    assert!(before > 0 && before < 30, "measured {before}");
    assert_eq!(doc["run"]["status"], "interrupted");

    let o = lab.run(&["run", "--resume", &id]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc = lab.export(&id);
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 30);
    let mut seqs: Vec<u64> = ms.iter().map(|m| m["seq"].as_u64().unwrap()).collect();
    seqs.dedup();
    assert_eq!(seqs, (0..30).collect::<Vec<u64>>());
    assert_eq!(doc["run"]["status"], "complete");
    // The measurements from before the interrupt were kept, not redone.
    let first_started: Vec<f64> = ms
        .iter()
        .take(before)
        .map(|m| m["started_at"].as_f64().unwrap())
        .collect();
    assert!(first_started.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn a_second_process_cannot_resume_a_run_that_is_being_measured() {
    use std::io::{BufRead, BufReader};
    let lab = Lab::new();
    // 100 measurements of 100 ms: the first run is still measuring when the resume comes,
    // however slowly a loaded machine starts the second perflab; it is interrupted after.
    let mut child = slow_null_run(&lab, "100");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let id = run_id(&first_run_line(&mut lines));

    let o = lab.run(&["run", "--resume", &id]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "perflab: run {id} is being measured by another perflab process; \
             wait for it to finish or stop it, then resume"
        )
    );
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{rest:?}");
    // The refused resume measured nothing: every point at most once, in the plan's order.
    let doc = lab.export(&id);
    let seqs: Vec<u64> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<u64>>());
    assert!(seqs.len() < 100, "{} measured", seqs.len());
    assert_eq!(doc["run"]["status"], "interrupted");
}

#[test]
fn a_variant_not_measured_is_listed_once_after_a_run_with_several_tables() {
    let lab = Lab::new();
    let root = lab.fixture_copy("kvm-2vcpu");
    let o = lab.run(&[
        "--sysroot",
        root.to_str().unwrap(),
        "run",
        "--workload",
        "null",
        "--variant",
        "a:",
        "--variant",
        "b:",
        "--variant",
        "c:",
        "--variant",
        "x:fake=1",
        "--reps",
        "2",
    ]);
    let (out, err) = text(&o);
    // x was to be compared with a: the run says so in its exit code (5).
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("variant x is unavailable on this machine"),
        "{err}"
    );
    // Two tables (a against b, a against c), one list of what was not measured.
    assert_eq!(out.matches("Variants not measured").count(), 1, "{out}");
    assert!(out.contains("  x (run "), "{out}");
}

#[test]
fn experiment_file_with_variant_parameters_and_run_against_run_comparison() {
    let lab = Lab::new();
    let file = lab.dir.path().join("exp.toml");
    std::fs::write(
        &file,
        r#"
name = "nulls"
workload = "null"
repetitions = 6
[params]
noise_pct = [0.5, 0.6]
[[variants]]
name = "low"
params = { value = 100 }
[[variants]]
name = "high"
params = { value = 110 }
[compare]
baseline = "low"
"#,
    )
    .unwrap();
    let o = lab.run(&["run", file.to_str().unwrap(), "--label", "first"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    // The variant comparison is printed at the end: +10% at p < 0.05, "better".
    assert!(out.contains("better") && out.contains("+10.0"), "{out}");
    let first = run_id(&err);

    let o = lab.run(&["run", file.to_str().unwrap(), "--label", "second"]);
    let second = run_id(&text(&o).1);
    let o = lab.run(&["compare", &first, &second]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // Same workload, same values: every matched row is the same within the threshold.
    // (The comparison's rows: the telemetry table after its notes has rows of its own.)
    let table = out.split("\nNotes:").next().unwrap_or_default();
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("noise_pct="))
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert!(rows.iter().all(|r| r.trim_end().ends_with("same")), "{out}");

    let o = lab.run(&[
        "compare",
        &first,
        "--variants",
        "low,high",
        "--format",
        "json",
    ]);
    assert!(o.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["comparison"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);

    let o = lab.run(&["compare", &first, "--variants", "low,nope"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let o = lab.run(&["compare", &first, "--buckets", "5,2"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

#[test]
fn sigterm_and_sighup_restore_knobs_before_exiting() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let lab = Lab::new();
        let run = lab.start_fake_knob_run(std::process::Stdio::piped());
        let (root, before, child) = (run.root, run.before, run.child);
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(130),
            "signal {signal}: {:?}",
            text(&o)
        );
        assert_eq!(
            common::snapshot(&root),
            before,
            "signal {signal} left the tree changed"
        );
        let o = lab.run(&["restore"]);
        assert!(text(&o).0.contains("nothing to restore"), "{:?}", text(&o));
    }
}

#[test]
fn the_resume_hint_repeats_db_quoted_and_the_hint_works_as_printed() {
    use std::io::{BufRead, BufReader};
    let lab = Lab::new();
    // A path a shell would split, given with --db (PERFLAB_DB points elsewhere).
    let db = lab.dir.path().join("my results").join("it's.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let mut child = lab
        .cmd()
        .args(["--db", db.to_str().unwrap()])
        .args(["run", "--workload", "null", "-p", "sleep=100ms"])
        .args(["--reps", "30", "--telemetry-reps", "0"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let id = run_id(&first_run_line(&mut lines));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let stored_here = || {
        let o = lab.run(&["--db", db.to_str().unwrap(), "export", &id]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .map(|d| d["measurements"].as_array().map_or(0, |m| m.len()))
            .unwrap_or(0)
    };
    while stored_here() == 0 {
        assert!(std::time::Instant::now() < deadline, "nothing stored");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let err: String = lines.map(|l| l.unwrap() + "\n").collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{err}");
    let hint = err
        .lines()
        .find_map(|l| l.strip_prefix("resume with: "))
        .unwrap_or_else(|| panic!("no resume hint in {err}"));
    let quoted = format!("'{}'", db.display().to_string().replace('\'', r"'\''"));
    assert_eq!(hint, format!("perflab run --resume {id} --db {quoted}"));
    // The hint, pasted into a shell as printed, finishes the run in that database.
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_perflab"));
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(hint.replacen("perflab", &format!("'{}'", bin.display()), 1))
        .env("PERFLAB_DB", lab.db())
        .env("PERFLAB_JOURNAL", lab.journal())
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(stored_here(), 30);
}
