//! End-to-end: adaptive repetitions (`--target-ci`, `--max-reps`) with the null workload's
//! seeded noise: a loose target stops at the planned repetitions, an impossible one at
//! exactly the cap, bad settings change nothing, and a stopped adaptive run resumes.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::{run_id, text, Lab};

/// Two points with ±10% pseudo-noise: wide enough that no realistic target is met at
/// once, cheap enough that 20 measurements take well under a second.
const NOISY: &[&str] = &[
    "run",
    "--workload",
    "null",
    "-p",
    "value=100,200",
    "-p",
    "noise_pct=10",
    "--monitors",
    "cpu_time",
];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    NOISY.iter().copied().chain(extra.iter().copied()).collect()
}

/// Measurements per (point, variant) in an exported run.
fn counts(doc: &serde_json::Value) -> BTreeMap<(u64, String), usize> {
    let mut out = BTreeMap::new();
    for m in doc["measurements"].as_array().unwrap() {
        let key = (
            m["point"].as_u64().unwrap(),
            m["variant"].as_str().unwrap().to_string(),
        );
        *out.entry(key).or_default() += 1;
    }
    out
}

#[test]
fn a_loose_target_is_met_by_the_planned_repetitions() {
    let lab = Lab::new();
    let o = lab.run(&args(&["--reps", "3", "--target-ci", "50"]));
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("adaptive round"), "{err}");
    assert!(
        out.contains("target ±50%: 2 of 2 points converged\n"),
        "{out}"
    );
    let id = run_id(&err);
    let doc = lab.export(&id);
    assert!(counts(&doc).values().all(|&n| n == 3), "{:?}", counts(&doc));
    let o = lab.run(&["show", &id, "--format", "json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let shown: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = &shown["adaptive"];
    assert_eq!(a["summary"], "target ±50%: 2 of 2 points converged");
    assert_eq!(a["metric"], "value");
    let points = a["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert!(points
        .iter()
        .all(|p| p["converged"] == true && p["attempts"] == 3 && p["hit_cap"] == false));
    assert_eq!(doc["run"]["spec"]["adaptive"]["target_ci_pct"], 50.0);
    assert_eq!(doc["run"]["spec"]["adaptive"]["max_reps"], 30);
}

#[test]
fn an_impossible_target_stops_at_the_cap_in_balanced_rounds() {
    let lab = Lab::new();
    let o = lab.run(&args(&[
        "--reps",
        "3",
        "--variant",
        "a:",
        "--variant",
        "b:",
        "--target-ci",
        "0.0001",
        "--max-reps",
        "5",
    ]));
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("adaptive round 1: 2 of 2 points above ±0.0001% (cap 5)"),
        "{err}"
    );
    assert!(err.contains("adaptive round 2:"), "{err}");
    assert!(!err.contains("adaptive round 3:"), "{err}");
    let last = out.lines().last().unwrap_or("");
    assert!(
        last.starts_with(
            "target ±0.0001%: 0 of 2 points converged; 2 hit the cap of 5 repetitions: value=100 ["
        ),
        "{out}"
    );
    assert!(last.contains(", value=200 ["), "{last}");

    let doc = lab.export(&run_id(&err));
    assert_eq!(doc["run"]["status"], "complete");
    let c = counts(&doc);
    assert_eq!(c.len(), 4);
    assert!(c.values().all(|&n| n == 5), "{c:?}");
    // The rounds come after the plan, interleaved like it: A B at a point, next point.
    let tail: Vec<(u64, String, u64, u64)> = doc["measurements"].as_array().unwrap()[12..]
        .iter()
        .map(|m| {
            (
                m["seq"].as_u64().unwrap(),
                m["variant"].as_str().unwrap().to_string(),
                m["point"].as_u64().unwrap(),
                m["rep"].as_u64().unwrap(),
            )
        })
        .collect();
    let expect: Vec<(u64, String, u64, u64)> = (0..8u64)
        .map(|i| {
            let v = if i % 2 == 0 { "a" } else { "b" };
            (12 + i, v.to_string(), (i / 2) % 2, 3 + i / 4)
        })
        .collect();
    assert_eq!(tail, expect);
}

#[test]
fn bad_settings_exit_2_and_change_nothing() {
    let lab = Lab::new();
    // One finished run, so "nothing changed" is checked against a real database.
    let o = lab.run(&args(&["--reps", "2"]));
    assert!(o.status.success(), "{:?}", text(&o));
    let before = lab.run(&["ls", "--format", "json"]).stdout;
    let file = lab.dir.path().join("bad.toml");
    std::fs::write(&file, "name = 'bad'\nworkload = 'null'\ntarget_ci = 0\n").unwrap();
    let file = file.to_str().unwrap().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (args(&["--target-ci", "0"]), "--target-ci"),
        (args(&["--target-ci", "-1"]), "--target-ci"),
        (args(&["--target-ci", "nan"]), "--target-ci"),
        (args(&["--target-ci", "inf"]), "--target-ci"),
        (args(&["--target-ci", "abc"]), "--target-ci"),
        (args(&["--max-reps", "10"]), "--max-reps needs --target-ci"),
        (
            args(&["--reps", "5", "--target-ci", "1", "--max-reps", "4"]),
            "--max-reps",
        ),
        (args(&["--target-ci", "1", "--max-reps", "x"]), "--max-reps"),
        (vec!["run", file.as_str()], "target_ci"),
    ];
    for (a, needle) in cases {
        let o = lab.run(&a);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.starts_with("perflab: "), "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: {err:?} lacks {needle:?}");
    }
    assert_eq!(lab.run(&["ls", "--format", "json"]).stdout, before);
}

#[test]
fn sigint_in_an_adaptive_round_leaves_a_resumable_run() {
    let lab = Lab::new();
    let mut child = lab
        .cmd()
        .args(args(&[
            "-p",
            "sleep=100ms",
            "--reps",
            "2",
            "--target-ci",
            "0.0001",
            "--max-reps",
            "6",
        ]))
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("adaptive round 2:") {
            break;
        }
    }
    assert!(seen.contains("adaptive round 2:"), "{seen}");
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    for line in lines {
        seen.push_str(&line.unwrap());
        seen.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}");
    assert!(seen.contains("perflab run --resume"), "{seen}");
    let id = run_id(&seen);
    let doc = lab.export(&id);
    assert_eq!(doc["run"]["status"], "interrupted");
    let n = doc["measurements"].as_array().unwrap().len();
    assert!((6..12).contains(&n), "measured {n} before the stop");

    let o = lab.run(&["run", "--resume", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("0 of 2 points converged; 2 hit the cap of 6 repetitions"),
        "{out}"
    );
    let doc = lab.export(&id);
    assert_eq!(doc["run"]["status"], "complete");
    let c = counts(&doc);
    assert!(c.values().all(|&n| n == 6), "{c:?}");
    let mut seqs: Vec<u64> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_u64().unwrap())
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..12).collect::<Vec<u64>>());
}
