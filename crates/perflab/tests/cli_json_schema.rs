//! Every command that prints data, run with `--format json` on a database of `null` runs,
//! checked against the documented schema (docs/schema/perflab.json): the document a
//! script reads is the one the documentation describes, envelope included, and its
//! `format` names the definition it is checked against.

use crate::common;
use crate::json_schema;

use std::process::Command;

use common::{fixtures, text, two_variant_null_run, Lab};
use serde_json::Value;

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/perflab.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the schema file"))
        .expect("the schema is JSON")
}

/// `cmd`'s standard output, one JSON document valid against `$defs/<def>` whose `format`
/// is `perflab-<def>`; its exit code must be `code`.
pub(crate) fn valid(def: &str, mut cmd: Command, code: i32) -> Value {
    let o = cmd.output().expect("run perflab");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(code), "{cmd:?}\n{out}\n{err}");
    let doc: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{cmd:?}: not one JSON document ({e}):\n{out}"));
    let root = schema();
    assert!(root["$defs"].get(def).is_some(), "no $defs/{def}");
    assert_eq!(doc["format"], format!("perflab-{def}"), "{cmd:?}");
    let errors = json_schema::validate(
        &root,
        &serde_json::json!({ "$ref": format!("#/$defs/{def}") }),
        &doc,
    );
    assert!(
        errors.is_empty(),
        "{cmd:?} against $defs/{def}:\n{}",
        errors.join("\n")
    );
    doc
}

fn perflab(lab: &Lab, args: &[&str]) -> Command {
    let mut c = lab.cmd();
    c.env("XDG_STATE_HOME", lab.dir.path().join("state"))
        .args(args);
    c
}

/// A fake ssh that can reach no host, for the fleet commands.
fn no_ssh(lab: &Lab) -> std::path::PathBuf {
    let path = lab.dir.path().join("fake-ssh");
    std::fs::write(
        &path,
        "#!/bin/sh\necho 'ssh: connect to host h1 port 22: Connection refused' >&2\nexit 255\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&path)
        .status()
        .unwrap();
    path
}

#[test]
fn every_command_prints_json_its_schema_describes() {
    let lab = Lab::new();
    let null = [
        "run",
        "--workload",
        "null",
        "-p",
        "sleep=0.001,0.002",
        "--reps",
        "3",
    ];
    let two = [
        &null[..],
        &["--variant", "a:", "--variant", "b:", "--format", "json"],
    ]
    .concat();
    let run = valid("run", perflab(&lab, &two), 0);
    assert_eq!(
        run["comparisons"].as_array().map(Vec::len),
        Some(1),
        "{run}"
    );
    let id = run["run"].to_string();
    let one = valid(
        "run",
        perflab(&lab, &[&null[..], &["--format", "json"]].concat()),
        0,
    );
    assert!(
        one["summary"].is_object(),
        "a run of one variant: its summary: {one}"
    );
    let dry = [&two[..], &["--dry-run"]].concat();
    valid("run-dry-run", perflab(&lab, &dry), 0);

    let shown = valid("show", perflab(&lab, &["show", &id, "--format", "json"]), 0);
    assert!(shown["summary"].is_object(), "{shown}");
    let picked = valid(
        "show",
        perflab(
            &lab,
            &["show", &id, "--section", "summary", "--format", "json"],
        ),
        0,
    );
    // `--section` picks in JSON as in text; the envelope, `run` and `adaptive` stay.
    assert_eq!(
        keys(&picked),
        keys(
            &serde_json::json!({"format": 0, "format_version": 0, "command": 0, "run": 0,
                                 "summary": 0, "adaptive": 0})
        ),
        "{picked}"
    );
    let ls = valid("ls", perflab(&lab, &["ls", "--format", "json"]), 0);
    assert_eq!(ls["runs"].as_array().map(Vec::len), Some(2));
    let series = valid(
        "history",
        perflab(&lab, &["history", "--format", "json"]),
        0,
    );
    assert!(
        series["series"].as_array().is_some_and(|s| !s.is_empty()),
        "{series}"
    );
    let history = valid(
        "history",
        perflab(&lab, &["history", "--study", "null", "--format", "json"]),
        0,
    );
    assert!(
        history["history"].is_array() && history["events"].is_array(),
        "{history}"
    );
    valid("list", perflab(&lab, &["list", "--format", "json"]), 0);
    let compared = valid(
        "compare",
        perflab(&lab, &["compare", &id, "--format", "json"]),
        0,
    );
    assert!(compared["comparison"]["rows"].is_array(), "{compared}");
    let other = one["run"].to_string();
    valid(
        "compare",
        perflab(&lab, &["compare", &id, &other, "--format", "json"]),
        0,
    );
    let report = valid(
        "report",
        perflab(&lab, &["report", &id, "--format", "json"]),
        0,
    );
    // Keyed by section id, every part (how-to-read is text only).
    let parts = perflab_report::section::REPORT.iter();
    for part in parts.filter(|p| **p != "how-to-read") {
        assert!(report.get(part).is_some(), "{part}: {report}");
    }
    let picked = valid(
        "report",
        perflab(
            &lab,
            &[
                "report",
                &id,
                &other,
                "--section",
                "comparison,runs,environment,quality",
                "--format",
                "json",
            ],
        ),
        0,
    );
    assert!(picked.get("spans").is_none(), "{picked}");
    valid(
        "export",
        perflab(&lab, &["export", &id, "--format", "json"]),
        0,
    );
    let root = fixtures().join("kvm-2vcpu");
    let root = root.to_str().unwrap();
    valid(
        "doctor",
        perflab(&lab, &["--sysroot", root, "doctor", "--format", "json"]),
        0,
    );

    // The fleet commands, with no host reachable: the documents still say so in full.
    let ssh = no_ssh(&lab);
    let mut fleet = perflab(
        &lab,
        &["fleet", "doctor", "--hosts", "h1", "--format", "json"],
    );
    fleet.env("PERFLAB_SSH", &ssh);
    valid("fleet-doctor", fleet, 1);
    let mut fleet = perflab(
        &lab,
        &[
            "fleet",
            "run",
            "quick",
            "--hosts",
            "h1",
            "--reconnect-for",
            "1s",
            "--format",
            "json",
        ],
    );
    fleet.env("PERFLAB_SSH", &ssh);
    let fleet_run = valid("fleet-run", fleet, 1);
    assert!(
        fleet_run["report"].is_null(),
        "no host completed: {fleet_run}"
    );
    let fleets = valid(
        "fleet-ls",
        perflab(&lab, &["fleet", "ls", "--format", "json"]),
        0,
    );
    assert_eq!(fleets["fleets"].as_array().map(Vec::len), Some(1));

    // The host marked complete with run `id` as its own: `fleet report` prints the report,
    // `fleet resume` (nothing left to do) the hosts and that report.
    let fleet_id = fleets["fleets"][0]["id"].as_str().unwrap().to_string();
    complete_host(&lab, &fleet_id, &id);
    let mut fleet = perflab(&lab, &["fleet", "report", &fleet_id, "--format", "json"]);
    fleet.env("PERFLAB_SSH", &ssh);
    let fleet_report = valid("report", fleet, 0);
    assert_eq!(fleet_report["command"], "fleet report");
    let mut fleet = perflab(&lab, &["fleet", "resume", &fleet_id, "--format", "json"]);
    fleet.env("PERFLAB_SSH", &ssh);
    let resumed = valid("fleet-run", fleet, 0);
    assert!(resumed["report"]["comparison"].is_array(), "{resumed}");
}

/// The top-level keys of `doc`.
fn keys(doc: &Value) -> std::collections::BTreeSet<String> {
    doc.as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect()
}

/// Marks the one host of fleet `fleet` complete, its run `run` of the lab's store.
fn complete_host(lab: &Lab, fleet: &str, run: &str) {
    let path = lab
        .dir
        .path()
        .join(format!("state/perflab/fleets/{fleet}.json"));
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    state["hosts"][0]["status"] = "complete".into();
    state["hosts"][0]["local_run"] = run.parse::<i64>().unwrap().into();
    std::fs::write(&path, state.to_string()).unwrap();
}

/// `--json` is `--format json` under its old name, so scripts written for it still run;
/// both at once is bad input, said in one line (exit 2).
#[test]
fn json_is_a_hidden_alias_of_format_json() {
    let lab = Lab::new();
    let id = two_variant_null_run(&lab, &[]);
    for args in [vec!["ls"], vec!["show", &id], vec!["list"]] {
        let new = lab.run(&[&args[..], &["--format", "json"]].concat());
        let old = lab.run(&[&args[..], &["--json"]].concat());
        assert!(new.status.success() && old.status.success(), "{args:?}");
        assert_eq!(text(&new).0, text(&old).0, "{args:?}");
    }
    let pair = lab.run(&["show", &id, "--pair", "0,1", "--format", "json"]);
    assert_eq!(pair.status.code(), Some(2), "text only: {:?}", text(&pair));
    let both = lab.run(&["ls", "--json", "--format", "text"]);
    let (_, err) = text(&both);
    assert_eq!(both.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let help = text(&lab.run(&["ls", "--help"])).0;
    assert!(
        help.contains("--format") && !help.contains("--json"),
        "{help}"
    );
}
