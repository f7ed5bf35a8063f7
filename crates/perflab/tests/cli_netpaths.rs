//! End-to-end: the netpaths study (seed 001) over the paths perflab builds itself, the kill
//! test (SIGKILL mid-run, then `perflab restore`), and bad input. Building namespaces needs
//! root; those tests say so in their names and are skipped, saying why, without it.

use crate::common;

use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{run_id, text, Lab};

/// The root tests compare the host's network before and after, so they take turns.
static HOST_NETWORK: Mutex<()> = Mutex::new(());

/// Whether `name` is a namespace or link of a perflab process other than `ours`
/// (`perflab-PID-…`, `plPID…`): another perflab on this machine (another test binary, a
/// colleague's run) may build and remove paths meanwhile, which says nothing of this test's.
fn foreign(name: &str, ours: Option<u32>) -> bool {
    let Some(rest) = name
        .strip_prefix("perflab-")
        .or_else(|| name.strip_prefix("pl"))
    else {
        return false;
    };
    let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
    !pid.is_empty() && Some(pid) != ours.map(|p| p.to_string())
}

/// What the host's network looks like: namespace and link names, less those of perflab
/// processes other than `ours`. perflab must leave it as it found it.
fn host_network(ours: Option<u32>) -> (Vec<String>, Vec<String>) {
    let out = |args: &[&str]| {
        let o = Command::new("ip").args(args).output().expect("run ip");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let keep = |names: Vec<String>| {
        let mut names: Vec<String> = names.into_iter().filter(|n| !foreign(n, ours)).collect();
        names.sort();
        names
    };
    let links = out(&["-o", "link"])
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap_or(n).to_string())
        .collect();
    let netns = out(&["netns", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    (keep(netns), keep(links))
}

#[test]
fn netpaths_quick_over_five_paths_leaves_the_host_as_it_was_needs_root() {
    if !perflab_testkit::have_root("creating network namespaces") {
        return;
    }
    if !perflab_testkit::have_tool("ip", "iproute2") {
        return;
    }
    let _turn = HOST_NETWORK.lock().unwrap_or_else(|e| e.into_inner());
    // Before the run, every perflab object is another process's.
    let before = host_network(None);
    let lab = Lab::new();
    let mut args = vec!["run", "netpaths", "--quick"];
    for v in ["loopback", "veth", "bridge", "macvlan", "tap"] {
        args.extend(["--variant", v]);
    }
    let child = lab
        .cmd()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start perflab");
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    // On a loaded machine the tap path under its 3 bulk streams can drop 4 requests in a
    // row (the tap's queue full of the streams' segments): that measurement fails, as it
    // should, and the run exits 3. Any other failure fails the test (below).
    let some_failed = o.status.code() == Some(3);
    assert!(o.status.success() || some_failed, "{out}\n{err}");
    assert_eq!(
        host_network(Some(pid)),
        before,
        "the host's namespaces or links changed"
    );

    // The seed's table: a row per path, with and without load, with the tails.
    assert!(out.contains("p99.9") && out.contains("stddev"), "{out}");
    for path in ["loopback", "veth", "bridge", "macvlan", "tap"] {
        assert!(
            out.lines().any(|l| l.starts_with(path)),
            "no row for {path}:\n{out}"
        );
    }
    assert_eq!(out.matches("3 streams").count(), 5, "{out}");

    let doc = lab.export_named(&run_id(&err));
    let ms = doc["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 5 * 2 * 4, "5 paths x 2 loads x 4 repetitions");
    let mut failed = 0;
    for m in ms {
        if m["status"]["status"] != "ok" {
            let why = m["status"]["error"].as_str().unwrap_or_default();
            assert!(
                some_failed
                    && m["params"]["load_streams"] == 3
                    && m["variant"] == "tap"
                    && why.contains("requests in a row"),
                "{m}"
            );
            failed += 1;
            continue;
        }
        let h = &m["output"]["histograms"][0];
        assert_eq!(h["name"], "rtt");
        // Round trips were timed on every path. How many fit in 0.5 s is a speed (the tap
        // path under load answers a few dozen on an idle machine, fewer on a loaded one),
        // so only that there were some is asserted.
        assert!(h["count"].as_u64().unwrap() > 0, "{h}");
        // Every point carries its NET_RX softirq deltas.
        assert!(
            m["telemetry"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["source"] == "softirqs" && t["key"] == "NET_RX"),
            "{m}"
        );
        if m["params"]["load_streams"] == 3 {
            let load = m["output"]["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["name"] == "load_mib_s")
                .expect("the load's throughput is recorded");
            assert!(load["value"].as_f64().unwrap() > 0.0, "{load}");
        }
    }
    // Exit 3 says some failed; at most the loaded tap point's 4 repetitions may have.
    assert_eq!(some_failed, failed > 0, "{err}");
    assert!(failed <= 4, "{failed} measurements failed\n{err}");
}

#[test]
fn sigkill_mid_run_then_restore_leaves_nothing_needs_root() {
    if !perflab_testkit::have_root("creating network namespaces") {
        return;
    }
    if !perflab_testkit::have_tool("ip", "iproute2") {
        return;
    }
    let _turn = HOST_NETWORK.lock().unwrap_or_else(|e| e.into_inner());
    let before = host_network(None);
    let lab = Lab::new();
    let mut child = lab
        .cmd()
        .args(["run", "netpaths", "--variant", "bridge", "--reps", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perflab");
    let pid = child.id();
    let tag = format!("perflab-{pid}-");
    let ours = || {
        host_network(Some(pid))
            .0
            .iter()
            .any(|n| n.starts_with(&tag))
    };
    let t0 = Instant::now();
    while !ours() {
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "no namespace appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    assert!(ours(), "nothing was left to restore");

    let o = lab.run(&["restore"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        format!("{out}{err}").contains("created network namespace"),
        "{out}{err}"
    );
    assert_eq!(host_network(Some(pid)), before);
}

#[test]
fn an_unknown_path_is_one_line_and_changes_nothing() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "--variant",
        "x:netpath=wormhole",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("wormhole") && err.contains("veth"), "{err}");
    assert!(!lab.db().exists(), "no database for a refused run");
}

#[test]
fn paths_selects_the_studys_paths_plainly() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "netpaths",
        "--paths",
        "loopback,veth,vm-tap-novhost",
        "--dry-run",
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Variants this machine cannot build are listed as unavailable, not dropped silently.
    let mut picked: Vec<String> = doc["spec"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    picked.sort();
    assert_eq!(picked, ["loopback", "veth", "vm-tap-novhost"], "{out}");
    assert!(!lab.db().exists(), "a dry run created the database");

    // A path the study lacks names the ones it has; a study without paths refuses it.
    let o = lab.run(&[
        "run",
        "netpaths",
        "--paths",
        "loopback,wormhole",
        "--dry-run",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("\"wormhole\"") && err.contains("vm-tap-novhost"),
        "{err}"
    );
    let o = lab.run(&["run", "quick", "--paths", "veth", "--dry-run"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--variant"), "{err}");
}

#[test]
fn a_peer_that_does_not_answer_fails_the_repetition_in_bounded_time() {
    // A listener that never accepts: the kernel completes the connection, and the
    // control hello is never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let lab = Lab::new();
    let t0 = Instant::now();
    let o = lab.run(&[
        "run",
        "--workload",
        "netrr",
        "-p",
        &format!("peer=127.0.0.1:{port}"),
        "-p",
        "token=x",
        "-p",
        "timeout=0.2s",
        "--reps",
        "1",
        "--warmup",
        "0",
    ]);
    let (_, err) = text(&o);
    // Bounded (the control time limit, 15 s, per repetition), not hung; the bound leaves
    // room for a loaded machine.
    assert!(
        t0.elapsed() < Duration::from_secs(90),
        "took {:?}",
        t0.elapsed()
    );
    let doc = lab.export_named(&run_id(&err));
    let why = doc["measurements"][0]["status"]["error"]
        .as_str()
        .expect("the repetition failed")
        .to_string();
    assert!(
        why.contains(&format!("127.0.0.1:{port}")) && why.contains("no message within"),
        "{why}"
    );
}
