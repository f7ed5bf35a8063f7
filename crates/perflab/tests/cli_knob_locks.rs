//! Two `perflab run` with different journals wanting one setting: the second exits 2
//! with one line naming the holder and the file, and the tree ends as it started (before
//! the system-wide locks, each journaled the other's temporary value as the original).

use crate::common;

use common::{text, Lab};

/// `perflab --sysroot ROOT --journal OTHER run --workload null --variant on:fake=2`.
fn second_run(lab: &Lab, root: &std::path::Path) -> std::process::Output {
    let other = lab.dir.path().join("other-journal.json");
    lab.run(&[
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
}

#[test]
fn a_second_run_with_another_journal_is_refused_naming_the_holder() {
    let lab = Lab::new();
    let run = lab.start_fake_knob_run(std::process::Stdio::piped());
    let (root, before, child) = (run.root, run.before, run.child);
    let o = second_run(&lab, &root);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
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
    assert!(line.contains("perflab run --resume"), "{line}");
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
