//! A failed write to standard output (`> /dev/full`) is one line on stderr and exit 1 in
//! every command, never a panic (issue 34 item 5: `ls`, `show`, `list`, `doctor`,
//! `compare`, `report` and `run --dry-run` panicked with exit 101; `completions` did
//! too, and `crosscheck`, `--help` and `--version` exited 0 with their output lost).
//!
//! The commands are those `perflab --help` and `perflab fleet --help` list, so a new
//! command fails this test until it is given an invocation here (or a reason it writes
//! nothing to standard output).

use crate::cli_completions::subcommands;
use crate::common;

use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Command, Output};

use common::{fixtures, text, two_variant_null_run, Lab};

/// Commands that never write to standard output, and why.
const SILENT: &[(&str, &str)] = &[(
    "serve",
    "a server that runs until stopped: its lines go to standard error",
)];

/// How each command is made to write to standard output: its arguments after `perflab`.
/// `RUN` is a stored run of two variants, `FLEET` a fleet run, `REPO` a git repository
/// of two commits with `study.toml` beside it, `ROOT` a fixture tree (doctor's KVM probe
/// takes seconds on the live machine). `quiet`: nothing else goes to stderr, so the
/// failure is all of it.
struct Invocation {
    command: &'static str,
    args: &'static [&'static str],
    quiet: bool,
}

const fn call(command: &'static str, args: &'static [&'static str], quiet: bool) -> Invocation {
    Invocation {
        command,
        args,
        quiet,
    }
}

const INVOCATIONS: &[Invocation] = &[
    call(
        "run",
        &[
            "run",
            "--workload",
            "null",
            "--monitors",
            "none",
            "--dry-run",
        ],
        true,
    ),
    // A run's progress lines go to stderr; its tables fail at the end.
    call(
        "run",
        &[
            "run",
            "--workload",
            "null",
            "--monitors",
            "none",
            "--reps",
            "2",
        ],
        false,
    ),
    call("doctor", &["--sysroot", "ROOT", "doctor"], true),
    call("restore", &["restore", "--dry-run"], true),
    call("ls", &["ls"], true),
    call("show", &["show", "RUN"], true),
    call("export", &["export", "RUN"], true),
    call("compare", &["compare", "RUN"], true),
    call("report", &["report", "RUN"], true),
    call("history", &["history"], true),
    call(
        "bisect",
        &[
            "bisect",
            "--repo",
            "REPO",
            "--good",
            "HEAD~1",
            "--bad",
            "HEAD",
            "--build",
            "true",
            "--cache",
            "cache",
            "study.toml",
        ],
        false,
    ),
    call(
        "crosscheck",
        &["crosscheck", "verdicts", "--families", "10"],
        true,
    ),
    call(
        "import",
        &[
            "import",
            "--parser",
            "perflab-json",
            "run.json",
            "--format",
            "json",
        ],
        true,
    ),
    call("push", &["push", "RUN", "--to", "other.db"], true),
    call("list", &["list"], true),
    call("completions", &["completions", "bash"], true),
    call("man", &["man"], true),
    call("fleet ls", &["fleet", "ls"], true),
    call("fleet doctor", &["fleet", "doctor", "--hosts", "h1"], false),
    call(
        "fleet run",
        &[
            "fleet",
            "run",
            "quick",
            "--hosts",
            "h1",
            "--reconnect-for",
            "1s",
        ],
        false,
    ),
    call("fleet resume", &["fleet", "resume", "FLEET"], false),
    call("fleet report", &["fleet", "report", "FLEET"], false),
];

/// What the commands need: a stored run, its export, a fleet run, a repository.
struct Setup {
    lab: Lab,
    run: String,
    fleet: String,
    ssh: std::path::PathBuf,
}

fn setup() -> Setup {
    let lab = Lab::new();
    let run = two_variant_null_run(&lab, &["--monitors", "none"]);
    let export = lab.run(&["export", &run]);
    assert!(export.status.success(), "{:?}", text(&export));
    std::fs::write(lab.dir.path().join("run.json"), &export.stdout).unwrap();
    let repo = lab.dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    for (i, args) in [
        vec!["init", "-q"],
        vec!["commit", "-q", "--allow-empty", "-m", "one"],
        vec!["commit", "-q", "--allow-empty", "-m", "two"],
    ]
    .iter()
    .enumerate()
    {
        let o = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git");
        assert!(o.status.success(), "git step {i}: {:?}", text(&o));
    }
    std::fs::write(
        lab.dir.path().join("study.toml"),
        "name = \"echo\"\nworkload = \"exec\"\nrepetitions = 2\n[params]\n\
         cmd = \"echo t: 5\"\nregex = 't: ([0-9]+)'\nmetric = \"t\"\n",
    )
    .unwrap();
    let ssh = no_ssh(lab.dir.path());
    let mut fleet = perflab(&lab, &ssh, &["fleet", "run", "quick", "--hosts", "h1"]);
    fleet.args(["--reconnect-for", "1s"]);
    let o = fleet.output().expect("fleet run");
    assert_eq!(o.status.code(), Some(1), "no host reached: {:?}", text(&o));
    let ls = perflab(&lab, &ssh, &["fleet", "ls", "--format", "json"])
        .output()
        .expect("fleet ls");
    let doc: serde_json::Value = serde_json::from_slice(&ls.stdout).expect("fleet ls JSON");
    let fleet = doc["fleets"][0]["id"]
        .as_str()
        .expect("a fleet id")
        .to_string();
    // Its host marked complete with the stored run as its own, so that `fleet report`
    // and `fleet resume` have a report to print.
    let state = lab
        .dir
        .path()
        .join(format!("state/perflab/fleets/{fleet}.json"));
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    doc["hosts"][0]["status"] = "complete".into();
    doc["hosts"][0]["local_run"] = run.parse::<i64>().unwrap().into();
    std::fs::write(&state, doc.to_string()).unwrap();
    Setup {
        lab,
        run,
        fleet,
        ssh,
    }
}

/// A fake ssh that reaches no host, for the fleet commands.
pub(crate) fn no_ssh(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("fake-ssh");
    std::fs::write(
        &path,
        "#!/bin/sh\necho 'ssh: connect to host h1 port 22: Connection refused' >&2\nexit 255\n",
    )
    .unwrap();
    let o = Command::new("chmod")
        .arg("755")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success());
    path
}

fn perflab(lab: &Lab, ssh: &Path, args: &[&str]) -> Command {
    let mut c = lab.cmd();
    c.env("XDG_STATE_HOME", lab.dir.path().join("state"))
        .env("PERFLAB_SSH", ssh)
        .args(args);
    c
}

fn have_dev_full() -> bool {
    OpenOptions::new().write(true).open("/dev/full").is_ok()
}

/// `args` run with standard output at /dev/full.
fn to_dev_full(s: &Setup, args: &[String]) -> Output {
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut c = perflab(&s.lab, &s.ssh, &strs);
    c.stdout(OpenOptions::new().write(true).open("/dev/full").unwrap());
    c.output().expect("run perflab")
}

/// Exit 1, no panic, and the failure said once, last; with `quiet`, nothing else.
fn check(what: &str, o: &Output, quiet: bool) {
    let (_, err) = text(o);
    let lines: Vec<&str> = err.lines().collect();
    let said = "perflab: cannot write to standard output: No space left on device";
    assert!(!err.contains("panicked"), "{what}: a panic:\n{err}");
    assert_eq!(o.status.code(), Some(1), "{what}:\n{err}");
    assert!(
        lines.last().is_some_and(|l| l.starts_with(said)),
        "{what}: the last line says the write failed:\n{err}"
    );
    let failures = lines.iter().filter(|l| l.starts_with("perflab: ")).count();
    assert_eq!(failures, 1, "{what}: one error line:\n{err}");
    if quiet {
        assert_eq!(lines.len(), 1, "{what}: one line:\n{err}");
    }
}

fn expand(s: &Setup, args: &[&str]) -> Vec<String> {
    let root = fixtures().join("kvm-2vcpu");
    let repo = s.lab.dir.path().join("repo");
    args.iter()
        .map(|a| match *a {
            "RUN" => s.run.clone(),
            "FLEET" => s.fleet.clone(),
            "ROOT" => root.display().to_string(),
            "REPO" => repo.display().to_string(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn every_command_says_a_failed_write_in_one_line_and_exits_1() {
    if !have_dev_full() {
        eprintln!("skipped: no writable /dev/full on this machine");
        return;
    }
    if !perflab_testkit::have_tool("git", "git") {
        return;
    }
    let s = setup();
    let mut commands = subcommands(&s.lab, &[]);
    commands.retain(|c| c != "fleet");
    commands.extend(
        subcommands(&s.lab, &["fleet"])
            .into_iter()
            .map(|c| format!("fleet {c}")),
    );
    for command in &commands {
        if SILENT.iter().any(|(c, _)| c == command) {
            continue;
        }
        let calls: Vec<&Invocation> = INVOCATIONS
            .iter()
            .filter(|i| i.command == command)
            .collect();
        assert!(
            !calls.is_empty(),
            "`perflab {command}` has no invocation in INVOCATIONS (or SILENT, with why)"
        );
        for i in calls {
            let args = expand(&s, i.args);
            check(&args.join(" "), &to_dev_full(&s, &args), i.quiet);
        }
        // Help is a write to standard output too.
        let mut help: Vec<String> = command.split(' ').map(str::to_string).collect();
        help.push("--help".into());
        check(&help.join(" "), &to_dev_full(&s, &help), true);
    }
    for top in [["--help"], ["--version"]] {
        let args = top.map(str::to_string);
        check(top[0], &to_dev_full(&s, &args), true);
    }
}

/// Every write of the binary goes through `stdout_guard`, which records a failure:
/// `print!`/`println!` would panic instead, and a direct `std::io::stdout()` would go
/// unrecorded.
#[test]
fn the_binary_writes_standard_output_only_through_its_guard() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.file_name().is_some_and(|n| n == "stdout_guard.rs") {
                continue;
            }
            let code = std::fs::read_to_string(&path).unwrap();
            for (n, line) in code.lines().enumerate() {
                let l = line.trim_start();
                if l.starts_with("//") {
                    continue;
                }
                let bad = ["println!(", "print!(", "std::io::stdout()", "io::stdout()"]
                    .iter()
                    .any(|p| {
                        l.match_indices(p).any(|(at, _)| {
                            // eprintln!/eprint! and is_terminal checks are fine.
                            let before = l[..at].chars().last();
                            !matches!(before, Some(c) if c.is_alphanumeric() || c == '_')
                                && !l[at..].starts_with("std::io::stdout().is_terminal")
                                && !l[at..].starts_with("io::stdout().is_terminal")
                        })
                    });
                if bad {
                    offenders.push(format!("{}:{}: {l}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "write through crate::stdout_guard instead:\n{}",
        offenders.join("\n")
    );
}
