//! End-to-end: a knob that does not hold. On the `kvm-haltpoll` fixture (a KVM guest's
//! `haltpoll` cpuidle driver, which accepts `disable` and keeps entering the state) the
//! workload itself enters the "disabled" state, as the real driver does: the measurement
//! is recorded ineffective with the reason, shown by show, compare, report and the
//! drill-down, and no verdict is drawn from it.

use crate::common;

use std::path::Path;

use common::{run_id, text, Lab};

const STATE1: &str = "sys/devices/system/cpu/cpu0/cpuidle/state1";

/// A command that prints `rate: 200` and enters the haltpoll state (bumps its usage) when
/// the state is disabled, as the poll-only variant has it, and `rate: 100` otherwise.
/// With `every` > 1 only every `every`-th call in the disabled state enters it.
fn enter_when_disabled(root: &Path, counter: &Path, every: u32) -> String {
    let dir = root.join(STATE1);
    format!(
        "d={dir}; n=$(cat {c} 2>/dev/null || echo 0); \
         if [ \"$(cat $d/disable)\" = 1 ]; then n=$((n + 1)); echo $n > {c}; \
           if [ $((n % {every})) = 0 ]; then echo $(( $(cat $d/usage) + 1416 )) > $d/usage; \
             echo 'rate: 200'; else echo 'rate: 100'; fi; \
         else echo 'rate: 100'; fi",
        dir = dir.display(),
        c = counter.display(),
    )
}

fn run_poll_vs_all(lab: &Lab, root: &Path, cmd: &str) -> String {
    let o = lab.run(&[
        "--sysroot",
        root.to_str().unwrap(),
        "run",
        "--workload",
        "exec",
        "-p",
        &format!("cmd={cmd}"),
        "-p",
        "regex=rate: (\\d+)",
        "--variant",
        "all:cpuidle=all",
        "--variant",
        "poll:cpuidle=poll-only",
        "--reps",
        "4",
        "--monitors",
        "cpuidle",
    ]);
    let (out, err) = text(&o);
    // Issue 32: a run with ineffective measurements exited 0; it has a code of its own.
    assert_eq!(o.status.code(), Some(8), "{out}{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("measurements were ineffective (a knob of their variant did not hold"),
        "{err}"
    );
    run_id(&err)
}

#[test]
fn a_disabled_state_that_keeps_counting_makes_the_variant_ineffective() {
    let lab = Lab::new();
    let root = lab.fixture_copy("kvm-haltpoll");
    let cmd = enter_when_disabled(&root, &lab.dir.path().join("calls"), 1);
    let id = run_poll_vs_all(&lab, &root, &cmd);

    // Every poll-only measurement is ineffective, with what was seen and why.
    let doc = lab.export(&id);
    let ms = doc["measurements"].as_array().unwrap();
    let poll: Vec<_> = ms.iter().filter(|m| m["variant"] == "poll").collect();
    assert_eq!(poll.len(), 4);
    for m in &poll {
        assert_eq!(m["status"]["status"], "ineffective", "{m}");
        let why = m["status"]["error"].as_str().unwrap();
        assert!(
            why.contains("cpuidle=poll-only")
                && why.contains("haltpoll (state1) was entered 1416 times")
                && why.contains("the haltpoll driver does not honour `disable`"),
            "{why}"
        );
    }
    assert!(ms
        .iter()
        .filter(|m| m["variant"] == "all")
        .all(|m| m["status"]["status"] == "ok"));

    // No verdict: poll's 200s would read as +100% better if they counted.
    let o = lab.run(&["compare", &id, "--variants", "all,poll"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!out.contains("+100"), "{out}");
    assert!(
        out.contains("Not compared") && out.contains("no successful value in poll (4 ineffective"),
        "{out}"
    );
    assert!(out.contains("INEFFECTIVE"), "{out}");

    let o = lab.run(&["show", &id]);
    let (out, _) = text(&o);
    assert!(out.contains("INEFFECTIVE"), "{out}");

    let o = lab.run(&["report", &id, "--format", "markdown"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("Ineffective measurements"), "{out}");
    assert!(out.contains("entered 1416 times"), "{out}");
    assert!(!out.contains("+100"), "{out}");

    // The knob put the state back as it found it.
    let disable = std::fs::read_to_string(root.join(STATE1).join("disable")).unwrap();
    assert_eq!(disable.trim(), "0");
}

#[test]
fn only_the_measurements_whose_knob_slipped_are_left_out() {
    let lab = Lab::new();
    let root = lab.fixture_copy("kvm-haltpoll");
    // Every second poll-only call enters the state: two of four are ineffective.
    let cmd = enter_when_disabled(&root, &lab.dir.path().join("calls"), 2);
    let id = run_poll_vs_all(&lab, &root, &cmd);
    let doc = lab.export(&id);
    let statuses: Vec<&str> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["variant"] == "poll")
        .map(|m| m["status"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok", "ineffective", "ok", "ineffective"]);

    // The two effective values are 100, as in `all`: no change. Counting the 200s of the
    // ineffective ones would have made it +50%.
    let drill = lab.dir.path().join("drill");
    let o = lab.run(&[
        "compare",
        &id,
        "--variants",
        "all,poll",
        "--drilldown",
        drill.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!out.contains("+50"), "{out}");
    assert!(out.contains("2 measurements ran while a knob"), "{out}");
    let files = walk(&drill);
    let row_file = files
        .iter()
        .find(|f| !f.ends_with("distribution.txt"))
        .unwrap_or_else(|| panic!("no drill-down row file in {files:?}"));
    let text = std::fs::read_to_string(row_file).unwrap();
    assert!(text.contains("INEFFECTIVE"), "{text}");
    assert!(text.contains("entered 1416 times"), "{text}");
}

/// Until `stop`, enters the haltpoll state of `cpu` in the tree at `root` (bumps its
/// usage) while it is disabled, as the real haltpoll driver does behind a poll-only
/// setting.
fn haltpoll_driver(root: &Path, cpu: u32, stop: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    let dir = root.join(STATE1.replace("cpu0", &format!("cpu{cpu}")));
    while !stop.load(Ordering::Relaxed) {
        let disabled = std::fs::read_to_string(dir.join("disable")).unwrap_or_default();
        if disabled.trim() == "1" {
            let usage: u64 = std::fs::read_to_string(dir.join("usage"))
                .ok()
                .and_then(|u| u.trim().parse().ok())
                .unwrap_or(0);
            // Written aside and renamed into place: a plain write truncates first, and the
            // cpuidle monitor reading in between would see an empty file.
            let next = dir.join("usage.next");
            if std::fs::write(&next, format!("{}\n", usage + 1)).is_ok() {
                let _ = std::fs::rename(&next, dir.join("usage"));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `perflab --sysroot ROOT run idle-ipi --quick ARGS...` while [`haltpoll_driver`] enters
/// `cpu`'s haltpoll state behind the poll-only setting.
fn idle_ipi_while_haltpoll_is_entered(
    lab: &Lab,
    root: &Path,
    cpu: u32,
    args: &[&str],
) -> std::process::Output {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut all = vec![
        "--sysroot",
        root.to_str().unwrap(),
        "run",
        "idle-ipi",
        "--quick",
    ];
    all.extend_from_slice(args);
    std::thread::scope(|s| {
        s.spawn(|| haltpoll_driver(root, cpu, &stop));
        let o = lab.run(&all);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        o
    })
}

#[test]
fn idle_ipi_on_haltpoll_says_so_before_measuring_and_still_drills_down_the_pair() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        perflab_testkit::skip("2-cpus", "the workload runs on CPUs 0 and 1");
        return;
    }
    let lab = Lab::new();
    let root = lab.fixture_copy("kvm-haltpoll");
    let sysroot = root.to_str().unwrap();

    // The plan says it before anything is measured.
    let o = lab.run(&[
        "--sysroot",
        sysroot,
        "run",
        "idle-ipi",
        "--quick",
        "--dry-run",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("variant poll-only: cpuidle=poll-only: the haltpoll driver ignores `disable`"),
        "{err}"
    );

    let drill = lab.dir.path().join("drill");
    let o = idle_ipi_while_haltpoll_is_entered(
        &lab,
        &root,
        0,
        &[
            "--reps",
            "2",
            "--partners",
            "1",
            "--out",
            drill.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(
        err.contains("the haltpoll driver ignores `disable`"),
        "{err}"
    );
    let id = run_id(&err);
    let doc = lab.export(&id);
    let poll: Vec<_> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["variant"] == "poll-only" && m["role"] == "headline")
        .collect();
    assert!(
        poll.iter().all(|m| m["status"]["status"] == "ineffective"),
        "{out}{err}"
    );

    // The pair has its summary of what was measured, with the reason for the rest.
    let files = walk(&drill);
    let summary = files
        .iter()
        .find(|f| f.ends_with("CPUS-0-1-summary"))
        .unwrap_or_else(|| panic!("no summary of pair 0-1 in {files:?}\n{out}{err}"));
    let text_of = std::fs::read_to_string(summary).unwrap();
    assert!(
        text_of.contains("With all") && text_of.contains("Idle State information : all"),
        "{text_of}"
    );
    assert!(
        text_of.contains("poll-only") && text_of.contains("ineffective"),
        "{text_of}"
    );
    let o = lab.run(&["show", &id, "--pair", "0,1"]);
    let (shown, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(shown.trim_end(), text_of.trim_end());
}

/// Every `K of N measurements` in `text`, its lines joined (a mail wraps them).
fn fractions(text: &str) -> Vec<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_start_matches('('))
        .collect();
    words
        .windows(4)
        .filter(|w| w[1] == "of" && w[3].starts_with("measurements"))
        .filter(|w| [w[0], w[2]].iter().all(|n| n.parse::<u32>().is_ok()))
        .map(|w| format!("{} of {} measurements", w[0], w[2]))
        .collect()
}

/// A void reason and the Ineffective list say one fact, how many measurements of
/// poll-only its knob did not hold for, with one count. The knob's check reads every CPU,
/// the void judge's telemetry only the measured ones: with haltpoll entered on CPU 1 alone,
/// pair 0-0 (CPU 0 measured) read "haltpoll was entered in 5 of 10 measurements of
/// poll-only in this run (none at this point)" beside the list's "12 of 12 measurements",
/// and compare's INEFFECTIVE note counted 10 (headline repetitions only).
#[test]
fn the_void_reason_and_the_ineffective_list_give_one_count() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        perflab_testkit::skip("2-cpus", "the workload runs on CPUs 0 and 1");
        return;
    }
    let lab = Lab::new();
    let root = lab.fixture_copy("kvm-haltpoll");
    let o =
        idle_ipi_while_haltpoll_is_entered(&lab, &root, 1, &["--reps", "2", "--partners", "0,1"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(9), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    let doc = lab.export(&id);
    let poll: Vec<&str> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["variant"] == "poll-only" && m["status"]["status"] != "failed")
        .map(|m| m["status"]["status"].as_str().unwrap())
        .collect();
    let ineffective = poll.iter().filter(|s| **s == "ineffective").count();
    assert!(ineffective > 0, "{out}{err}");
    let count = format!("{ineffective} of {} measurements", poll.len());

    let o = lab.run(&["report", &id, "--format", "mail"]);
    let (mail, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let said = fractions(&mail);
    assert!(said.len() >= 2, "{mail}");
    assert!(
        said.iter().all(|f| *f == count),
        "{said:?}, not {count}:\n{mail}"
    );
    // The two lines that say it: the void row's reason and the Ineffective list.
    let joined = mail.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains("void (poll-only entered haltpoll"),
        "{mail}"
    );
    assert!(
        joined.contains(&format!("poll-only: {count}, at")),
        "{mail}"
    );

    let o = lab.run(&["compare", &id]);
    let (table, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let said = fractions(&table);
    assert!(!said.is_empty(), "{table}");
    assert!(
        said.iter().all(|f| *f == count),
        "{said:?}, not {count}:\n{table}"
    );
    assert!(
        table.contains(&format!("INEFFECTIVE: {ineffective} measurements ran")),
        "{table}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}
