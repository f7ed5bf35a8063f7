//! Fleet runs over real ssh: three hosts, each a network namespace running its own sshd
//! (tests/common/ssh_hosts.rs), the study `quick` shortened, results streamed into one
//! store. Needs root, iproute2 and openssh-server; skipped with the reason otherwise.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ssh_hosts::SshHosts;
use common::{text, Lab};
use serde_json::Value;

/// `perflab` for the fleet side: its own journal and fleet records, and its store: a
/// PostgreSQL database of its own where the tests can have one (a throwaway cluster, or
/// PERFLAB_TEST_PG), else the lab's SQLite file.
fn fleet_cmd(lab: &Lab) -> Command {
    let mut c = lab.cmd();
    c.env("XDG_STATE_HOME", lab.dir.path().join("state"));
    if let Some(url) = PG_URL.with(|u| u.borrow().clone()) {
        c.env("PERFLAB_DB", url);
    }
    c
}

thread_local! {
    /// The fleet store of the test running on this thread, when it is PostgreSQL.
    static PG_URL: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Makes this test's fleet store a fresh PostgreSQL database (kept until the returned
/// guard drops); where there is none, says so and stays on SQLite.
fn use_postgres() -> Option<perflab_testkit::PgDatabase> {
    let db = perflab_testkit::pg_database()?;
    PG_URL.with(|u| *u.borrow_mut() = Some(db.url.clone()));
    Some(db)
}

/// `perflab export RUN` of the fleet's store.
fn export(lab: &Lab, id: &str) -> Value {
    let o = fleet_cmd(lab).args(["export", id]).output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    serde_json::from_slice(&o.stdout).expect("export prints JSON")
}

/// Every measurement of every run in the store, checked: each run's measurements are
/// exactly its plan (none missing, none twice), all ok. Returns the runs' labels.
fn runs_complete_and_whole(lab: &Lab) -> BTreeSet<String> {
    let o = fleet_cmd(lab)
        .args(["ls", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    let runs: Value = serde_json::from_slice(&o.stdout).expect("ls --format json");
    let mut labels = BTreeSet::new();
    for r in runs["runs"].as_array().expect("a list of runs") {
        let id = r["id"].to_string();
        let doc = export(lab, &id);
        let ms = doc["measurements"].as_array().unwrap();
        let seqs: BTreeSet<u64> = ms.iter().map(|m| m["seq"].as_u64().unwrap()).collect();
        let planned = doc["run"]["planned"].as_u64().unwrap();
        assert_eq!(seqs.len(), ms.len(), "run {id}: a measurement stored twice");
        assert_eq!(ms.len() as u64, planned, "run {id}: measurements missing");
        for m in ms {
            assert_eq!(
                m["status"]["status"], "ok",
                "run {id}: measurement {} failed: {}",
                m["seq"], m["status"]
            );
        }
        assert_eq!(doc["run"]["status"], "complete", "run {id}");
        labels.insert(doc["run"]["label"].as_str().unwrap_or("").to_string());
    }
    labels
}

/// `perflab fleet run quick` on the three hosts; the caller adds options and runs it.
fn quick_on_three(lab: &Lab, ssh_config: &Path) -> Command {
    let mut c = fleet_cmd(lab);
    c.args([
        "fleet",
        "run",
        "quick",
        "--hosts",
        "h1,h2,h3",
        "--ssh-config",
    ])
    .arg(ssh_config);
    c
}

/// The fleet id `fleet run` printed first on standard error (`fleet 7f3a2c1d: ...`).
fn fleet_id(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("fleet ")?.split(':').next())
        .expect("the fleet id")
        .to_string()
}

fn names(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Waits until no process but sshd is left in any host's namespace: the detached runs
/// and the agents have ended.
fn nothing_left_running(hosts: &SshHosts) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left: Vec<String> = hosts.names.iter().flat_map(|n| hosts.others(n)).collect();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "left running on the hosts: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn fleet_run_quick_on_three_hosts_compares_them_in_one_report() {
    let Some(hosts) = SshHosts::start(3) else {
        return;
    };
    let lab = Lab::new();
    let _pg = use_postgres();
    let cfg = hosts.ssh_config();
    let o = quick_on_three(&lab, &cfg)
        // The hosts' perflab gets no environment over ssh: the share above which a
        // measurement is disturbed (100: none, as for every test's perflab) is a flag.
        .args([
            "--",
            "--reps",
            "2",
            "-p",
            "duration=0.2s",
            "--disturbed-above",
            "100",
        ])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    for h in ["h1", "h2", "h3"] {
        assert!(
            err.contains(&format!("[{h}] copied this build to")),
            "{err}"
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with(h) && l.contains("complete")),
            "{out}"
        );
        // The copy sits in the host's own cache, named by this build's content.
        let cache = hosts.home(h).join(".cache/perflab");
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1, "{cache:?}");
    }
    // One report comparing the three hosts, the setups' differences (or their match)
    // before the numbers.
    let report = out.find("perflab report:").expect("a report");
    let env = out.find("Environment").expect("the setups");
    let numbers = out.find("round_trips_per_s").expect("the comparison");
    assert!(report < env && env < numbers, "{out}");
    assert!(out.contains("\"h2\"") && out.contains("\"h3\"") && out.contains("\"h1\""));
    assert_eq!(runs_complete_and_whole(&lab), names(&["h1", "h2", "h3"]));
    nothing_left_running(&hosts);

    // The fleet record names the runs; `fleet report` prints the same comparison again.
    let id = fleet_id(&err);
    let o = fleet_cmd(&lab)
        .args(["fleet", "report", &id, "--format", "markdown"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("h3"));
    let o = fleet_cmd(&lab).args(["fleet", "ls"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{id}  ")));
    // The results went to the PostgreSQL store where there is one.
    let record: Value = serde_json::from_slice(
        &std::fs::read(
            lab.dir
                .path()
                .join(format!("state/perflab/fleets/{id}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    let db = record["db"].as_str().unwrap();
    assert_eq!(db.starts_with("postgres"), _pg.is_some(), "{db}");
    if _pg.is_some() {
        assert!(!lab.db().exists(), "nothing went to the SQLite default");
    }

    // A second run finds the cached copy instead of copying again.
    let o = fleet_cmd(&lab)
        .args([
            "fleet",
            "doctor",
            "--hosts",
            "h1,h2,h3,gone=10.232.254.2",
            "--ssh-config",
        ])
        .arg(&cfg)
        .args(["--connect-timeout", "2s"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "an unreachable host is exit 1: {out}\n{err}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("gone: not asked: ssh:")),
        "{out}"
    );
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("check"))
        .expect(&out);
    assert!(
        header.contains("h1") && header.contains("h2") && header.contains("h3"),
        "{out}"
    );
    assert!(out.contains("privileges"), "{out}");
}

/// The fleet record's view of a host: (ok measurements received, status).
fn host_progress(state_dir: &Path, host: &str) -> Option<(u64, String)> {
    let dir = state_dir.join("perflab/fleets");
    for e in std::fs::read_dir(dir).ok()? {
        let path = e.ok()?.path();
        if path.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        let v: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
        for h in v["hosts"].as_array()? {
            if h["host"]["name"] == host {
                return Some((h["received"][0].as_u64()?, h["status"].as_str()?.into()));
            }
        }
    }
    None
}

#[test]
fn a_host_whose_sshd_dies_mid_run_is_resumed_with_nothing_lost_or_doubled() {
    let Some(hosts) = SshHosts::start(3) else {
        return;
    };
    let lab = Lab::new();
    let _pg = use_postgres();
    let cfg = hosts.ssh_config();
    let state = lab.dir.path().join("state");
    let child = quick_on_three(&lab, &cfg)
        .args([
            "--reconnect-for",
            "2s",
            "--",
            "--reps",
            "4",
            "-p",
            "duration=0.3s",
            "--disturbed-above",
            "100",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Mid-run: once h3 has streamed its first measurement, its sshd dies, sessions and all.
    let deadline = Instant::now() + Duration::from_secs(120);
    while host_progress(&state, "h3").is_none_or(|(ok, _)| ok == 0) {
        assert!(Instant::now() < deadline, "h3 never streamed a measurement");
        std::thread::sleep(Duration::from_millis(100));
    }
    hosts.kill_sshd("h3");
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a host did not complete: {out}\n{err}"
    );
    assert!(err.contains("[h3] connection lost"), "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("h3") && l.contains("unreachable")),
        "{out}"
    );
    for h in ["h1", "h2"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(h) && l.contains("complete")),
            "{out}"
        );
    }
    let id = fleet_id(&err);
    assert!(out.contains(&format!("perflab fleet resume {id}")), "{out}");

    // The host comes back; resume collects what its run measured meanwhile, and the rest.
    hosts.start_sshd("h3");
    let o = fleet_cmd(&lab)
        .args(["fleet", "resume", &id, "--ssh-config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(err.contains("1 of 3 host(s) to go on with"), "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("h3") && l.contains("complete")),
        "{out}"
    );
    assert_eq!(runs_complete_and_whole(&lab), names(&["h1", "h2", "h3"]));

    // The fleet's copy of h3's run is the host's own, measurement for measurement.
    let dbs: Vec<_> = std::fs::read_dir(hosts.home("h3").join(".local/share/perflab/fleet"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("db"))
        .collect();
    assert_eq!(dbs.len(), 1, "{dbs:?}");
    let host_doc: Value = {
        let o = Command::new(env!("CARGO_BIN_EXE_perflab"))
            .arg("--db")
            .arg(&dbs[0])
            .args(["export", "1"])
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let uid = host_doc["run"]["uid"].as_str().unwrap();
    let o = fleet_cmd(&lab)
        .args(["ls", "--format", "json"])
        .output()
        .unwrap();
    let runs: Value = serde_json::from_slice(&o.stdout).unwrap();
    let local = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uid"] == uid)
        .expect("h3's run in the fleet's store");
    let here = export(&lab, &local["id"].to_string());
    let seqs = |d: &Value| -> Vec<(u64, String)> {
        d["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["seq"].as_u64().unwrap(),
                    m["output"]["metrics"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(seqs(&here), seqs(&host_doc));
    nothing_left_running(&hosts);
}

#[test]
fn bad_fleet_input_is_one_line_exit_2_before_any_host_is_touched() {
    let lab = Lab::new();
    let cases: &[&[&str]] = &[
        // Run options the study refuses here are refused before ssh is run.
        &[
            "fleet", "run", "quick", "--hosts", "h1", "--", "-p", "nosuch=1",
        ],
        &["fleet", "run", "nosuchstudy", "--hosts", "h1"],
        &["fleet", "run", "quick", "--hosts=-oProxyCommand=x"],
        &["fleet", "run", "quick", "--hosts", "h1,h1"],
        &[
            "fleet",
            "run",
            "quick",
            "--hosts",
            "h1",
            "--reconnect-for",
            "soon",
        ],
        &[
            "fleet",
            "run",
            "quick",
            "--hosts",
            "h1",
            "--ssh-config",
            "/nonexistent/cfg",
        ],
        &["fleet", "resume", "0bad"],
        &["fleet", "resume", "../x"],
        &["fleet", "report", "0bad"],
        &["fleet", "agent", "--uid", "xyz", "--", "quick"],
    ];
    for args in cases {
        // PERFLAB_SSH points at a program that records being run: it must never be.
        let marker = lab.dir.path().join("ssh-was-run");
        let fake_ssh = lab.dir.path().join("fake-ssh");
        std::fs::write(
            &fake_ssh,
            format!("#!/bin/sh\ntouch {}\nexit 255\n", marker.display()),
        )
        .unwrap();
        Command::new("chmod")
            .arg("755")
            .arg(&fake_ssh)
            .status()
            .unwrap();
        let o = fleet_cmd(&lab)
            .env("PERFLAB_SSH", &fake_ssh)
            .args(*args)
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}\n{err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(!marker.exists(), "{args:?}: ssh was run");
        assert!(!lab.db().exists(), "{args:?}: the database was created");
        assert!(
            !lab.dir.path().join("state/perflab/fleets").exists(),
            "{args:?}: a fleet record was written"
        );
    }
}

#[test]
fn an_unreachable_host_is_said_and_the_fleet_exits_1() {
    let lab = Lab::new();
    let fake_ssh = lab.dir.path().join("fake-ssh");
    std::fs::write(
        &fake_ssh,
        "#!/bin/sh\necho 'ssh: connect to host h1 port 22: Connection refused' >&2\nexit 255\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&fake_ssh)
        .status()
        .unwrap();
    let o = fleet_cmd(&lab)
        .env("PERFLAB_SSH", &fake_ssh)
        .args([
            "fleet",
            "run",
            "quick",
            "--hosts",
            "h1",
            "--reconnect-for",
            "1s",
        ])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.lines().any(|l| l.starts_with("h1")
            && l.contains("unreachable")
            && l.contains("ssh: connect to host h1 port 22: Connection refused")),
        "{out}"
    );
    assert!(
        err.contains("[h1] connection lost (ssh: connect to host h1"),
        "{err}"
    );
    assert!(out.contains("perflab fleet resume"), "{out}");
}
