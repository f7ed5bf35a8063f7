//! End-to-end on a PostgreSQL store: `run`, `ls`, `show`, `report`, `export` and a resume
//! through the real binary with `PERFLAB_DB` or `--db` set to a `postgres://` URL, and an
//! unreachable server refused with one line that does not show the password.

use crate::common;

use std::io::{BufRead, BufReader};

use common::{run_id, text, Lab};

#[test]
fn runs_are_stored_listed_shown_reported_and_resumed_on_postgres() {
    let Some(pg) = perflab_testkit::pg_database() else {
        return;
    };
    let lab = Lab::new();
    let url = pg.url.as_str();
    let o = lab.run_on(
        url,
        &[
            "run",
            "--workload",
            "null",
            "-p",
            "value=10,20",
            "--reps",
            "3",
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    // Nothing went to the SQLite default.
    assert!(!lab.db().exists());

    // --db takes the URL too.
    let o = lab.run(&["--db", url, "ls"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("null") && out.contains("complete") && out.contains("8/8"),
        "{out}"
    );

    let o = lab.run_on(url, &["show", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("value=10") && out.contains("value=20"),
        "{out}"
    );

    let o = lab.run_on(url, &["report", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!out.trim().is_empty());

    let o = lab.run_on(url, &["export", &id]);
    assert!(o.status.success(), "{:?}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["measurements"].as_array().unwrap().len(), 8);
    assert_eq!(doc["run"]["uid"].as_str().unwrap().len(), 32);

    // --json names the database by its URL (the test server's has no password).
    let o = lab.run_on(
        url,
        &[
            "run",
            "--workload",
            "null",
            "--reps",
            "1",
            "--telemetry-reps",
            "0",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["database"], url);

    // Interrupted once something is stored, then resumed: the claim and the pending list
    // come from the server.
    let mut child = lab
        .cmd()
        .env("PERFLAB_DB", url)
        .args([
            "run",
            "--workload",
            "null",
            "-p",
            "sleep=100ms",
            "--reps",
            "30",
            "--telemetry-reps",
            "0",
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find(|l| l.contains("measurements to go"))
        .expect("the run says how many measurements it has to go");
    let id = run_id(&line);
    let stored = |lab: &Lab| -> usize {
        let o = lab.run_on(url, &["export", &id]);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["measurements"].as_array().unwrap().len()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while stored(&lab) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing stored in a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // While it measures, a second resume is refused by the claim.
    let o = lab.run_on(url, &["run", "--resume", &id]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is being measured by another perflab process"),
        "{err}"
    );
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: String = lines.map(|l| l.unwrap() + "\n").collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{rest}");
    let before = stored(&lab);
    assert!(before > 0 && before < 30, "measured {before}");

    let o = lab.run_on(url, &["run", "--resume", &id]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let o = lab.run_on(url, &["export", &id]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 30);
    assert_eq!(doc["run"]["status"], "complete");
}

#[test]
fn an_unreachable_server_is_one_line_exit_2_without_the_password() {
    let lab = Lab::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://alice:hunter2-secret@127.0.0.1:{port}/results");
    for args in [
        vec!["ls"],
        vec!["show", "1"],
        vec!["run", "--workload", "null", "--reps", "1"],
    ] {
        for via_flag in [false, true] {
            let o = if via_flag {
                let mut a = vec!["--db", url.as_str()];
                a.extend(&args);
                lab.run(&a)
            } else {
                lab.run_on(&url, &args)
            };
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
            // One line says it; `run` may say what it planned before it connects.
            let said: Vec<&str> = err.lines().filter(|l| l.starts_with("perflab:")).collect();
            assert_eq!(said.len(), 1, "{args:?}: {err}");
            assert_eq!(err.trim().lines().last(), Some(said[0]), "{args:?}: {err}");
            assert!(
                !err.contains("hunter2") && !out.contains("hunter2"),
                "{err}"
            );
            assert!(err.contains("cannot connect"), "{err}");
            assert!(
                err.contains(&format!("postgres://alice:***@127.0.0.1:{port}/results")),
                "{err}"
            );
        }
    }
    assert!(!lab.db().exists());
}
