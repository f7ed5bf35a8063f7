use crate::common;

use std::fs;

use common::{applied, refused, Tree, STATES};
use perflab_knobs::{parse_setting, Action};

#[test]
fn poll_only_enables_only_poll_and_drop_restores_every_byte() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let knob = parse_setting("cpuidle=poll-only").unwrap();
    knob.check(&tree.sys).unwrap();
    let guard = knob.apply(&tree.sys, &tree.journal()).unwrap();
    for cpu in 0..4 {
        assert!(!tree.disabled(cpu, 0), "cpu{cpu} POLL");
        for (state, name) in STATES.iter().enumerate().skip(1) {
            assert!(tree.disabled(cpu, state), "cpu{cpu} {name}");
        }
    }
    drop(guard);
    assert_eq!(tree.snapshot(), before);
    assert!(tree.journal().entries().unwrap().is_empty());
}

#[test]
fn the_journal_holds_every_original_before_restore() {
    let tree = Tree::new();
    let knob = parse_setting("cpuidle=poll-only").unwrap();
    let guard = knob.apply(&tree.sys, &tree.journal()).unwrap();
    // Read the file itself, as `perflab restore` in another process would.
    let entries = perflab_knobs::journal::entries(&tree.journal_path).unwrap();
    // C1, C1E, C6 on 4 CPUs, less cpu3's C6, which was disabled already.
    assert_eq!(entries.len(), 3 * 4 - 1);
    for e in &entries {
        assert_eq!(e.knob, "cpuidle=poll-only");
        assert_eq!(e.pid, std::process::id());
        assert_eq!(e.root, tree.sys.root());
        assert!(e.path.ends_with("/disable"), "{}", e.path);
        assert_eq!(
            e.action,
            Action::Write {
                original: perflab_knobs::Original::Text("0\n".into())
            }
        );
    }
    guard.restore().unwrap();
    assert!(perflab_knobs::journal::entries(&tree.journal_path)
        .unwrap()
        .is_empty());
}

#[test]
fn all_and_explicit_lists_set_exactly_the_named_states() {
    let tree = Tree::new();
    let guard = applied(&tree.sys, "cpuidle=all", &tree.journal());
    assert!(!tree.disabled(3, 3), "cpu3 C6 enabled by `all`");
    guard.restore().unwrap();
    assert!(tree.disabled(3, 3), "cpu3 C6 disabled again");

    let knob = parse_setting("cpuidle=states:c1,C1E").unwrap();
    let guard = knob.apply(&tree.sys, &tree.journal()).unwrap();
    for cpu in 0..4 {
        let got: Vec<bool> = (0..4).map(|s| tree.disabled(cpu, s)).collect();
        assert_eq!(got, vec![true, false, false, true], "cpu{cpu}");
    }
    drop(guard);
}

#[test]
fn an_unknown_state_name_is_unavailable_naming_the_valid_ones() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let knob = parse_setting("cpuidle=states:C1,C9").unwrap();
    let why = knob.check(&tree.sys).unwrap_err().to_string();
    assert!(
        why.contains("\"C9\"") && why.contains("POLL, C1, C1E, C6"),
        "{why}"
    );
    let err = knob.apply(&tree.sys, &tree.journal()).err().unwrap();
    assert!(err.is_unavailable(), "{err}");
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn check_says_why_and_changes_nothing() {
    let tree = Tree::new();
    let poll_only = parse_setting("cpuidle=poll-only").unwrap();

    fs::write(
        tree.sys
            .path("sys/devices/system/cpu/cpu2/cpuidle/state0/name"),
        "C0\n",
    )
    .unwrap();
    fs::write(
        tree.sys
            .path("sys/devices/system/cpu/cpu2/cpuidle/state0/desc"),
        "x\n",
    )
    .unwrap();
    let before = tree.snapshot();
    let why = poll_only.check(&tree.sys).unwrap_err().reason;
    assert!(why.starts_with("cpu2 has no polling idle state"), "{why}");
    assert!(why.ends_with("it has C0, C1, C1E, C6"), "{why}");
    assert_eq!(tree.snapshot(), before, "check wrote nothing");

    fs::write(
        tree.sys
            .path("sys/devices/system/cpu/cpuidle/current_driver"),
        "none\n",
    )
    .unwrap();
    let before = tree.snapshot();
    for setting in ["cpuidle=poll-only", "cpuidle=states:C1"] {
        let why = refused(&tree.sys, setting);
        assert_eq!(why, "no cpuidle driver", "{setting}");
    }
    // Without a driver, "every state enabled" already holds: nothing to write.
    parse_setting("cpuidle=all")
        .unwrap()
        .check(&tree.sys)
        .unwrap();
    assert_eq!(tree.snapshot(), before, "check wrote nothing");
}

#[test]
fn a_poll_snooze_state_counts_as_polling() {
    let tree = Tree::new();
    for cpu in 0..4 {
        let d = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state0");
        fs::write(tree.sys.path(&format!("{d}/name")), "snooze\n").unwrap();
        fs::write(tree.sys.path(&format!("{d}/desc")), "snooze\n").unwrap();
    }
    let guard = applied(&tree.sys, "cpuidle=poll-only", &tree.journal());
    assert!(!tree.disabled(1, 0) && tree.disabled(1, 1));
    drop(guard);
}

/// Makes cpu2's POLL `disable` file refuse writes while reading "1" (disabled), so that
/// poll-only fails after writing cpu0's and cpu1's files.
fn refuse_writes_on_cpu2_poll(tree: &Tree) {
    let path = tree.disable(2, 0);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root writes any plain file; a read-only sysctl refuses writes even to root
        // (proc_sys_permission), and reads as a non-zero number: "disabled".
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/proc/sys/kernel/cap_last_cap", &path).unwrap();
    } else {
        use std::os::unix::fs::PermissionsExt;
        fs::write(&path, "1\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    }
}

#[test]
fn a_write_refused_midway_restores_what_was_written() {
    let tree = Tree::new();
    refuse_writes_on_cpu2_poll(&tree);
    let before = tree.snapshot();
    let knob = parse_setting("cpuidle=poll-only").unwrap();
    let why = knob.check(&tree.sys).unwrap_err().to_string();
    assert!(
        why.contains("cpu2/cpuidle/state0/disable is not writable: needs root"),
        "{why}"
    );

    let err = knob
        .apply(&tree.sys, &tree.journal())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("cpu2/cpuidle/state0/disable"), "{err}");
    assert_eq!(tree.snapshot(), before);
    assert!(tree.journal().entries().unwrap().is_empty());
}

#[test]
fn a_panic_in_the_guards_scope_restores() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let journal = tree.journal();
    let result = std::panic::catch_unwind(|| {
        let _guard = applied(&tree.sys, "cpuidle=poll-only", &journal);
        assert!(tree.disabled(0, 1));
        panic!("workload blew up");
    });
    assert!(result.is_err());
    assert_eq!(tree.snapshot(), before);
    assert!(journal.entries().unwrap().is_empty());
}
