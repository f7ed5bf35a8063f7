//! Command-line conventions (issue 34 items 7 and 9): `last` and `last~N` wherever a run
//! is named; `ls --study/--label/--since/--limit`; `--format json` on `import` and
//! `crosscheck`, checked against the documented schema; `doctor` says it is working
//! while it examines the machine, on a terminal only.

use crate::cli_json_schema::valid;
use crate::common;

use std::process::Command;

use common::{text, two_variant_null_run, Lab};
use serde_json::Value;

fn ls_ids(lab: &Lab, args: &[&str]) -> Vec<i64> {
    let o = lab.run(&[&["ls", "--format", "json"], args].concat());
    assert!(o.status.success(), "{args:?}: {:?}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

/// Three runs: two of `null` (labelled), one of another study.
fn three_runs(lab: &Lab) -> (String, String, String) {
    let a = two_variant_null_run(lab, &["--monitors", "none", "--label", "Kernel 6.1"]);
    let b = two_variant_null_run(lab, &["--monitors", "none", "--label", "kernel 6.2 rc"]);
    std::fs::write(
        lab.dir.path().join("other.toml"),
        "name = \"other\"\nworkload = \"null\"\nrepetitions = 2\n",
    )
    .unwrap();
    let o = lab.run(&["run", "other.toml", "--monitors", "none"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let c = common::run_id(&text(&o).1);
    (a, b, c)
}

#[test]
fn last_names_the_newest_runs_wherever_a_run_is_taken() {
    let lab = Lab::new();
    let (a, b, c) = three_runs(&lab);
    let id = |s: &str| s.parse::<i64>().unwrap();
    let shown = |what: &str| -> i64 {
        let o = lab.run(&["show", what, "--format", "json"]);
        assert!(o.status.success(), "show {what}: {:?}", text(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["run"]["id"].as_i64().unwrap()
    };
    // Before: "invalid digit found in string".
    assert_eq!(shown("last"), id(&c));
    assert_eq!(shown("last~0"), id(&c));
    assert_eq!(shown("last~1"), id(&b));
    assert_eq!(shown("last~2"), id(&a));
    let exported = lab.export("last~1");
    assert_eq!(exported["run"]["id"].as_i64(), Some(id(&b)));
    let o = lab.run(&["compare", "last~2", "last~1", "--format", "json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = lab.run(&["report", "last~1", "--format", "json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    // The same run twice, one of them as `last`, is said to be.
    let o = lab.run(&["report", &c, "last"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("run {c} is named twice (last is run {c})")),
        "{err}"
    );
    let other = lab.dir.path().join("other.db");
    let o = lab.run(&["push", "last~2", "--to", other.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(
        text(&o).0.starts_with(&format!("run {a} -> run 1 in")),
        "{:?}",
        text(&o)
    );
    // Past the oldest, and not a run at all: one line, exit 2, naming what there is.
    for (what, says) in [
        ("last~3", "holds 3 run(s), so the oldest is last~2"),
        (
            "last~x",
            "expected a run number (`perflab ls` lists them), `last` or `last~N`",
        ),
        ("latest", "expected a run number"),
    ] {
        let o = lab.run(&["show", what]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
    }
    let o = Lab::new().run(&["show", "last"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

#[test]
fn ls_filters_by_study_label_and_time_and_limits() {
    let lab = Lab::new();
    let (a, b, c) = three_runs(&lab);
    let ids = |v: &[&String]| -> Vec<i64> { v.iter().map(|s| s.parse().unwrap()).collect() };
    assert_eq!(ls_ids(&lab, &[]), ids(&[&c, &b, &a]));
    assert_eq!(ls_ids(&lab, &["--study", "null"]), ids(&[&b, &a]));
    assert_eq!(ls_ids(&lab, &["--study", "other"]), ids(&[&c]));
    // A label matches when it contains the text, in any case.
    assert_eq!(ls_ids(&lab, &["--label", "KERNEL"]), ids(&[&b, &a]));
    assert_eq!(ls_ids(&lab, &["--label", "6.2"]), ids(&[&b]));
    assert_eq!(ls_ids(&lab, &["--limit", "2"]), ids(&[&c, &b]));
    assert_eq!(
        ls_ids(&lab, &["--study", "null", "--limit", "1"]),
        ids(&[&b])
    );
    assert_eq!(ls_ids(&lab, &["--since", "1h"]), ids(&[&c, &b, &a]));
    assert_eq!(ls_ids(&lab, &["--since", "2000-01-01"]).len(), 3);
    assert!(ls_ids(&lab, &["--since", "2999-01-01 00:00"]).is_empty());
    // None left: said so, with the filters.
    let o = lab.run(&["ls", "--study", "nope", "--since", "7d"]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(
        out.trim_end().ends_with("matching --study nope --since 7d"),
        "{out}"
    );
    for bad in [
        vec!["--since", "yesterday"],
        vec!["--since", "2026-13-01"],
        vec!["--limit", "0"],
        vec!["--limit", "x"],
    ] {
        let o = lab.run(&[&["ls"], &bad[..]].concat());
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{bad:?}: {err}");
    }
}

#[test]
fn import_and_crosscheck_print_json_their_schema_describes() {
    let lab = Lab::new();
    let id = two_variant_null_run(&lab, &["--monitors", "none"]);
    let file = lab.dir.path().join("run.json");
    let o = lab.run(&["export", &id]);
    std::fs::write(&file, &o.stdout).unwrap();
    let doc = import_json(&lab, "perflab-json", &file);
    assert_eq!(doc["run"].to_string(), id);
    assert_eq!(doc["created"], false, "{doc}");
    assert_eq!(doc["there_already"].as_u64(), Some(20), "{doc}");
    let fio = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parsers/tests/data/fio/one_job_randread.json");
    let doc = import_json(&lab, "fio", &fio);
    assert_eq!(doc["created"], true, "{doc}");
    assert_eq!(doc["parser"], "fio", "{doc}");
    assert!(doc["measurements"].as_u64().unwrap() > 0, "{doc}");
    check_crosscheck(&lab)
}

/// `perflab import --parser PARSER FILE --format json`, exit 0, its JSON checked against
/// the schema.
fn import_json(lab: &Lab, parser: &str, file: &std::path::Path) -> serde_json::Value {
    let mut cmd = lab.cmd();
    cmd.args(["import", "--parser", parser])
        .arg(file)
        .args(["--format", "json"]);
    valid("import", cmd, 0)
}

fn check_crosscheck(lab: &Lab) {
    let mut cmd = lab.cmd();
    cmd.args([
        "crosscheck",
        "verdicts",
        "--families",
        "20",
        "--format",
        "json",
    ]);
    let doc = valid("crosscheck", cmd, 0);
    let checks = doc["checks"].as_array().unwrap();
    assert!(!checks.is_empty(), "{doc}");
    assert!(
        checks.iter().all(|c| c["tolerance"]["kind"] == "rate"),
        "{doc}"
    );
    assert_eq!(doc["within"], true, "{doc}");
    // The tables still come, on stderr.
    let mut cmd = lab.cmd();
    let o = cmd
        .args([
            "crosscheck",
            "verdicts",
            "--families",
            "20",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(err.contains("false better/worse"), "{err}");
}

/// On a terminal (a pty from `script`), `doctor` shows a line while it works and clears
/// it; in a pipe it writes nothing but the findings.
#[test]
fn doctor_says_it_is_working_on_a_terminal_only() {
    if !perflab_testkit::have_tool("script", "bsdutils") {
        return;
    }
    let lab = Lab::new();
    let exe = env!("CARGO_BIN_EXE_perflab");
    // No KVM probe (its seconds are not the point): the line still shows.
    let o = Command::new("script")
        .args(["-qec", &format!("{exe} doctor"), "/dev/null"])
        .env("PERFLAB_GUEST_ACCEL", "tcg")
        .env("PERFLAB_DB", lab.db())
        .env("PERFLAB_JOURNAL", lab.journal())
        .output()
        .expect("script");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("checking this machine"), "{out}");
    // Cleared before the findings: the line is erased (indicatif's clear-line).
    let at = out.find("checking this machine").unwrap();
    assert!(out[at..].contains("\u{1b}[2K"), "{out:?}");
    let o = lab
        .cmd()
        .env("PERFLAB_GUEST_ACCEL", "tcg")
        .arg("doctor")
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        !err.contains("checking") && !out.contains("checking this machine"),
        "{err}"
    );
}

/// The longest line of `text` in characters, escape sequences and carriage returns (a
/// pty's line ends, a spinner's redraws) aside.
fn widest(text: &str) -> usize {
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, then one final letter.
            if chars.peek() == Some(&'[') {
                chars.next();
                for f in chars.by_ref() {
                    if f.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        plain.push(if c == '\r' { '\n' } else { c });
    }
    plain.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Text fits `$COLUMNS` on a terminal (issue 34 item 5: `doctor` printed lines of 864
/// columns, `list` 659, `report` 702 there), wide tables split as a mail's are; in a
/// pipe every line stays whole.
#[test]
fn text_fits_the_terminal_and_stays_whole_in_a_pipe() {
    if !perflab_testkit::have_tool("script", "bsdutils") {
        return;
    }
    let lab = Lab::new();
    let id = two_variant_null_run(&lab, &["--monitors", "none"]);
    let root = common::fixtures().join("kvm-2vcpu");
    let exe = env!("CARGO_BIN_EXE_perflab");
    let commands = [
        "list".to_string(),
        format!("--sysroot {} doctor", root.display()),
        format!("report {id}"),
        format!("show {id}"),
        format!("compare {id}"),
        "ls".to_string(),
    ];
    for (columns, args) in [(80, &commands), (60, &commands)] {
        for c in args.iter() {
            let o = Command::new("script")
                .args(["-qec", &format!("{exe} {c} 2>/dev/null"), "/dev/null"])
                .env("COLUMNS", columns.to_string())
                .env("PERFLAB_DB", lab.db())
                .env("PERFLAB_JOURNAL", lab.journal())
                .output()
                .expect("script");
            let (out, err) = text(&o);
            assert!(o.status.success(), "{c}: {out}\n{err}");
            assert!(out.lines().count() >= 2, "{c}: {out}");
            assert!(widest(&out) <= columns, "{c} at {columns} columns:\n{out}");
        }
    }
    // In a pipe: full width (list's parameter lines are hundreds of columns).
    let o = lab.run(&["list"]);
    assert!(widest(&text(&o).0) > 200, "{}", text(&o).0);
    let o = lab.run(&["--sysroot", root.to_str().unwrap(), "doctor"]);
    assert!(widest(&text(&o).0) > 100, "{}", text(&o).0);
}

/// A fleet run is named as a run is: `last` is the newest `fleet ls` lists.
#[test]
fn last_names_the_newest_fleet_run() {
    let lab = Lab::new();
    let ssh = crate::cli_stdout_full::no_ssh(lab.dir.path());
    let fleet = |args: &[&str]| {
        lab.cmd()
            .env("XDG_STATE_HOME", lab.dir.path().join("state"))
            .env("PERFLAB_SSH", &ssh)
            .args(args)
            .output()
            .unwrap()
    };
    let o = fleet(&["fleet", "report", "last"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("last: no fleet runs in"), "{err}");
    let o = fleet(&[
        "fleet",
        "run",
        "quick",
        "--hosts",
        "h1",
        "--reconnect-for",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(1), "no host reached: {:?}", text(&o));
    let ls: Value = serde_json::from_slice(&fleet(&["fleet", "ls", "--format", "json"]).stdout)
        .expect("fleet ls JSON");
    let id = ls["fleets"][0]["id"].as_str().unwrap().to_string();
    // No host completed: the refusal names the fleet `last` resolved to.
    let o = fleet(&["fleet", "report", "last"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("fleet {id}: no host has completed yet")),
        "{err}"
    );
    let o = fleet(&["fleet", "report", "last~1"]);
    let (_, err) = text(&o);
    assert!(
        err.contains("holds 1 fleet run(s), so the oldest is last~0"),
        "{err}"
    );
}
