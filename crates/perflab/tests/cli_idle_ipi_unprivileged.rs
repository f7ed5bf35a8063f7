//! End-to-end: `run idle-ipi --quick` without root measures only `all` (poll-only's knob
//! needs root). It used to end "complete" with exit 0, so a script could not tell that the
//! study's one comparison never happened; it exits 5 and says so in its last line. As
//! root the command runs as nobody (setpriv), else as the user running the tests.

use crate::common;

use std::process::Command;

use common::{run_id, text, Lab};

#[test]
fn idle_ipi_without_root_exits_5_saying_poll_only_was_not_compared() {
    let _host = crate::common::host_settings();
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        perflab_testkit::skip("2-cpus", "the workload runs on CPUs 0 and 1");
        return;
    }
    let lab = Lab::new();
    let mut cmd = if perflab_testkit::is_root() {
        let Some(setpriv) = perflab_testkit::which("setpriv") else {
            perflab_testkit::skip(
                "setpriv",
                "setpriv is not on PATH to drop root (apt-get install util-linux)",
            );
            return;
        };
        use std::os::unix::fs::PermissionsExt;
        // nobody writes the database and journal in the lab's directory.
        std::fs::set_permissions(lab.dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut c = Command::new(setpriv);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_perflab"))
            .env("HOME", lab.dir.path())
            .env("PERFLAB_DB", lab.db())
            .env("PERFLAB_JOURNAL", lab.journal());
        c
    } else {
        lab.cmd()
    };
    let o = cmd
        .args(["run", "idle-ipi", "--quick", "--reps", "1"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(5), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "run {id}: complete, but not compared as planned: variant poll-only ("
        )) && last.contains("root"),
        "{err}"
    );
    let doc = lab.export(&id);
    assert_eq!(doc["run"]["status"], "complete");
    assert!(doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["variant"] == "all"));
}
