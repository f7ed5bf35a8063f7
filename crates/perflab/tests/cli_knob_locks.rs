//! Two `perflab run` with different journals wanting one setting: the second exits 6
//! (busy) with one line naming the holder and the file, before anything is stored, or
//! waits for it with `--wait-lock`; and the tree ends as it started (before the
//! system-wide locks, each journaled the other's temporary value as the original).

use crate::common;

use common::{text, Lab};

/// `perflab --sysroot ROOT --journal OTHER run --workload null --variant on:fake=2`,
/// refused at once rather than waiting.
fn second_run(lab: &Lab, root: &std::path::Path) -> std::process::Output {
    let other = lab.dir.path().join("other-journal.json");
    refusing(lab)
        .args([
            "--sysroot",
            root.to_str().unwrap(),
            "--journal",
            other.to_str().unwrap(),
            "run",
            "--workload",
            "null",
            "--variant",
            "on:fake=2",
            "--reps",
            "2",
        ])
        .output()
        .unwrap()
}

/// perflab as a test's `Lab` runs it, but refused a held setting at once.
fn refusing(lab: &Lab) -> std::process::Command {
    let mut c = lab.cmd();
    c.env_remove("PERFLAB_WAIT_LOCK");
    c
}

/// The runs stored in the database at `db`.
fn stored_runs(db: &std::path::Path) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_second_run_with_another_journal_is_refused_naming_the_holder() {
    let lab = Lab::new();
    let run = lab.start_fake_knob_run(std::process::Stdio::piped());
    let (root, before, child) = (run.root, run.before, run.child);
    let o = second_run(&lab, &root);
    let (out, err) = text(&o);
    // Busy, not bad input (issue 31 item 14), and refused before the run was stored
    // (item 8: it used to stay behind as `interrupted 0/2`).
    assert_eq!(o.status.code(), Some(6), "{out}{err}");
    assert_eq!(stored_runs(&lab.db()), 1, "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("perflab: "))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(
        line.contains("sys/kernel/perflab_fake: in use by perflab pid ")
            && line.contains(&format!("pid {} (`perflab ", child.id()))
            && line.contains("for fake=1"),
        "{line}"
    );
    assert!(
        line.ends_with(": run again once it has finished, or wait for it with --wait-lock TIME"),
        "{line}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sys/kernel/perflab_fake")).unwrap(),
        "1",
        "the refused run changed nothing"
    );

    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{:?}", text(&o));
    assert_eq!(common::snapshot(&root), before);
    assert!(second_run(&lab, &root).status.success());
    assert_eq!(common::snapshot(&root), before);
}

#[test]
fn after_a_sigkill_the_next_run_is_told_to_restore_first() {
    let lab = Lab::new();
    let mut run = lab.start_fake_knob_run(std::process::Stdio::null());
    run.child.kill().unwrap();
    run.child.wait().unwrap();
    let o = second_run(&lab, &run.root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    let journal = lab.journal();
    assert!(
        err.contains("ended without putting the original back")
            && err.contains(&format!(
                "run `perflab restore --journal {}` first",
                journal.display()
            )),
        "{err}"
    );
    let o = lab.run(&["restore"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(common::snapshot(&run.root), run.before);
    assert!(second_run(&lab, &run.root).status.success());
    assert_eq!(common::snapshot(&run.root), run.before);
}

const THP: &str = "sys/kernel/mm/transparent_hugepage/enabled";

/// A long null run on a copy of the kvm fixture tree (THP `madvise`) whose one variant is
/// `variant`; returns once `ready` holds of the tree.
fn long_run_on_tree(
    lab: &Lab,
    variant: &str,
    ready: impl Fn(&std::path::Path) -> bool,
) -> (std::path::PathBuf, std::process::Child) {
    let root = lab.fixture_copy("kvm-2vcpu");
    let child = lab
        .cmd()
        .args([
            "--sysroot",
            root.to_str().unwrap(),
            "run",
            "--workload",
            "null",
        ])
        .args(["-p", "sleep=100ms", "--reps", "100", "--variant", variant])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready(&root) {
        assert!(std::time::Instant::now() < deadline, "{variant} never held");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (root, child)
}

/// The lock file of THP in the fixture copy at `root`.
fn thp_lock(root: &std::path::Path) -> std::path::PathBuf {
    let sys = perflab_sys::SysRoot::at(root);
    perflab_knobs::target_lock::lock_file(&perflab_knobs::target_lock::target_key(&sys, THP))
        .unwrap()
}

/// A run killed while it held a target it only relied on (THP was `madvise` already, so
/// nothing was journaled) left its lock file for good: `perflab restore` said "nothing to
/// restore" and removed nothing. It removes it now.
#[test]
fn restore_removes_the_lock_files_a_killed_run_left() {
    let lab = Lab::new();
    let (root, mut child) =
        long_run_on_tree(&lab, "on:thp=madvise", |root| thp_lock(root).exists());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        thp_lock(&root).exists(),
        "the kill left no lock file to test with"
    );
    let o = lab.run(&["restore"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(!thp_lock(&root).exists(), "{out}{err}");
}

/// While another perflab holds THP at `never`, a second run (another journal, a variant
/// that does not touch THP) records the machine's setting, `madvise`, in its fingerprint:
/// the value found before any perflab changed it, never the holder's temporary one.
#[test]
fn the_fingerprint_records_the_value_before_another_perflab_changed_it() {
    let lab = Lab::new();
    let (root, child) = long_run_on_tree(&lab, "on:thp=never", |root| {
        std::fs::read_to_string(root.join(THP)).is_ok_and(|t| t.trim() == "never")
    });
    let other = lab.dir.path().join("other-journal.json");
    let o = lab.run(&[
        "--sysroot",
        root.to_str().unwrap(),
        "--journal",
        other.to_str().unwrap(),
        "run",
        "--workload",
        "null",
        "--variant",
        "plain:",
        "--reps",
        "2",
    ]);
    let (out, err) = text(&o);
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait_with_output();
    assert!(o.status.success(), "{out}{err}");
    let doc = lab.export(&common::run_id(&err));
    assert_eq!(
        doc["run"]["fingerprint"]["thp"], "madvise",
        "{}",
        doc["run"]["fingerprint"]
    );
}

/// A writable copy of the kvm fixture tree with the fake knob's file at 0.
fn fake_tree(lab: &Lab) -> std::path::PathBuf {
    let root = lab.fixture_copy("kvm-2vcpu");
    std::fs::create_dir_all(root.join("sys/kernel")).unwrap();
    std::fs::write(root.join("sys/kernel/perflab_fake"), "0\n").unwrap();
    root
}

/// A long null run on `root` whose one variant sets the fake knob to `value`, with
/// `global` flags before `run`; returns once the knob holds `value`.
fn long_fake_run(
    lab: &Lab,
    root: &std::path::Path,
    value: &str,
    global: &[&str],
) -> std::process::Child {
    let child = refusing(lab)
        .args(["--sysroot", root.to_str().unwrap()])
        .args(global)
        .args([
            "run",
            "--workload",
            "null",
            "-p",
            "sleep=100ms",
            "--reps",
            "100",
        ])
        .args(["--variant", &format!("on:fake={value}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let fake = root.join("sys/kernel/perflab_fake");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&fake).unwrap().trim() != value {
        assert!(
            std::time::Instant::now() < deadline,
            "fake={value} never held"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

fn stop(child: std::process::Child) -> std::process::Output {
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait_with_output().unwrap()
}

/// A resume refused a setting names the database it must resume in (it said `perflab run
/// --resume 1` without the `--db` the run is in: against the default database that
/// resumes another run 1, issue 31 item 8); it exits 6 and changes nothing of the run.
/// `--wait-lock` waits instead, saying what for, and resumes once the holder is gone;
/// a wait that runs out is exit 6 as well.
#[test]
fn a_refused_resume_names_its_database_and_wait_lock_waits_for_the_holder() {
    let lab = Lab::new();
    let root = fake_tree(&lab);
    let db = lab.dir.path().join("other results.db");
    let journal = lab.dir.path().join("other-journal.json");
    let (db_arg, journal_arg) = (db.to_str().unwrap(), journal.to_str().unwrap());
    let mine = ["--db", db_arg, "--journal", journal_arg];
    // Run 1 in the other database, stopped: interrupted, its knob put back.
    let o = stop(long_fake_run(&lab, &root, "2", &mine));
    assert_eq!(o.status.code(), Some(130), "{:?}", text(&o));
    let holder = long_fake_run(&lab, &root, "1", &[]);
    let resume = |wait: Option<&str>| {
        let mut c = refusing(&lab);
        c.args(["--sysroot", root.to_str().unwrap()])
            .args(mine)
            .args(["run", "--resume", "1"]);
        if let Some(w) = wait {
            c.args(["--wait-lock", w]);
        }
        c
    };
    let o = resume(None).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(6), "{err}");
    assert!(
        err.contains(&format!(
            "resume this run with `perflab run --resume 1 --db '{}'` once it has finished",
            db.display()
        )),
        "{err}"
    );
    let o = resume(Some("1s")).output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(6), "{err}");
    assert!(err.contains("perflab: waiting for "), "{err}");

    // Waiting: it says so, then resumes once the holder has gone.
    let mut waiting = resume(Some("5m"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines =
        std::io::BufRead::lines(std::io::BufReader::new(waiting.stderr.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    assert!(
        first.starts_with("perflab: waiting for ")
            && first.contains(&format!(
                "perflab_fake: in use by perflab pid {}",
                holder.id()
            )),
        "{first}"
    );
    let held = stop(holder);
    assert_eq!(held.status.code(), Some(130), "{:?}", text(&held));
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = waiting.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(
        rest.iter().any(|l| l.starts_with("run 1: complete")),
        "{rest:?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sys/kernel/perflab_fake")).unwrap(),
        "0\n",
        "the tree ends as it started"
    );
}

/// The warning every start gives while a journal holds unrestored settings names the
/// `perflab restore` that reads that journal: with `--journal J`, `--journal J` (a bare
/// `perflab restore` reads the default journal and finds nothing).
#[test]
fn the_pending_journal_warning_names_the_journal_to_restore() {
    let lab = Lab::new();
    let root = fake_tree(&lab);
    let journal = lab.dir.path().join("my journal.json");
    let journal_arg = journal.to_str().unwrap();
    let mut child = long_fake_run(&lab, &root, "1", &["--journal", journal_arg]);
    child.kill().unwrap();
    child.wait().unwrap();
    let o = lab.run(&["--journal", journal_arg, "ls"]);
    let (_, err) = text(&o);
    assert!(
        err.contains(&format!(
            "run `perflab restore --journal '{}'`",
            journal.display()
        )),
        "{err}"
    );
    let o = lab.run(&["--journal", journal_arg, "restore"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(
        std::fs::read_to_string(root.join("sys/kernel/perflab_fake")).unwrap(),
        "0\n"
    );
}
