//! The reading commands on a results database the user cannot write (a read-only copy,
//! a read-only mount): `ls`, `show`, `report`, `export` and `compare` work and change
//! nothing; an older schema there is refused with one line saying to copy it.

use crate::common;

use common::{snapshot, text, Lab};
use perflab_testkit::ReadOnlyView;

#[test]
fn reading_commands_work_on_a_read_only_database_and_change_nothing() {
    let lab = Lab::new();
    let ro = lab.dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("results.db");
    let on = |args: &[&str]| {
        lab.cmd()
            .env("PERFLAB_DB", &db)
            .args(args)
            .output()
            .unwrap()
    };
    let mut ids = Vec::new();
    for _ in 0..2 {
        let o = on(&[
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
        ]);
        let (_, err) = text(&o);
        assert!(o.status.success(), "{err}");
        ids.push(common::run_id(&err));
    }
    // What a writable open shows, to compare the read-only output with.
    let wanted_ls = text(&on(&["ls"])).0;
    let before = snapshot(&ro);
    let Some(view) = ReadOnlyView::of(&ro) else {
        return;
    };
    let ro_cmd = |args: &[&str]| {
        view.command(env!("CARGO_BIN_EXE_perflab"))
            .env("PERFLAB_DB", &db)
            .env("PERFLAB_JOURNAL", lab.journal())
            .current_dir(lab.dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let (a, b) = (ids[0].as_str(), ids[1].as_str());
    for args in [
        vec!["ls"],
        vec!["show", a],
        vec!["report", a],
        vec!["export", b],
        vec!["export", b, "--format", "csv"],
        vec!["compare", a, b],
    ] {
        let o = ro_cmd(&args);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(!out.trim().is_empty(), "{args:?}");
        if args == ["ls"] {
            assert_eq!(out, wanted_ls);
        }
    }
    // Writing is refused, saying why.
    let o = ro_cmd(&["run", "--workload", "null", "--reps", "1"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is read-only"), "{err}");
    drop(view);
    assert_eq!(
        snapshot(&ro),
        before,
        "a read-only command changed the directory"
    );
}

#[test]
fn an_older_read_only_database_is_one_line_saying_to_copy_it() {
    let lab = Lab::new();
    let ro = lab.dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let db = ro.join("results.db");
    let o = lab
        .cmd()
        .env("PERFLAB_DB", &db)
        .args(["run", "--workload", "null", "--reps", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "DROP INDEX runs_uid; ALTER TABLE runs DROP COLUMN uid; \
         UPDATE meta SET value = '4' WHERE key = 'schema_version';",
    )
    .unwrap();
    drop(c);
    let before = snapshot(&ro);
    let Some(view) = ReadOnlyView::of(&ro) else {
        return;
    };
    let o = view
        .command(env!("CARGO_BIN_EXE_perflab"))
        .env("PERFLAB_DB", &db)
        .env("PERFLAB_JOURNAL", lab.journal())
        .args(["ls"])
        .output()
        .unwrap();
    drop(view);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("read-only") && err.contains("copy it somewhere writable"),
        "{err}"
    );
    assert_eq!(snapshot(&ro), before);
}
