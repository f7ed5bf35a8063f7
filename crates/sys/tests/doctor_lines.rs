//! The doctor's machine lines on every fixture tree, as a person reads them: status, line,
//! detail and hint. They render the probes in `perflab_sys::probe`; a change to a probe or
//! to its wording shows here as a snapshot diff to read.

use perflab_sys::doctor;
use perflab_sys::SysRoot;

fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

#[test]
fn every_tree_reads_as_before() {
    // Some lines say whether a file is writable: as root, every file of a tree is.
    if !perflab_sys::probe::privileges::is_root() {
        eprintln!("skipped: the snapshots were taken as root");
        return;
    }
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.path()
                .is_dir()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    let mut text = String::new();
    for name in names {
        text.push_str(&format!("== {name}\n"));
        for c in doctor::probe(&SysRoot::at(fixtures().join(&name))) {
            text.push_str(&format!(
                "{:<7} {}: {}\n",
                c.status.as_str(),
                c.name,
                c.detail
            ));
            if let Some(hint) = &c.hint {
                text.push_str(&format!("        -> {hint}\n"));
            }
        }
    }
    // Paths in details name the checkout: the snapshot names the fixtures directory.
    let text = text.replace(&fixtures().display().to_string(), "<fixtures>");
    insta::assert_snapshot!(text);
}
