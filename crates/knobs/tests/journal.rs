use crate::common;

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use common::{applied, edit_entries, orphan_entries, Tree};
use perflab_knobs::{journal, parse_setting, pending, restore_pending, Journal, KnobError};

#[test]
fn restore_pending_after_a_crash_brings_back_every_byte() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let guard = applied(&tree.sys, "cpuidle=poll-only", &tree.journal());
    // A SIGKILL: no destructor runs.
    std::mem::forget(guard);
    assert_ne!(tree.snapshot(), before);
    assert!(
        pending(&tree.journal_path).unwrap().is_empty(),
        "a live owner's entries are not pending"
    );
    let report = restore_pending(&tree.journal_path).unwrap();
    assert_eq!(
        (report.restored.len(), report.live.len()),
        (0, 11),
        "live entries are left alone"
    );
    assert_ne!(tree.snapshot(), before);

    orphan_entries(&tree.journal_path);
    assert_eq!(pending(&tree.journal_path).unwrap().len(), 11);
    let report = restore_pending(&tree.journal_path).unwrap();
    assert!(report.is_clean(), "{:?}", report.lines());
    assert_eq!(report.restored.len(), 11);
    assert!(
        report.restored.windows(2).all(|w| w[0].id > w[1].id),
        "newest first"
    );
    assert_eq!(tree.snapshot(), before);
    assert!(journal::entries(&tree.journal_path).unwrap().is_empty());
    assert!(pending(&tree.journal_path).unwrap().is_empty());
}

#[test]
fn a_file_changed_twice_ends_with_its_oldest_value() {
    let tree = Tree::new();
    let journal = tree.journal();
    let first = applied(&tree.sys, "fake=1", &journal);
    let second = applied(&tree.sys, "fake=2", &journal);
    std::mem::forget((first, second));
    orphan_entries(&tree.journal_path);
    let report = restore_pending(&tree.journal_path).unwrap();
    assert_eq!(report.restored.len(), 2);
    assert_eq!(
        tree.sys.read_string("sys/kernel/perflab_fake").unwrap(),
        "0\n"
    );
}

#[test]
fn failures_are_reported_per_entry_and_kept() {
    let tree = Tree::new();
    let journal = tree.journal();
    let guard = applied(&tree.sys, "cpuidle=poll-only", &journal);
    std::mem::forget(guard);
    orphan_entries(&tree.journal_path);
    // cpu1's C1E `disable` becomes a directory: its write back must fail, the others not.
    let broken = tree.disable(1, 2);
    fs::remove_file(&broken).unwrap();
    fs::create_dir(&broken).unwrap();
    let report = restore_pending(&tree.journal_path).unwrap();
    assert!(!report.is_clean());
    assert_eq!((report.restored.len(), report.failed.len()), (10, 1));
    let (entry, why) = &report.failed[0];
    assert_eq!(entry.full_path(), broken);
    assert!(why.contains("cpu1/cpuidle/state2/disable"), "{why}");
    assert!(
        report.lines()[0].starts_with("FAILED cpuidle=poll-only"),
        "{:?}",
        report.lines()
    );
    let left = journal::entries(&tree.journal_path).unwrap();
    assert_eq!(left, vec![entry.clone()]);
    assert!(!tree.disabled(0, 1), "the others were restored");
}

#[test]
fn a_corrupt_journal_is_a_clear_error_and_stays_in_place() {
    let tree = Tree::new();
    fs::create_dir_all(tree.journal_path.parent().unwrap()).unwrap();
    fs::write(&tree.journal_path, "{\"version\":1,\"next_id\":3,\"entr").unwrap();
    let errors: Vec<KnobError> = vec![
        Journal::open(&tree.journal_path).unwrap_err(),
        pending(&tree.journal_path).unwrap_err(),
        restore_pending(&tree.journal_path).unwrap_err(),
    ];
    for err in errors {
        let msg = err.to_string();
        assert!(matches!(err, KnobError::CorruptJournal { .. }), "{msg}");
        assert!(
            msg.contains(&tree.journal_path.display().to_string()),
            "{msg}"
        );
        assert!(msg.contains("left in place"), "{msg}");
    }
    assert_eq!(
        fs::read_to_string(&tree.journal_path).unwrap(),
        "{\"version\":1,\"next_id\":3,\"entr"
    );
}

#[test]
fn a_knob_cannot_change_anything_when_its_journal_is_corrupt() {
    let tree = Tree::new();
    let journal = tree.journal();
    fs::write(&tree.journal_path, "garbage").unwrap();
    let before = tree.snapshot();
    let err = parse_setting("cpuidle=poll-only")
        .unwrap()
        .apply(&tree.sys, &journal)
        .err()
        .unwrap();
    assert!(matches!(err, KnobError::CorruptJournal { .. }), "{err}");
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn non_utf8_originals_round_trip_exactly() {
    let tree = Tree::new();
    let bytes = vec![0xff, 0xfe, b'\n', 0];
    fs::write(tree.sys.path("sys/kernel/perflab_fake"), &bytes).unwrap();
    let guard = applied(&tree.sys, "fake=x", &tree.journal());
    std::mem::forget(guard);
    orphan_entries(&tree.journal_path);
    restore_pending(&tree.journal_path).unwrap();
    assert_eq!(
        fs::read(tree.sys.path("sys/kernel/perflab_fake")).unwrap(),
        bytes
    );
}

#[test]
fn concurrent_writers_lose_no_entries() {
    let tree = Tree::new();
    let path = Arc::new(tree.journal_path.clone());
    let sys = tree.sys.clone();
    let threads: Vec<_> = (0..4)
        .map(|cpu| {
            let (path, sys) = (Arc::clone(&path), sys.clone());
            std::thread::spawn(move || {
                // A handle per thread: each opens and locks the files itself, as separate
                // processes do. Each changes its own file: separate handles are separate
                // holders, and two may not change one file (see target_locks.rs).
                let journal = Journal::open(path.as_path()).unwrap();
                let file = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state1/disable");
                let ids: Vec<_> = (0..25)
                    .map(|_| journal.save_original(&sys, &file, "fake=t").unwrap().id)
                    .collect();
                journal.forget_all(&ids[..10]).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let entries = journal::entries(&path).unwrap();
    assert_eq!(entries.len(), 4 * 15);
    let mut ids: Vec<_> = entries.iter().map(|e| e.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 60, "ids are unique and in order of recording");
}

#[test]
fn entries_from_before_a_reboot_are_reported_not_replayed() {
    let tree = Tree::new();
    let journal = tree.journal();
    let guard = applied(&tree.sys, "fake=1", &journal);
    std::mem::forget(guard);
    let mut json: serde_json::Value =
        serde_json::from_slice(&fs::read(&tree.journal_path).unwrap()).unwrap();
    let fake = json["entries"][0].clone();
    // The same entry as if on the live root in an earlier boot: that reboot reset it.
    let mut host = fake.clone();
    host["id"] = 7.into();
    host["root"] = "/".into();
    host["path"] = "sys/kernel/perflab_no_such_file".into();
    host["boot_id"] = "00000000-0000-0000-0000-000000000000".into();
    json["entries"] = serde_json::Value::Array(vec![fake, host]);
    json["next_id"] = 8.into();
    fs::write(&tree.journal_path, serde_json::to_vec(&json).unwrap()).unwrap();
    orphan_entries(&tree.journal_path);

    let report = restore_pending(&tree.journal_path).unwrap();
    assert!(report.is_clean(), "{:?}", report.lines());
    assert_eq!(
        report.restored.len(),
        1,
        "the test tree's entry is written back"
    );
    assert_eq!(report.reset_by_reboot.len(), 1);
    assert_eq!(report.reset_by_reboot[0].root, PathBuf::from("/"));
    assert!(journal::entries(&tree.journal_path).unwrap().is_empty());
}

#[test]
fn default_path_honours_perflab_journal() {
    // Only this test touches these variables in this binary.
    std::env::set_var("PERFLAB_JOURNAL", "/tmp/x/j.json");
    assert_eq!(Journal::default_path(), PathBuf::from("/tmp/x/j.json"));
    std::env::remove_var("PERFLAB_JOURNAL");
    let path = Journal::default_path();
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(path, PathBuf::from("/var/lib/perflab/journal.json"));
    } else {
        assert!(path.ends_with("perflab/journal.json"), "{}", path.display());
    }
}

fn set_owner(journal: &std::path::Path, pid: u32, start_ticks: serde_json::Value) {
    edit_entries(journal, |e| {
        e["pid"] = pid.into();
        e["pid_start_ticks"] = start_ticks.clone();
    });
}

#[test]
fn a_file_another_perflab_left_changed_is_not_journaled_as_original() {
    let tree = Tree::new();
    let journal = tree.journal();
    std::mem::forget(applied(&tree.sys, "fake=1", &journal));
    orphan_entries(&tree.journal_path);
    let warning = perflab_knobs::pending_warning(&tree.journal_path)
        .unwrap()
        .unwrap();
    assert!(
        warning.starts_with("1 change(s) by a perflab that did not finish"),
        "{warning}"
    );
    assert!(
        warning.contains("fake=1: ") && warning.contains("was \"0\\n\""),
        "{warning}"
    );

    let err = parse_setting("fake=2")
        .unwrap()
        .apply(&tree.sys, &journal)
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(
        msg.contains("perflab_fake") && msg.contains("run `perflab restore` first"),
        "{msg}"
    );
    assert_eq!(
        tree.sys.read_string("sys/kernel/perflab_fake").unwrap(),
        "1"
    );

    restore_pending(&tree.journal_path).unwrap();
    assert_eq!(
        perflab_knobs::pending_warning(&tree.journal_path).unwrap(),
        None
    );
    drop(applied(&tree.sys, "fake=2", &journal));
    assert_eq!(
        tree.sys.read_string("sys/kernel/perflab_fake").unwrap(),
        "0\n"
    );
}

#[test]
fn a_file_a_running_perflab_changed_is_refused() {
    let tree = Tree::new();
    let journal = tree.journal();
    std::mem::forget(applied(&tree.sys, "fake=1", &journal));
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    // No start time recorded: the pid alone decides, and `sleep` is running.
    set_owner(&tree.journal_path, other.id(), serde_json::Value::Null);
    let err = parse_setting("fake=2")
        .unwrap()
        .apply(&tree.sys, &journal)
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("perflab pid {} is changing it", other.id())),
        "{msg}"
    );
    assert!(pending(&tree.journal_path).unwrap().is_empty());
    let report = restore_pending(&tree.journal_path).unwrap();
    assert_eq!(report.live.len(), 1);
    other.kill().unwrap();
    other.wait().unwrap();
    assert_eq!(
        restore_pending(&tree.journal_path).unwrap().restored.len(),
        1
    );
    assert_eq!(
        tree.sys.read_string("sys/kernel/perflab_fake").unwrap(),
        "0\n"
    );
}
