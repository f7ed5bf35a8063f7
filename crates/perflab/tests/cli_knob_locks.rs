//! Two `perflab run` with different journals wanting one setting: the second exits 2
//! with one line naming the holder and the file, and the tree ends as it started (before
//! the system-wide locks, each journaled the other's temporary value as the original).

mod common;

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
