use crate::common;

use std::fs;

use common::{applied, orphan_entries, refused, Tree};
use perflab_knobs::{parse_setting, restore_pending, Action, KnobError, Settings};

fn settings(names: &[&str]) -> Settings {
    Settings::new(names.iter().map(|n| parse_setting(n).unwrap()).collect())
}

#[test]
fn knobs_apply_in_order_and_restore_in_reverse() {
    let tree = Tree::new();
    let before = tree.snapshot();
    // Restoring forward would end with fake=1's value instead of the original.
    let s = settings(&["fake=1", "fake=2", "cpuidle=poll-only"]);
    s.check(&tree.sys).unwrap();
    let applied = s.apply(&tree.sys, &tree.journal()).unwrap();
    assert_eq!(
        applied.names(),
        vec!["fake=1", "fake=2", "cpuidle=poll-only"]
    );
    assert_eq!(
        tree.sys.read_string("sys/kernel/perflab_fake").unwrap(),
        "2"
    );
    assert!(tree.disabled(2, 3));
    let facts = applied.facts();
    assert_eq!(facts.get("fake.value").map(String::as_str), Some("2"));
    let journal = tree.journal_path.to_string_lossy();
    assert_eq!(
        facts.get(perflab_knobs::JOURNAL_FACT).map(String::as_str),
        Some(&*journal)
    );
    // The cpuidle knob says which states the variant runs with (the trace monitor reads it).
    assert_eq!(
        facts.get("cpuidle.mode").map(String::as_str),
        Some("poll-only")
    );
    assert_eq!(facts.len(), 3, "{facts:?}");
    applied.restore().unwrap();
    assert_eq!(tree.snapshot(), before);
    assert!(tree.journal().entries().unwrap().is_empty());

    drop(s.apply(&tree.sys, &tree.journal()).unwrap());
    assert_eq!(tree.snapshot(), before, "drop restores too");
}

#[test]
fn a_later_knob_failing_undoes_the_earlier_ones() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let s = settings(&["fake=1", "cpuidle=poll-only", "cpuidle=states:C7"]);
    let err = s.apply(&tree.sys, &tree.journal()).err().unwrap();
    assert!(matches!(err, KnobError::Unavailable { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("cpuidle=states:C7 is unavailable: no idle state named \"C7\""),
        "{msg}"
    );
    assert_eq!(tree.snapshot(), before);
    assert!(tree.journal().entries().unwrap().is_empty());
    let why = s.check(&tree.sys).unwrap_err().reason;
    assert!(why.starts_with("cpuidle=states:C7: "), "{why}");
}

#[test]
fn a_panic_while_a_variant_is_applied_restores() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let s = settings(&["fake=9", "cpuidle=all"]);
    let journal = tree.journal();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _applied = s.apply(&tree.sys, &journal).unwrap();
        panic!("measurement failed");
    }));
    assert!(caught.is_err());
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn fake_is_unavailable_where_its_file_does_not_exist() {
    let tree = Tree::new();
    fs::remove_file(tree.sys.path("sys/kernel/perflab_fake")).unwrap();
    let why = refused(&tree.sys, "fake=1");
    assert!(why.contains("perflab_fake does not exist"), "{why}");
    let host = perflab_sys::SysRoot::host();
    assert!(parse_setting("fake=1").unwrap().check(&host).is_err());
}

#[test]
fn pmqos_on_a_test_tree_changes_the_stand_in_and_puts_it_back() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let knob = parse_setting("pmqos=20").unwrap();
    knob.check(&tree.sys).unwrap();
    let guard = knob.apply(&tree.sys, &tree.journal()).unwrap();
    assert_eq!(
        fs::read(tree.sys.path("dev/cpu_dma_latency")).unwrap(),
        20i32.to_ne_bytes()
    );
    // A regular file keeps what is written (the kernel's device forgets it on close), so
    // its bytes are journaled like any attribute's.
    let entries = tree.journal().entries().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].knob, "pmqos=20");
    assert!(matches!(
        &entries[0].action,
        Action::Write { original } if original.as_bytes() == 2_000_000_000i32.to_ne_bytes()
    ));
    guard.restore().unwrap();
    assert!(tree.journal().entries().unwrap().is_empty());
    assert_eq!(tree.snapshot(), before);

    drop(knob.apply(&tree.sys, &tree.journal()).unwrap());
    assert_eq!(tree.snapshot(), before, "drop restores too");
}

#[test]
fn pmqos_on_a_test_tree_is_put_back_by_restore_after_a_kill() {
    let tree = Tree::new();
    let before = tree.snapshot();
    let guard = applied(&tree.sys, "pmqos=0", &tree.journal());
    std::mem::forget(guard);
    orphan_entries(&tree.journal_path);
    let report = restore_pending(&tree.journal_path).unwrap();
    assert_eq!(report.restored.len(), 1, "{:?}", report.lines());
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn a_dead_owners_pmqos_hold_is_reported_released() {
    // The hold on the kernel's device, as the knob journals it there: nothing to write
    // back, since the kernel dropped the request with its owner's descriptor.
    let tree = Tree::new();
    tree.journal()
        .save_hold(
            &tree.sys,
            "dev/cpu_dma_latency",
            "pmqos=0",
            "a CPU latency limit of 0 µs",
        )
        .unwrap();
    orphan_entries(&tree.journal_path);
    let report = restore_pending(&tree.journal_path).unwrap();
    assert_eq!((report.released.len(), report.restored.len()), (1, 0));
    assert!(
        report.lines()[0].starts_with("released pmqos=0"),
        "{:?}",
        report.lines()
    );
    assert!(tree.journal().entries().unwrap().is_empty());
}

#[test]
fn pmqos_is_unavailable_without_the_device() {
    let tree = Tree::new();
    fs::remove_file(tree.sys.path("dev/cpu_dma_latency")).unwrap();
    let why = refused(&tree.sys, "pmqos=0");
    assert!(why.contains("cpu_dma_latency is missing"), "{why}");
    let err = parse_setting("pmqos=0")
        .unwrap()
        .apply(&tree.sys, &tree.journal())
        .err()
        .unwrap();
    assert!(err.to_string().contains("cpu_dma_latency"), "{err}");
    assert!(
        tree.journal().entries().unwrap().is_empty(),
        "the hold was forgotten again"
    );
}
