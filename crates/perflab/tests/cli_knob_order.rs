//! A variant's knobs are applied in the order they are written, and one knob may be set
//! twice: from a TOML table, from a list of pairs, and from `--variant`. Observed through
//! the `fake` knob (a file of a test tree) and `before=` hooks that log what they see.

use crate::common;

use common::{text, Lab};

/// A test tree with the fake knob's file at 0, and the log the hooks append to.
fn tree(lab: &Lab) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = lab.fixture_copy("kvm-2vcpu");
    std::fs::write(root.join("sys/kernel/perflab_fake"), "0\n").unwrap();
    (root, lab.dir.path().join("hooks.log"))
}

fn run(lab: &Lab, root: &std::path::Path, args: &[&str]) {
    let mut all = vec!["--sysroot", root.to_str().unwrap(), "run"];
    all.extend_from_slice(args);
    let o = lab.run(&all);
    assert!(o.status.success(), "{:?}", text(&o));
}

#[test]
fn knobs_apply_in_written_order_and_one_knob_may_be_set_twice() {
    let lab = Lab::new();
    let (root, log) = tree(&lab);
    let fake = root.join("sys/kernel/perflab_fake");
    // `fake` is written before `before`: the hook must see 7. In alphabetical order (the
    // old behaviour) `before` ran first and saw 0.
    let file = lab.dir.path().join("order.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "order"
workload = "null"
repetitions = 1
[[variants]]
name = "table"
knobs = {{ fake = "7", before = "echo table saw $(cat {fake}) >> {log}" }}
[[variants]]
name = "twice"
knobs = [
  ["before", "echo twice first >> {log}"],
  ["fake", "8"],
  ["before", "echo twice second saw $(cat {fake}) >> {log}"],
]
"#,
            fake = fake.display(),
            log = log.display()
        ),
    )
    .unwrap();
    run(&lab, &root, &[file.to_str().unwrap()]);
    let text_log = std::fs::read_to_string(&log).unwrap();
    let table: Vec<&str> = text_log
        .lines()
        .filter(|l| l.starts_with("table"))
        .collect();
    assert!(
        !table.is_empty() && table.iter().all(|l| *l == "table saw 7"),
        "{text_log}"
    );
    // Each application of `twice` runs its two hooks, first then second, around fake=8.
    let twice: Vec<&str> = text_log
        .lines()
        .filter(|l| l.starts_with("twice"))
        .collect();
    assert!(!twice.is_empty(), "{text_log}");
    for pair in twice.chunks(2) {
        assert_eq!(pair, ["twice first", "twice second saw 8"], "{text_log}");
    }
    // Restored in reverse: the file is back to what it was.
    assert_eq!(std::fs::read_to_string(&fake).unwrap(), "0\n");

    // The stored run keeps the order and the repetition (a resume applies the same).
    let doc = lab.export("1");
    let knobs = &doc["run"]["spec"]["variants"][1]["knobs"];
    assert_eq!(knobs[0][0], "before");
    assert_eq!(knobs[1], serde_json::json!(["fake", "8"]));
    assert_eq!(knobs[2][0], "before");

    // The same from the command line.
    std::fs::remove_file(&log).unwrap();
    let variant = format!(
        "cli:fake=9;before=echo cli saw $(cat {fake}) >> {log};before=echo cli again >> {log}",
        fake = fake.display(),
        log = log.display()
    );
    run(
        &lab,
        &root,
        &["--workload", "null", "--reps", "1", "--variant", &variant],
    );
    let text_log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text_log.lines().collect();
    assert!(!lines.is_empty(), "the hooks ran");
    for pair in lines.chunks(2) {
        assert_eq!(pair, ["cli saw 9", "cli again"], "{text_log}");
    }
}
