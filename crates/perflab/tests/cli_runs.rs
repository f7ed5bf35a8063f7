//! End-to-end: runs of the deterministic `null` workload through the real binary, the
//! store commands over them, and resume after an interrupt.

mod common;

use common::{text, Lab};

fn run_id(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("run ").and_then(|r| r.split(':').next()))
        .expect("a run id on stderr")
        .to_string()
}

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

    let o = lab.run(&["ls"]);
    let (out, _) = text(&o);
    assert!(
        out.contains("null") && out.contains("complete") && out.contains("6/6"),
        "{out}"
    );

    let o = lab.run(&["export", &id, "--format", "json"]);
    assert!(o.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 6);
    // The stored spec is the fully expanded one: both grid points are explicit.
    assert_eq!(doc["run"]["spec"]["points"].as_array().unwrap().len(), 2);
    assert!(doc["run"]["fingerprint"]["kernel"].as_str().unwrap().len() > 1);

    let o = lab.run(&["export", &id, "--format", "csv"]);
    let (csv, _) = text(&o);
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
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
    assert!(o.status.success(), "{err}");
    let id = run_id(&err);
    let o = lab.run(&["export", &id]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
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

#[test]
fn sigint_keeps_measurements_and_resume_finishes_without_redoing() {
    let lab = Lab::new();
    let child = lab
        .cmd()
        .args([
            "run",
            "--workload",
            "null",
            "-p",
            "sleep=100ms",
            "--reps",
            "30",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("perflab run --resume"), "{err}");
    let id = run_id(&err);

    let o = lab.run(&["export", &id]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let before = doc["measurements"].as_array().unwrap().len();
    assert!(before > 0 && before < 30, "measured {before}");
    assert_eq!(doc["run"]["status"], "interrupted");

    let o = lab.run(&["run", "--resume", &id]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let o = lab.run(&["export", &id]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
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
