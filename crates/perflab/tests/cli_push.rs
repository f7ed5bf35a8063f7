//! `perflab push` and `perflab import --parser perflab-json`: runs copied to another
//! SQLite file or a PostgreSQL store, and exports imported back, come out the same (all
//! but the run's number), and doing it again adds nothing.

use crate::common;

use common::{run_id, text, Lab};

/// `perflab export RUN --format json` of the database `db`, with the run's number taken
/// out: the one thing a copy may change.
fn export(lab: &Lab, db: &str, id: &str) -> serde_json::Value {
    let o = lab.run(&["--db", db, "export", id, "--format", "json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let mut doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["run"]["id"] = serde_json::Value::Null;
    doc
}

/// Two runs in the lab's database: one with failures, one with two variants.
fn two_runs(lab: &Lab) -> Vec<String> {
    let mut ids = Vec::new();
    for args in [
        &[
            "run",
            "--workload",
            "null",
            "-p",
            "fail_every=2",
            "--reps",
            "4",
        ][..],
        &[
            "run",
            "--workload",
            "null",
            "-p",
            "sleep=0.001",
            "--variant",
            "a:",
            "--variant",
            "b:",
            "--reps",
            "3",
            "--label",
            "two variants",
        ][..],
    ] {
        let o = lab.run(args);
        let (_, err) = text(&o);
        assert!(
            o.status.code() == Some(0) || o.status.code() == Some(3),
            "{err}"
        );
        ids.push(run_id(&err));
    }
    ids
}

/// The run numbers `push` printed (`run A -> run B in …`), by source run.
fn pushed(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("run ")?;
            let (from, rest) = rest.split_once(" -> run ")?;
            let (to, _) = rest.split_once(' ')?;
            Some((from.to_string(), to.to_string()))
        })
        .collect()
}

fn push_twice_and_compare(lab: &Lab, ids: &[String], to: &str) {
    let src = lab.db().display().to_string();
    let o = lab.run(&["push", &ids[0], &ids[1], "--to", to]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    let map = pushed(&out);
    assert_eq!(map.len(), 2, "{out}");
    assert!(
        out.lines()
            .all(|l| !l.starts_with("run ") || l.contains("created")),
        "{out}"
    );
    for (from, there) in &map {
        assert_eq!(export(lab, &src, from), export(lab, to, there));
    }

    let o = lab.run(&["push", "--all", "--to", to]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(pushed(&out), map, "{out}");
    for l in out.lines().filter(|l| l.starts_with("run ")) {
        assert!(l.contains("0 new measurements"), "{out}");
    }
    assert!(out.contains("2 runs pushed: 0 new measurements"), "{out}");
    // Still one copy of each run there.
    let o = lab.run(&["--db", to, "ls", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2);
    for (from, there) in &map {
        assert_eq!(export(lab, &src, from), export(lab, to, there));
    }
}

#[test]
fn push_to_another_file_is_idempotent_and_exact() {
    let lab = Lab::new();
    let ids = two_runs(&lab);
    let to = lab.dir.path().join("shared/results.db");
    push_twice_and_compare(&lab, &ids, to.to_str().unwrap());
}

#[test]
fn push_to_postgres_is_idempotent_and_exact() {
    let Some(pg) = perflab_testkit::pg_database() else {
        return;
    };
    let lab = Lab::new();
    let ids = two_runs(&lab);
    push_twice_and_compare(&lab, &ids, &pg.url);
}

#[test]
fn pushing_an_unknown_run_copies_nothing() {
    let lab = Lab::new();
    let ids = two_runs(&lab);
    let to = lab.dir.path().join("other.db");
    let o = lab.run(&["push", &ids[0], "99", "--to", to.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no run 99"), "{err}");
    assert!(!to.exists());
    let o = lab.run(&["push", "--to", to.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

#[test]
fn an_export_imports_back_exactly_once() {
    let lab = Lab::new();
    let ids = two_runs(&lab);
    let other = lab.dir.path().join("imported.db");
    let other = other.to_str().unwrap();
    for id in &ids {
        let file = lab.dir.path().join(format!("run{id}.json"));
        let o = lab.run(&[
            "export",
            id,
            "--format",
            "json",
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
        let (there, err) = lab.import_export_file(other, &file);
        assert!(err.contains("imported from"), "{err}");
        let src = lab.db().display().to_string();
        assert_eq!(export(&lab, &src, id), export(&lab, other, &there));
        // Again: the uid finds the run, nothing is added.
        let (again, err) = lab.import_export_file(other, &file);
        assert_eq!(again, there);
        assert!(
            err.contains("imported before") && err.contains(": 0 new measurement(s)"),
            "{err}"
        );
        assert_eq!(export(&lab, &src, id), export(&lab, other, &there));
    }
    let o = lab.run(&["--db", other, "ls", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2);
}

#[test]
fn an_export_in_another_layout_or_from_standard_input_imports_the_same() {
    // The import reads `export`'s own layout a line at a time and anything else as JSON:
    // here pretty-printed and compact, keys sorted (the measurements before the plan),
    // given on standard input (read more than once, so kept in a file meanwhile).
    let lab = Lab::new();
    let ids = two_runs(&lab);
    let src = lab.db().display().to_string();
    let o = lab.run(&["export", &ids[0], "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let layouts = [
        ("pretty", serde_json::to_string_pretty(&doc).unwrap()),
        ("compact", serde_json::to_string(&doc).unwrap()),
    ];
    for (name, text) in layouts {
        let db = lab.dir.path().join(format!("{name}.db"));
        let db = db.to_str().unwrap();
        let mut child = lab
            .cmd()
            .args(["--db", db, "import", "--parser", "perflab-json", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut stdin, text.as_bytes()).unwrap();
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        let (_, err) = crate::common::text(&o);
        assert!(o.status.success(), "{name}: {err}");
        assert!(err.contains("imported from -"), "{name}: {err}");
        let there = crate::common::run_id(&err);
        assert_eq!(
            export(&lab, &src, &ids[0]),
            export(&lab, db, &there),
            "{name}"
        );
    }
}

#[test]
fn a_bad_export_is_one_line_exit_2_and_changes_nothing() {
    let lab = Lab::new();
    let ids = two_runs(&lab);
    let o = lab.run(&["export", &ids[0], "--format", "json"]);
    let good: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut not_planned = good.clone();
    not_planned["plan"] = serde_json::json!([]);
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("run");
    let mut newer = good.clone();
    newer["format_version"] = serde_json::json!(99);
    let mut other = good.clone();
    other["format"] = serde_json::json!("someone-else");
    let mut reordered = good.clone();
    reordered["telemetry_columns"] =
        serde_json::json!(["key", "source", "label", "cpu", "value", "unit"]);
    let cases = [
        (
            "garbage",
            "{\"run\": [1, 2".to_string(),
            "not a perflab JSON export",
        ),
        ("not planned", not_planned.to_string(), "not in the plan"),
        ("no run", missing.to_string(), "missing field `run`"),
        ("newer", newer.to_string(), "version 99 is newer"),
        (
            "another format",
            other.to_string(),
            "not \"perflab-export\"",
        ),
        (
            "other telemetry columns",
            reordered.to_string(),
            "its telemetry rows list",
        ),
    ];
    let db = lab.dir.path().join("target.db");
    // One run there already, so "unchanged" means its bytes stay the same.
    let o = lab.run(&[
        "--db",
        db.to_str().unwrap(),
        "run",
        "--workload",
        "null",
        "--reps",
        "1",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let before = std::fs::read(&db).unwrap();
    for (what, doc, says) in cases {
        let file = lab.dir.path().join("bad.json");
        std::fs::write(&file, doc).unwrap();
        let o = lab.run(&[
            "--db",
            db.to_str().unwrap(),
            "import",
            "--parser",
            "perflab-json",
            file.to_str().unwrap(),
        ]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert_eq!(std::fs::read(&db).unwrap(), before, "{what}");
        // And through perflab (commits may sit in the -wal file): still the one run.
        let o = lab.run(&["--db", db.to_str().unwrap(), "ls", "--format", "json"]);
        let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{what}");
    }
}
