//! The huge page knobs (`hugepages`, `thp`, `thp_defrag`) on a writable copy of the
//! kvm-2vcpu fixture: its 2M and 1G hugetlb pools, its THP files and its /proc/meminfo.
//!
//! The THP files show `always [madvise] never` but take the bare word, and a test tree
//! keeps whatever was written last. So after a restore the fake file holds `madvise`,
//! which is what the kernel would then show as `always [madvise] never`: comparisons
//! go through [`as_kernel_shows`], and separate asserts check the raw word written back.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::{applied, orphan_entries, refused, snapshot};
use perflab_knobs::{parse_setting, restore_pending, Action, KnobError, Original};
use perflab_sys::SysRoot;

const POOL_2M: &str = "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
const POOL_1G: &str = "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages";
const ENABLED: &str = "sys/kernel/mm/transparent_hugepage/enabled";
const DEFRAG: &str = "sys/kernel/mm/transparent_hugepage/defrag";

type Vm = common::Parts;

fn vm() -> Vm {
    common::kvm_parts(common::MEMORY)
}

type Snapshot = BTreeMap<PathBuf, Vec<u8>>;

/// The tree as the kernel would show it: a THP file holding a bare word (what was last
/// written) reads as the option list of `shown` with that word bracketed.
fn as_kernel_shows(sys: &SysRoot, shown: &Snapshot) -> Snapshot {
    let mut now = snapshot(sys);
    for rel in [ENABLED, DEFRAG] {
        let rel = PathBuf::from(rel);
        let written = String::from_utf8(now[&rel].clone()).unwrap();
        let written = written.trim();
        if written.contains('[') {
            continue;
        }
        let options = String::from_utf8(shown[&rel].clone()).unwrap();
        let listed: Vec<String> = options
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
            .map(|w| {
                if w == written {
                    format!("[{w}]")
                } else {
                    w.to_string()
                }
            })
            .collect();
        assert!(
            listed.iter().any(|w| w.starts_with('[')),
            "{written:?} is not among {options:?}: the kernel would have refused it"
        );
        now.insert(rel, format!("{}\n", listed.join(" ")).into_bytes());
    }
    now
}

fn read(sys: &SysRoot, rel: &str) -> String {
    fs::read_to_string(sys.path(rel)).unwrap()
}

fn originals(journal: &Path) -> Vec<(String, String, Original)> {
    perflab_knobs::journal::entries(journal)
        .unwrap()
        .into_iter()
        .map(|e| match e.action {
            Action::Write { original } => (e.knob, e.path, original),
            other => panic!("{other:?} from {}", e.knob),
        })
        .collect()
}

fn text(s: &str) -> Original {
    Original::Text(s.into())
}

#[test]
fn hugepages_grow_the_pool_by_count_and_restore_every_byte() {
    let vm = vm();
    // Pages other users hold stay theirs: the knob adds to what the pool has.
    fs::write(vm.sys.path(POOL_2M), "6\n").unwrap();
    let before = snapshot(&vm.sys);
    for (setting, rel, want) in [
        ("hugepages=2M:512", POOL_2M, "518"),
        ("hugepages=2048K:4", POOL_2M, "10"),
        ("hugepages=1G:2", POOL_1G, "2"),
        ("hugepages=1048576K:3", POOL_1G, "3"),
    ] {
        let knob = parse_setting(setting).unwrap();
        knob.check(&vm.sys).unwrap();
        let guard = knob.apply(&vm.sys, &vm.journal).unwrap();
        assert_eq!(read(&vm.sys, rel), want, "{setting}");
        let original = if rel == POOL_2M { "6\n" } else { "0\n" };
        assert_eq!(
            originals(vm.journal.path()),
            vec![(knob.name(), rel.to_string(), text(original))],
            "{setting}: journaled before the change"
        );
        guard.restore().unwrap();
        assert_eq!(snapshot(&vm.sys), before, "{setting} restored");
        assert!(vm.journal.entries().unwrap().is_empty());
    }
    // A count of 0 (what `auto` gives a workload that needs no memory) changes nothing.
    let guard = applied(&vm.sys, "hugepages=2M:0", &vm.journal);
    assert!(vm.journal.entries().unwrap().is_empty());
    drop(guard);
    assert_eq!(snapshot(&vm.sys), before);
}

#[test]
fn thp_writes_the_bare_word_and_journals_the_selected_one() {
    let vm = vm();
    let before = snapshot(&vm.sys);
    for (setting, rel, original) in [
        ("thp=never", ENABLED, "madvise"),
        ("thp=always", ENABLED, "madvise"),
        ("thp_defrag=defer+madvise", DEFRAG, "madvise"),
        ("thp_defrag=never", DEFRAG, "madvise"),
    ] {
        let knob = parse_setting(setting).unwrap();
        knob.check(&vm.sys).unwrap();
        let guard = knob.apply(&vm.sys, &vm.journal).unwrap();
        let word = setting.split_once('=').unwrap().1;
        assert_eq!(read(&vm.sys, rel), word, "{setting}");
        assert_eq!(
            originals(vm.journal.path()),
            vec![(knob.name(), rel.to_string(), text(original))],
            "{setting}: the word the kernel takes back, not the list it shows"
        );
        guard.restore().unwrap();
        assert_eq!(
            read(&vm.sys, rel),
            original,
            "{setting}: wrote back the word"
        );
        assert_eq!(as_kernel_shows(&vm.sys, &before), before, "{setting}");
        assert!(vm.journal.entries().unwrap().is_empty());
        // The next setting starts from what the kernel would show.
        fs::write(vm.sys.path(rel), &before[Path::new(rel)]).unwrap();
    }
}

#[test]
fn thp_already_in_the_mode_asked_for_writes_and_journals_nothing() {
    let vm = vm();
    let before = snapshot(&vm.sys);
    let guard = applied(&vm.sys, "thp=madvise", &vm.journal);
    assert!(vm.journal.entries().unwrap().is_empty());
    guard.restore().unwrap();
    assert_eq!(
        snapshot(&vm.sys),
        before,
        "byte for byte: nothing was written"
    );
}

#[test]
fn restore_pending_after_a_crash_brings_back_the_pools_and_the_thp_words() {
    let vm = vm();
    let before = snapshot(&vm.sys);
    let settings = perflab_knobs::Settings::parse(&[
        "hugepages=2M:64",
        "hugepages=1G:1",
        "thp=never",
        "thp_defrag=defer",
    ])
    .unwrap();
    settings.check(&vm.sys).unwrap();
    let applied = settings.apply(&vm.sys, &vm.journal).unwrap();
    assert_eq!(
        (read(&vm.sys, POOL_2M), read(&vm.sys, POOL_1G)),
        ("64".to_string(), "1".to_string())
    );
    // A SIGKILL: no destructor runs; the journal is all that is left.
    std::mem::forget(applied);
    let journaled: Vec<(String, Original)> = originals(vm.journal.path())
        .into_iter()
        .map(|(_, path, original)| (path, original))
        .collect();
    assert_eq!(
        journaled,
        vec![
            (POOL_2M.into(), text("0\n")),
            (POOL_1G.into(), text("0\n")),
            (ENABLED.into(), text("madvise")),
            (DEFRAG.into(), text("madvise")),
        ]
    );
    orphan_entries(vm.journal.path());
    let report = restore_pending(vm.journal.path()).unwrap();
    assert!(report.is_clean(), "{:?}", report.lines());
    assert_eq!(report.restored.len(), 4);
    assert_eq!(read(&vm.sys, ENABLED), "madvise");
    assert_eq!(read(&vm.sys, DEFRAG), "madvise");
    assert_eq!(as_kernel_shows(&vm.sys, &before), before);
    assert!(vm.journal.entries().unwrap().is_empty());
}

#[test]
fn a_page_size_without_a_pool_is_unavailable_naming_the_pools() {
    let vm = vm();
    fs::remove_dir_all(vm.sys.path("sys/kernel/mm/hugepages/hugepages-1048576kB")).unwrap();
    let before = snapshot(&vm.sys);
    let knob = parse_setting("hugepages=1G:2").unwrap();
    let why = knob.check(&vm.sys).unwrap_err();
    assert_eq!(why.reason, "no 1048576kB huge page pool on this machine");
    let hint = why.hint.unwrap();
    assert!(hint.starts_with("its pools are 2048kB (2M);"), "{hint}");
    let why = refused(&vm.sys, "hugepages=4M:1");
    assert_eq!(why, "no 4096kB huge page pool on this machine");
    let err = knob.apply(&vm.sys, &vm.journal).err().unwrap();
    assert!(err.is_unavailable(), "{err}");
    assert_eq!(snapshot(&vm.sys), before);
    assert!(vm.journal.entries().unwrap().is_empty());

    fs::remove_dir_all(vm.sys.path("sys/kernel/mm/hugepages")).unwrap();
    let hint = knob.check(&vm.sys).unwrap_err().hint.unwrap();
    assert!(hint.contains("no hugetlb pools"), "{hint}");
}

#[test]
fn more_pages_than_memory_available_are_unavailable_with_the_figures() {
    let vm = vm();
    let meminfo = vm.sys.path("proc/meminfo");
    let text = fs::read_to_string(&meminfo).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("MemAvailable:") {
                "MemAvailable:     1000000 kB".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    fs::write(&meminfo, text).unwrap();
    // 488 pages of 2M are 976 MiB, within the 1000000 kB (976.6 MiB) available; 489 are not.
    parse_setting("hugepages=2M:488")
        .unwrap()
        .check(&vm.sys)
        .unwrap();
    let why = parse_setting("hugepages=2M:489")
        .unwrap()
        .check(&vm.sys)
        .unwrap_err();
    assert_eq!(
        why.reason,
        "489 pages of 2M need 978 MiB, more than the 976 MiB MemAvailable"
    );
    assert!(why.hint.unwrap().contains("fewer pages"));
    let why = refused(&vm.sys, "hugepages=1G:1");
    assert!(why.contains("need 1024 MiB"), "{why}");

    // Without meminfo (a partial tree) the kernel's own refusal is the check.
    fs::remove_file(&meminfo).unwrap();
    parse_setting("hugepages=1G:1")
        .unwrap()
        .check(&vm.sys)
        .unwrap();
}

/// Makes a file refuse writes even from root: a read-only sysctl refuses writes to root too
/// (proc_sys_permission), where a mode of 0444 would not.
fn refuse_writes(sys: &SysRoot, rel: &str) {
    let path = sys.path(rel);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/proc/sys/kernel/cap_last_cap", &path).unwrap();
    } else {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    }
}

#[test]
fn unwritable_files_need_root() {
    let vm = vm();
    refuse_writes(&vm.sys, POOL_2M);
    refuse_writes(&vm.sys, ENABLED);
    for (setting, file) in [
        ("hugepages=2M:1", "hugepages-2048kB/nr_hugepages"),
        ("thp=never", "transparent_hugepage/enabled"),
    ] {
        let why = parse_setting(setting).unwrap().check(&vm.sys).unwrap_err();
        assert!(
            why.reason
                .ends_with(&format!("{file} is not writable: needs root")),
            "{setting}: {}",
            why.reason
        );
        assert_eq!(why.hint.as_deref(), Some("run perflab as root"));
    }
}

#[test]
fn thp_words_the_kernel_does_not_offer_are_unavailable() {
    let vm = vm();
    // A kernel older than 4.6 has no defer modes.
    fs::write(vm.sys.path(DEFRAG), "always [madvise] never\n").unwrap();
    let why = refused(&vm.sys, "thp_defrag=defer+madvise");
    assert!(
        why.ends_with(
            "transparent_hugepage/defrag offers always, madvise, never, not defer+madvise"
        ),
        "{why}"
    );
    parse_setting("thp_defrag=never")
        .unwrap()
        .check(&vm.sys)
        .unwrap();

    fs::write(vm.sys.path(ENABLED), "garbage [[x\n").unwrap();
    let why = refused(&vm.sys, "thp=never");
    assert!(why.contains("transparent_hugepage/enabled"), "{why}");
    let err = parse_setting("thp=never")
        .unwrap()
        .apply(&vm.sys, &vm.journal)
        .err()
        .unwrap();
    assert!(matches!(err, KnobError::Sys(_)), "{err}");
    assert!(vm.journal.entries().unwrap().is_empty());

    fs::remove_file(vm.sys.path(ENABLED)).unwrap();
    let why = parse_setting("thp=never")
        .unwrap()
        .check(&vm.sys)
        .unwrap_err();
    assert!(
        why.reason
            .ends_with("enabled is missing: the kernel has no transparent huge pages"),
        "{}",
        why.reason
    );
    assert!(why.hint.unwrap().contains("CONFIG_TRANSPARENT_HUGEPAGE"));
}
