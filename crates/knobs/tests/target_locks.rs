//! Two perflab processes with different journals changing one target: the second is
//! refused, naming the holder and the target, and the target ends as it started. Before
//! the system-wide locks, each journaled the other's temporary value as its original and
//! THP stayed at `never` after both had restored.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use common::{applied, Tree};
use perflab_knobs::files::read_choice;
use perflab_knobs::target_lock::{lock_file, target_key};
use perflab_knobs::{journal, parse_setting, restore_pending, Journal, KnobError};
use perflab_sys::SysRoot;

const THP: &str = "sys/kernel/mm/transparent_hugepage/enabled";

/// The fake tree with a THP attribute set to `madvise`, as a kernel shows it.
fn thp_tree() -> Tree {
    let tree = Tree::new();
    let path = tree.sys.path(THP);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, "always [madvise] never\n").unwrap();
    tree
}

fn thp_mode(sys: &SysRoot) -> String {
    read_choice(sys, THP).unwrap().selected
}

fn refusal(sys: &SysRoot, setting: &str, journal: &Journal) -> KnobError {
    parse_setting(setting)
        .unwrap()
        .apply(sys, journal)
        .err()
        .unwrap_or_else(|| panic!("{setting} was applied although another holder has it"))
}

#[test]
fn a_second_journal_is_refused_what_the_first_holds_until_it_is_dropped() {
    let tree = thp_tree();
    let first = Journal::open(tree.dir.path().join("first.json")).unwrap();
    let second = Journal::open(tree.dir.path().join("second.json")).unwrap();
    let guard = applied(&tree.sys, "thp=never", &first);
    assert_eq!(thp_mode(&tree.sys), "never");

    let err = refusal(&tree.sys, "thp=always", &second);
    let msg = err.to_string();
    assert!(
        matches!(err, KnobError::InUse { .. }) && err.is_busy() && err.is_in_use(),
        "{msg}"
    );
    let target = target_key(&tree.sys, THP);
    assert!(
        msg.starts_with(&format!(
            "{}: in use by perflab pid {}",
            target.display(),
            std::process::id()
        )),
        "{msg}"
    );
    assert!(
        // What to do next is the caller's to say (it knows the database a resume needs).
        msg.contains("for thp=never") && msg.ends_with("temporary value as the original"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    assert_eq!(
        thp_mode(&tree.sys),
        "never",
        "the refused knob changed nothing"
    );
    assert!(second
        .entries()
        .unwrap()
        .iter()
        .all(|e| e.knob != "thp=always"));

    guard.restore().unwrap();
    assert_eq!(thp_mode(&tree.sys), "madvise");
    // The first handle keeps the target until it is dropped: a run owns what it changed
    // until it ends, also between its variants.
    refusal(&tree.sys, "thp=always", &second);
    drop(first);
    let guard = applied(&tree.sys, "thp=always", &second);
    assert_eq!(thp_mode(&tree.sys), "always");
    guard.restore().unwrap();
    assert_eq!(thp_mode(&tree.sys), "madvise");
    drop(second);
    assert!(
        !lock_file(&target).unwrap().exists(),
        "a clean release removes the lock file"
    );
}

/// A holder that finishes while the second asks is still a holder: the second is refused
/// at once. It used to wait up to 2 s and, the first gone by then, go ahead (with a
/// fingerprint that had read the first's temporary value).
#[test]
fn a_holder_about_to_finish_is_refused_at_once_not_waited_for() {
    let tree = thp_tree();
    let first = Journal::open(tree.dir.path().join("first.json")).unwrap();
    let second = Journal::open(tree.dir.path().join("second.json")).unwrap();
    let guard = applied(&tree.sys, "thp=never", &first);
    let sys = tree.sys.clone();
    let asking = std::thread::spawn(move || {
        parse_setting("thp=always")
            .unwrap()
            .apply(&sys, &second)
            .map(drop)
            .map_err(|e| e.to_string())
    });
    // The first finishes well within the 2 s the second used to wait.
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop((guard, first));
    let answer = asking.join().unwrap();
    assert!(
        answer
            .as_ref()
            .is_err_and(|e| e.contains("in use by perflab pid")),
        "the second went ahead after the first finished: {answer:?}"
    );
    assert_eq!(thp_mode(&tree.sys), "madvise");
}

/// While a holder has THP at `never`, a reader describing the machine gets `madvise`,
/// the value the holder journaled; once the holder restored it, the file's own.
#[test]
fn the_machine_value_of_a_held_target_is_its_journaled_original() {
    use perflab_knobs::target_lock::{journaled_original, machine_value};
    let tree = thp_tree();
    let first = Journal::open(tree.dir.path().join("first.json")).unwrap();
    assert_eq!(journaled_original(&tree.sys, THP), None);
    let guard = applied(&tree.sys, "thp=never", &first);
    assert_eq!(thp_mode(&tree.sys), "never");
    assert_eq!(
        journaled_original(&tree.sys, THP).as_deref(),
        Some(&b"madvise"[..])
    );
    assert_eq!(machine_value(&tree.sys, THP), "madvise");
    drop((guard, first));
    assert_eq!(journaled_original(&tree.sys, THP), None);
    // A test tree keeps what was written back: the choice's written form.
    assert_eq!(machine_value(&tree.sys, THP), "madvise");
}

#[test]
fn a_target_already_at_the_value_is_claimed_too() {
    // The first run writes nothing (THP is madvise already) but measures relying on it.
    let tree = thp_tree();
    let first = Journal::open(tree.dir.path().join("first.json")).unwrap();
    let second = Journal::open(tree.dir.path().join("second.json")).unwrap();
    let guard = applied(&tree.sys, "thp=madvise", &first);
    assert!(first.entries().unwrap().is_empty());
    let msg = refusal(&tree.sys, "thp=never", &second).to_string();
    assert!(msg.contains("for thp=madvise"), "{msg}");
    assert_eq!(thp_mode(&tree.sys), "madvise");
    drop((guard, first));
    drop(applied(&tree.sys, "thp=never", &second));
}

#[test]
fn one_handle_may_change_a_target_twice() {
    // Knobs of one variant (or of one run) may change one file one after the other; they
    // restore in reverse, so the oldest value comes back.
    let tree = thp_tree();
    let journal = tree.journal();
    let a = applied(&tree.sys, "thp=never", &journal);
    let b = applied(&tree.sys, "thp=always", &journal.clone());
    b.restore().unwrap();
    a.restore().unwrap();
    assert_eq!(thp_mode(&tree.sys), "madvise");
}

#[test]
fn every_kind_of_target_is_claimed() {
    let tree = thp_tree();
    let pool = tree
        .sys
        .path("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
    fs::create_dir_all(pool.parent().unwrap()).unwrap();
    fs::write(&pool, "6\n").unwrap();
    let first = Journal::open(tree.dir.path().join("first.json")).unwrap();
    let second = Journal::open(tree.dir.path().join("second.json")).unwrap();
    let before = tree.snapshot();
    for (setting, other) in [
        ("hugepages=2M:4", "hugepages=2M:8"),
        ("cpuidle=poll-only", "cpuidle=all"),
        ("pmqos=10", "pmqos=20"),
        ("fake=1", "fake=2"),
    ] {
        let guard = applied(&tree.sys, setting, &first);
        let err = refusal(&tree.sys, other, &second);
        assert!(matches!(err, KnobError::InUse { .. }), "{other}: {err}");
        assert!(err.to_string().contains(&format!("for {setting}")), "{err}");
        guard.restore().unwrap();
    }
    assert_eq!(tree.snapshot(), before);
    assert!(second.entries().unwrap().is_empty());
}

const CHILD_ROOT: &str = "PERFLAB_LOCK_TEST_ROOT";
const CHILD_JOURNAL: &str = "PERFLAB_LOCK_TEST_JOURNAL";

/// Child-process helper of the tests below, not a test: applies thp=never on the tree
/// with its own journal, says READY, and restores once its stdin closes.
#[test]
#[ignore = "child-process helper of the two-process target lock tests"]
fn child_holds_thp_never() {
    let (Some(root), Some(journal)) = (
        std::env::var_os(CHILD_ROOT),
        std::env::var_os(CHILD_JOURNAL),
    ) else {
        return;
    };
    let sys = SysRoot::at(root);
    let journal = Journal::open(PathBuf::from(journal)).unwrap();
    let guard = applied(&sys, "thp=never", &journal);
    println!("READY");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    guard.restore().unwrap();
}

/// Starts the helper holding thp=never on `tree` with journal `journal`; returns once it
/// holds it.
fn holder(tree: &Tree, journal: &Path) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "target_locks::child_holds_thp_never",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ROOT, tree.sys.root())
        .env(CHILD_JOURNAL, journal)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 && !line.contains("READY") {
        line.clear();
    }
    assert!(line.contains("READY"), "the helper never held THP");
    (child, out)
}

#[test]
fn a_second_process_is_refused_naming_the_first_and_thp_ends_as_it_started() {
    let tree = thp_tree();
    let (mut child, _out) = holder(&tree, &tree.dir.path().join("child.json"));
    let mine = Journal::open(tree.dir.path().join("mine.json")).unwrap();
    let msg = refusal(&tree.sys, "thp=never", &mine).to_string();
    assert!(
        msg.contains(&format!("in use by perflab pid {} (`", child.id())),
        "{msg}"
    );
    assert!(
        msg.contains("child_holds_thp_never") && msg.contains("for thp=never"),
        "{msg}"
    );
    assert!(msg.contains("transparent_hugepage/enabled"), "{msg}");
    // Closing its stdin lets the helper restore and exit.
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert_eq!(thp_mode(&tree.sys), "madvise");
    let guard = applied(&tree.sys, "thp=never", &mine);
    guard.restore().unwrap();
    assert_eq!(thp_mode(&tree.sys), "madvise");
    assert!(mine.entries().unwrap().is_empty());
}

#[test]
fn after_a_kill_the_target_is_refused_until_perflab_restore_puts_it_back() {
    let tree = thp_tree();
    let child_journal = tree.dir.path().join("child.json");
    let (mut child, _out) = holder(&tree, &child_journal);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(thp_mode(&tree.sys), "never", "killed before restoring");

    // The kernel dropped the lock, but the killed holder's journal still has the original:
    // taking `never` for the original now would make it permanent.
    let mine = Journal::open(tree.dir.path().join("mine.json")).unwrap();
    let err = refusal(&tree.sys, "thp=always", &mine);
    let msg = err.to_string();
    assert!(err.is_busy(), "{msg}");
    assert!(
        msg.contains("ended without putting the original back"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            "run `perflab restore --journal {}` first",
            child_journal.display()
        )),
        "{msg}"
    );
    assert_eq!(thp_mode(&tree.sys), "never");

    let report = restore_pending(&child_journal).unwrap();
    assert!(
        report.is_clean() && report.restored.len() == 1,
        "{:?}",
        report.lines()
    );
    assert_eq!(thp_mode(&tree.sys), "madvise");
    assert!(journal::entries(&child_journal).unwrap().is_empty());
    let target = target_key(&tree.sys, THP);
    assert!(
        !lock_file(&target).unwrap().exists(),
        "restore clears the killed holder's record"
    );

    let guard = applied(&tree.sys, "thp=always", &mine);
    guard.restore().unwrap();
    assert_eq!(thp_mode(&tree.sys), "madvise");
}
