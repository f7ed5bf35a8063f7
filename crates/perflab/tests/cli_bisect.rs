//! End-to-end `perflab bisect` (issue 33, docs/bisect.md): a throwaway git repository made
//! here — a small C program that sums a buffer, one of whose eight commits doubles the
//! work — bisected with `--build` and an exec study. The culprit is found; a bisection
//! killed mid-way and run again finishes with nothing measured twice; bad input is one
//! line, exit 2, with nothing stored. The change is 2x, so a loaded machine still tells it.

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{text, Lab};
use perflab_testkit::have_tool;

const PROGRAM: &str = r#"/* Sums a small buffer ROUNDS times; prints the best of 5 timings. */
#include <stdio.h>
#include <time.h>
#define ROUNDS 1
static unsigned char buf[16384];
int main(void) {
    for (unsigned i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)i;
    double best = 1e30;
    unsigned long sum = 0;
    for (int t = 0; t < 5; t++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int r = 0; r < 100 * ROUNDS; r++)
            for (unsigned i = 0; i < sizeof buf; i++) sum += buf[i] ^ (unsigned char)r;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double us = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
        if (us < best) best = us;
    }
    printf("time_us: %.1f (sum %lu)\n", best, sum);
    return 0;
}
"#;

const STUDY: &str = r#"name = "sum-speed"
workload = "exec"
repetitions = 1
[params]
cmd = "{build}/sum"
regex = 'time_us: ([0-9.]+)'
metric = "time_us"
better = "lower"
"#;

const BUILD: &str = "cc -O1 -o sum sum.c";

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(o.status.success(), "git {args:?}: {:?}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Eight commits: the first version, three notes, the slowdown (ROUNDS 2), three notes.
/// Returns the repository and the slowdown's hash.
fn example_repo(lab: &Lab) -> (PathBuf, String) {
    let repo = lab.dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let src = repo.join("sum.c");
    let commit = |text: &str, msg: &str| {
        std::fs::write(&src, text).unwrap();
        git(&repo, &["add", "sum.c"]);
        git(&repo, &["commit", "-q", "-m", msg]);
        git(&repo, &["rev-parse", "HEAD"])
    };
    let mut text = PROGRAM.to_string();
    commit(&text, "sum: first version");
    for i in 1..=3 {
        text.push_str(&format!("/* note {i} */\n"));
        commit(&text, &format!("sum: note {i}"));
    }
    text = text.replace("#define ROUNDS 1", "#define ROUNDS 2");
    let culprit = commit(&text, "sum: twice the rounds (the slowdown)");
    for i in 4..=6 {
        text.push_str(&format!("/* note {i} */\n"));
        commit(&text, &format!("sum: note {i}"));
    }
    std::fs::write(lab.dir.path().join("study.toml"), STUDY).unwrap();
    (repo, culprit)
}

fn bisect_args(repo: &Path) -> Vec<String> {
    [
        "bisect",
        "--repo",
        &repo.to_string_lossy(),
        "--good",
        "HEAD~7",
        "--bad",
        "HEAD",
        "--build",
        BUILD,
        "--cache",
        "cache",
        "study.toml",
        "--format",
        "json",
    ]
    .map(String::from)
    .to_vec()
}

fn have_tools() -> bool {
    have_tool("git", "git") && have_tool("cc", "gcc")
}

/// Measurements stored by the bisection's runs: (runs, measurements done).
fn stored(lab: &Lab) -> (usize, u64) {
    let o = lab.run(&["ls", "--format", "json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs: Vec<&serde_json::Value> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["label"]
                .as_str()
                .is_some_and(|l| l.starts_with("bisect "))
        })
        .collect();
    let done = runs.iter().map(|r| r["done"].as_u64().unwrap()).sum();
    (runs.len(), done)
}

/// The measurements of the bisection's rounds, counted one by one in the store (`perflab
/// export`): of each run, the repetitions where every variant (good, commit, bad) has a
/// figure that counts (a disturbed or failed one leaves its round out, and the bisection
/// asks for another). No (variant, repetition) of a run may be stored twice.
fn measurements_in_store(lab: &Lab) -> u64 {
    let o = lab.run(&["ls", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut n = 0;
    for r in doc["runs"].as_array().unwrap() {
        if !r["label"]
            .as_str()
            .is_some_and(|l| l.starts_with("bisect "))
        {
            continue;
        }
        let id = r["id"].to_string();
        let export = lab.export(&id);
        let mut by_rep: std::collections::BTreeMap<u64, Vec<bool>> = Default::default();
        let mut seen = std::collections::BTreeSet::new();
        let mut variants = std::collections::BTreeSet::new();
        for m in export["measurements"].as_array().unwrap() {
            let k = (m["variant"].to_string(), m["rep"].as_u64().unwrap());
            assert!(seen.insert(k.clone()), "run {id}: {k:?} measured twice");
            variants.insert(k.0);
            let counts = m["status"]["status"] == "ok" && m["role"] == "headline";
            by_rep.entry(k.1).or_default().push(counts);
        }
        for ok in by_rep.values() {
            if ok.len() == variants.len() && ok.iter().all(|&c| c) {
                n += ok.len() as u64;
            }
        }
    }
    n
}

#[test]
fn bisect_finds_the_slowdown_and_a_killed_bisection_resumes_measuring_nothing_twice() {
    if !have_tools() {
        return;
    }
    let lab = Lab::new();
    let (repo, culprit) = example_repo(&lab);
    // Killed once the ends and a first commit are stored: the whole process group, so the
    // `perflab run` it started dies with it, mid-run.
    let mut child = lab
        .cmd()
        .args(bisect_args(&repo))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut killed = false;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if lab.db().exists() && stored(&lab).0 >= 2 {
            // SAFETY: kill(2) on the group of a child this test started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            killed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait().unwrap();
    // `perflab run --resume RUN` of one of its runs (the newest, maybe the one killed
    // mid-way) resumes the whole bisection, from another directory too.
    let (runs, _) = stored(&lab);
    assert!(
        runs >= 1,
        "the bisection stored no run before it was killed"
    );
    let elsewhere = lab.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let o = lab
        .cmd()
        .current_dir(&elsewhere)
        .args(["run", "--resume", "last", "--format", "json"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("resuming the bisection"), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["format"], "perflab-bisect");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema/perflab.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let errors = crate::json_schema::validate(
        &schema,
        &serde_json::json!({ "$ref": "#/$defs/bisect" }),
        &doc,
    );
    assert!(errors.is_empty(), "docs/schema $defs/bisect: {errors:?}");
    let outcome = &doc["bisection"]["outcome"];
    assert_eq!(outcome["kind"], "first_bad", "{out}");
    assert_eq!(
        doc["first_bad"][0].as_str(),
        Some(culprit.as_str()),
        "{out}"
    );
    // Every measurement the report rests on was stored once: the runs hold exactly what
    // the bisection counts, the killed one resumed rather than measured again.
    let (_, done) = stored(&lab);
    assert_eq!(
        measurements_in_store(&lab),
        doc["bisection"]["measurements"].as_u64().unwrap(),
        "{out}"
    );
    if killed {
        assert!(
            doc["measured_now"].as_u64().unwrap() < done,
            "the rerun measured everything again: {out}"
        );
    }
    // Every commit was built once, in perflab's own worktrees: the user's tree is clean.
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    // Run once more: everything is read back, nothing measured or built.
    let o = lab.run(
        &bisect_args(&repo)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let again: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(again["measured_now"], 0);
    assert_eq!(again["builds_run"], 0);
    assert_eq!(again["first_bad"], doc["first_bad"]);
    // The text report names the commit and its change.
    let o = lab.run(
        &bisect_args(&repo)
            .iter()
            .map(String::as_str)
            .take_while(|a| *a != "--format")
            .collect::<Vec<_>>(),
    );
    let (out, _) = text(&o);
    assert!(
        out.contains(&format!("first bad commit: {}", &culprit[..12])),
        "{out}"
    );
    assert!(out.contains("twice the rounds"), "{out}");
}

#[test]
fn bad_input_is_one_line_exit_2_and_nothing_stored() {
    if !have_tools() {
        return;
    }
    let lab = Lab::new();
    let (repo, _) = example_repo(&lab);
    let r = repo.to_string_lossy().to_string();
    let base = |good: &str, bad: &str, build: &str, dir: &str| -> Vec<String> {
        [
            "bisect",
            "--repo",
            dir,
            "--good",
            good,
            "--bad",
            bad,
            "--build",
            build,
            "--cache",
            "cache",
            "study.toml",
        ]
        .map(String::from)
        .to_vec()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            base("nosuch", "HEAD", BUILD, &r),
            "--good nosuch: no such commit",
        ),
        (base("HEAD", "HEAD~7", BUILD, &r), "swapped"),
        (
            base("HEAD~1", "HEAD", BUILD, "missing-dir"),
            "no such directory",
        ),
        (
            base("HEAD~1", "HEAD", BUILD, "cache-none"),
            "no such directory",
        ),
        (base("HEAD~7", "HEAD", "exit 1", &r), "the build failed"),
    ];
    for (args, says) in &cases {
        let o = lab.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Not a git repository, and a dirty working tree.
    let plain = lab.dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let o = lab.run(
        &base("HEAD~1", "HEAD", BUILD, &plain.to_string_lossy())
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(
        text(&o).1.contains("not a git repository"),
        "{:?}",
        text(&o)
    );
    std::fs::write(repo.join("sum.c"), "edited").unwrap();
    let o = lab.run(
        &base("HEAD~1", "HEAD", BUILD, &r)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("uncommitted changes"), "{:?}", text(&o));
    assert!(!lab.db().exists(), "nothing stored");
}

#[test]
fn ctrl_c_stops_the_bisection_with_exit_130_and_the_same_command_resumes_it() {
    if !have_tools() {
        return;
    }
    let lab = Lab::new();
    let (repo, culprit) = example_repo(&lab);
    let child = lab
        .cmd()
        .args(bisect_args(&repo))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline && !(lab.db().exists() && stored(&lab).0 >= 2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // As a terminal's Ctrl-C: SIGINT to the whole process group.
    // SAFETY: kill(2) on the group of a child this test started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let (_, err) = text(&o);
    // It may have finished before the signal came; stopped, it says how to go on.
    if o.status.code() != Some(0) {
        assert_eq!(o.status.code(), Some(130), "{err}");
        assert!(err.contains("run the same `perflab bisect` again"), "{err}");
    }
    let o = lab.run(
        &bisect_args(&repo)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        doc["first_bad"][0].as_str(),
        Some(culprit.as_str()),
        "{out}"
    );
    assert_eq!(
        measurements_in_store(&lab),
        doc["bisection"]["measurements"].as_u64().unwrap(),
        "{out}"
    );
}
