//! End-to-end: the idle-ipi study on this machine, and on a writable copy of fixture trees
//! of machines with idle states (the knobs then write the copy; the workload still runs on
//! this machine's CPUs 0 and 1).

use crate::common;

use common::{run_id, text, Lab};

fn online_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[test]
fn idle_ipi_quick_on_this_machine() {
    let _host = crate::common::host_settings();
    let lab = Lab::new();
    let out_dir = lab.dir.path().join("summary");
    let o = lab.run(&[
        "run",
        "idle-ipi",
        "--quick",
        "--reps",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (stdout, err) = text(&o);
    let id = run_id(&err);

    let doc = lab.export_named(&id);
    let run = &doc["run"];
    // Without root poll-only is unavailable: the comparison never happened (exit 5). As
    // root on a machine whose idle driver ignores `disable` (KVM's haltpoll), poll-only
    // runs with the same idle states as all: the comparison tested nothing, exit 9 with
    // the reason listed (issue 32: this exited 0, then 8). Elsewhere a comparison may
    // still be void (no idle entries in either variant), or have ineffective
    // measurements (8).
    let ineffective = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["status"]["status"] == "ineffective");
    let haltpoll = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver")
        .is_ok_and(|d| d.trim() == "haltpoll");
    let void = err.contains("comparisons tested nothing");
    let expected = match (
        run["unavailable"].as_array().unwrap().is_empty(),
        haltpoll || void,
        ineffective,
    ) {
        (false, _, _) => 5,
        (true, true, _) => 9,
        (true, false, true) => 8,
        (true, false, false) => 0,
    };
    assert_eq!(
        o.status.code(),
        Some(expected),
        "stdout: {stdout}\nstderr: {err}"
    );
    if expected == 9 {
        assert!(
            stdout.contains("\n  void: all vs poll-only at cpu_b="),
            "{stdout}"
        );
        let last = err.lines().last().unwrap_or_default();
        assert!(last.contains("tested nothing (void"), "{err}");
    }
    assert_eq!(run["study"], "idle-ipi");
    assert_eq!(run["status"], "complete");
    let ms = doc["measurements"].as_array().unwrap();
    assert!(!ms.is_empty());
    for m in ms {
        // A machine whose idle driver ignores `disable` (KVM's haltpoll) runs poll-only with
        // the state still entered: that is recorded as ineffective, naming the knob.
        let status = m["status"]["status"].as_str().unwrap();
        let why = m["status"]["error"].as_str().unwrap_or_default();
        assert!(
            status == "ok"
                || (status == "ineffective"
                    && m["variant"] == "poll-only"
                    && why.starts_with("cpuidle=poll-only: ")),
            "{m}"
        );
        let rate = m["output"]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "round_trips_per_s")
            .unwrap()["value"]
            .as_f64()
            .unwrap();
        assert!(rate > 100.0, "implausible rate {rate}");
        // Interrupt telemetry is attached to every number.
        assert!(
            m["telemetry"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["source"] == "interrupts"),
            "{m}"
        );
    }
    // Every variant is either measured or reported unavailable with a reason.
    let measured: std::collections::BTreeSet<&str> =
        ms.iter().map(|m| m["variant"].as_str().unwrap()).collect();
    let unavailable = run["unavailable"].as_array().unwrap();
    for v in ["poll-only", "all"] {
        let why = unavailable.iter().find(|u| u["variant"] == v);
        assert!(measured.contains(v) != why.is_some(), "variant {v}: {run}");
        if let Some(u) = why {
            assert!(!u["reason"].as_str().unwrap().is_empty());
        }
    }
    // The drill-down directory: distribution.txt and one summary per pair.
    let dist = std::fs::read_to_string(out_dir.join("distribution.txt")).unwrap();
    assert!(!dist.is_empty());
    // A pair gets a summary in its bucket when both variants have a result there; one
    // whose poll-only measurements were all ineffective (a haltpoll guest) is listed as not
    // compared in distribution.txt, with the reason, and its summary of what was measured
    // is under not-compared/.
    let (summaries, not_compared): (Vec<_>, Vec<_>) = find_summaries(&out_dir)
        .into_iter()
        .partition(|p| !p.to_string_lossy().contains("/not-compared/"));
    let points = run["spec"]["points"].as_array().unwrap().len() as u64;
    let has_result = |point: u64, variant: &str| {
        ms.iter().any(|m| {
            m["point"] == point
                && m["variant"] == variant
                && m["role"] == "headline"
                && m["status"]["status"] == "ok"
        })
    };
    if measured.len() == 1 {
        // One variant (poll-only unavailable here): a summary of every pair.
        assert_eq!(summaries.len(), points as usize, "{summaries:?}");
    } else {
        let compared = (0..points)
            .filter(|&p| has_result(p, "poll-only") && has_result(p, "all"))
            .count();
        assert_eq!(summaries.len(), compared, "{summaries:?}");
        let one_sided = (0..points)
            .filter(|&p| has_result(p, "poll-only") != has_result(p, "all"))
            .count();
        assert_eq!(not_compared.len(), one_sided, "{not_compared:?}");
        assert_eq!(
            dist.contains("ineffective"),
            compared < points as usize,
            "{dist}"
        );
    }
    if let Some(first) = summaries.first() {
        let first = std::fs::read_to_string(first).unwrap();
        assert!(first.contains("Context Switch Information"), "{first}");
        assert!(first.contains("IRQ Information"), "{first}");
    }
}

#[test]
fn idle_ipi_on_fixture_trees_runs_both_variants_and_restores_the_tree() {
    if online_cpus() < 2 {
        perflab_testkit::skip("2-cpus", "the workload runs on CPUs 0 and 1");
        return;
    }
    for host in ["x86-intel-idle", "power-smt4"] {
        let lab = Lab::new();
        let root = lab.fixture_copy(host);
        let before = common::snapshot(&root);
        let out_dir = lab.dir.path().join("summary");
        let o = lab.run(&[
            "--sysroot",
            root.to_str().unwrap(),
            "run",
            "idle-ipi",
            "--quick",
            "--reps",
            "2",
            "--partners",
            "0,1",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let (stdout, err) = text(&o);
        // The fixture's idle counters never move: neither variant entered an idle state,
        // so the comparison tested nothing (void, exit 9), and says so.
        assert_eq!(
            o.status.code(),
            Some(9),
            "{host}\nstdout: {stdout}\nstderr: {err}"
        );
        assert!(
            stdout.contains("void: all vs poll-only at cpu_b=1: no idle entries in either variant"),
            "{host}\n{stdout}"
        );
        assert_eq!(
            common::snapshot(&root),
            before,
            "{host}: the tree was left changed"
        );
        let id = run_id(&err);
        let doc = lab.export_named(&id);
        let all = doc["measurements"].as_array().unwrap();
        // The default counters monitor runs in one telemetry repetition per point and
        // variant, after the point's headline ones (none where perf events cannot open).
        let ms: Vec<&serde_json::Value> = all.iter().filter(|m| m["role"] == "headline").collect();
        assert_eq!(ms.len(), 2 * 2 * 2, "{host}");
        assert!([0, 2 * 2].contains(&(all.len() - ms.len())), "{host}");
        // A B A B at each point, never all of A then all of B.
        let order: Vec<&str> = ms.iter().map(|m| m["variant"].as_str().unwrap()).collect();
        assert_eq!(
            &order[..4],
            &["poll-only", "all", "poll-only", "all"],
            "{host}"
        );
        assert!(find_summaries(&out_dir).len() == 2, "{host}");
        // A void comparison gets no advice on repetitions: more would not decide it (the
        // report's spread section said "about N per side would do" for such rows).
        let o = lab.run(&["report", &id, "--format", "mail"]);
        let (mail, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let every_point_void = stdout.contains("void: all vs poll-only at cpu_b=0");
        for line in mail.lines().filter(|l| l.contains("would do")) {
            assert!(
                !every_point_void && !line.contains("0-1"),
                "{host}: {line}\n{mail}"
            );
        }
        let o = lab.run(&["show", &id, "--pair", "0,1"]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(
            out.contains("poll-only") && out.contains("Idle State information"),
            "{out}"
        );
    }
}

#[test]
fn sigkill_mid_run_then_restore_leaves_the_tree_byte_identical() {
    let lab = Lab::new();
    let mut run = lab.start_fake_knob_run(std::process::Stdio::null());
    run.child.kill().unwrap(); // SIGKILL: no chance to restore
    run.child.wait().unwrap();
    let (root, before) = (run.root, run.before);
    assert_ne!(common::snapshot(&root), before);

    // Every start warns while the journal is pending.
    let o = lab.run(&["ls"]);
    let (_, err) = text(&o);
    assert!(err.contains("perflab restore"), "{err}");

    let o = lab.run(&["restore"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(common::snapshot(&root), before);
    let o = lab.run(&["restore"]);
    let (out, _) = text(&o);
    assert!(out.contains("nothing to restore"), "{out}");
}

fn find_summaries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(find_summaries(&p));
        } else if p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("CPUS-")
        {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every folder under `dir`, `dir` itself aside.
fn folders(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(folders(&p));
            out.push(p);
        }
    }
    out
}

#[test]
fn without_out_the_drilldown_goes_beside_the_database_never_the_current_directory() {
    if online_cpus() < 2 {
        perflab_testkit::skip("2-cpus", "the workload runs on CPUs 0 and 1");
        return;
    }
    let lab = Lab::new();
    let root = lab.fixture_copy("x86-intel-idle");
    let cwd = lab.dir.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let run = |format: &str| {
        let o = lab
            .cmd()
            .current_dir(&cwd)
            .args([
                "--sysroot",
                root.to_str().unwrap(),
                "run",
                "idle-ipi",
                "--quick",
            ])
            .args(["--reps", "2", "--partners", "0,1", "--format", format])
            .output()
            .unwrap();
        let (stdout, err) = text(&o);
        // 9: the fixture's idle counters never move, so the comparison is void.
        assert_eq!(o.status.code(), Some(9), "stdout: {stdout}\nstderr: {err}");
        (run_id(&err), stdout)
    };
    let (id, stdout) = run("text");
    // $PERFLAB_DB is <lab>/results.db: the drill-down is <lab>/drilldown/idle-ipi-<id>.
    let dir = lab
        .dir
        .path()
        .join("drilldown")
        .join(format!("idle-ipi-{id}"));
    assert!(
        stdout.contains(&format!("drill-down per pair: {}/", dir.display())),
        "{stdout}"
    );
    assert!(dir.join("distribution.txt").is_file());
    assert_eq!(find_summaries(&dir).len(), 2);
    assert_eq!(
        std::fs::read_dir(&cwd).unwrap().count(),
        0,
        "nothing is written to the current directory"
    );
    // No folder of it starts with `-` (improvement buckets are `improved-N`).
    for f in folders(&dir) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.starts_with('-'), "{}", f.display());
    }

    let (id, stdout) = run("json");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let dir = lab
        .dir
        .path()
        .join("drilldown")
        .join(format!("idle-ipi-{id}"));
    assert_eq!(doc["drilldown"].as_str(), Some(dir.to_str().unwrap()));
    assert!(dir.join("distribution.txt").is_file());
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
}
