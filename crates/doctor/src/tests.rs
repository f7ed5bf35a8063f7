use std::path::PathBuf;

use perflab_core::{Kind, Need, Needs, ReportHints, RowHints};

use super::*;

fn fixture(name: &str) -> SysRoot {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    SysRoot::at(dir.join(name))
}

#[test]
fn every_need_is_answered_by_a_line_that_names_it() {
    // A tree has every line but the live ones (vm guest, vm accelerator, vhost-net): those
    // come from `vm::checks`, which names its needs.
    let tree: Vec<Need> = examine(&fixture("kvm-2vcpu"), &[])
        .iter()
        .filter_map(|f| f.check.need)
        .collect();
    for need in Need::ALL {
        let lines =
            tree.iter().filter(|n| **n == need).count() + usize::from(vm::NEEDS.contains(&need));
        assert_eq!(lines, 1, "{need:?} is answered by {lines} lines");
    }
}

#[test]
fn a_missing_need_names_the_plugins_it_blocks() {
    // The KVM guest fixture has no PMU: hardware events are missing there.
    let findings = examine(&fixture("kvm-2vcpu"), &plugins());
    let names: Vec<&str> = findings.iter().map(|f| f.check.name.as_str()).collect();
    let mut want = perflab_sys::doctor::CHECK_NAMES.to_vec();
    want.push(gpu::NEED.check());
    assert_eq!(
        names, want,
        "a fixture tree has no vm lines; its gpu line reads sysfs"
    );
    let cpuidle = findings.iter().find(|f| f.check.name == "cpuidle").unwrap();
    assert_eq!(cpuidle.needed_by, ["monitor cpuidle", "knob cpuidle"]);
    let dma = findings.iter().find(|f| f.check.name == "dmatest").unwrap();
    assert_eq!(dma.needed_by, ["workload dmatest"]);
    assert_eq!(dma.check.status, Status::Missing, "{:?}", dma.check);
    let text = render_text(&findings);
    assert!(text.contains("blocks: workload dmatest\n"), "{text}");
    let topo = findings
        .iter()
        .find(|f| f.check.name == "cpu topology")
        .unwrap();
    assert!(
        topo.needed_by.is_empty(),
        "a machine fact, needed by no plug-in"
    );
}

#[test]
fn plugins_are_attributed_from_their_descriptors_alone() {
    static PROBE: Descriptor = Descriptor {
        kind: Kind::Monitor,
        name: "vmstat",
        help: "fixture",
        params: &[],
        needs: Needs {
            all: &[Need::Cpuidle],
            some: &[Need::Dmatest],
        },
        report: ReportHints::Rows(RowHints::PLAIN),
    };
    let findings = examine(&fixture("kvm-2vcpu"), &[&PROBE]);
    let by: Vec<(&str, &[String], &[String])> = findings
        .iter()
        .filter(|f| !f.needed_by.is_empty() || !f.partly_needed_by.is_empty())
        .map(|f| {
            let n = f.check.name.as_str();
            (n, f.needed_by.as_slice(), f.partly_needed_by.as_slice())
        })
        .collect();
    let want = vec!["monitor vmstat".to_string()];
    assert_eq!(
        by,
        [
            ("cpuidle", want.as_slice(), &[][..]),
            ("dmatest", &[][..], want.as_slice())
        ]
    );
}

#[test]
fn text_says_how_to_enable_and_what_is_blocked() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    let f = |status, needed_by: &[&str], partly: &[&str]| Finding {
        check: Check {
            name: "dmatest".into(),
            status,
            detail: "no DMA engine".into(),
            hint: Some("modprobe dmatest".into()),
            need: Some(Need::Dmatest),
        },
        needed_by: names(needed_by),
        partly_needed_by: names(partly),
    };
    let text = render_text(&[
        f(
            Status::Missing,
            &["workload dmatest", "knob a", "knob b"],
            &["knob c"],
        ),
        f(Status::Partial, &["monitor m"], &["knob c"]),
        f(Status::Ok, &["workload dmatest"], &[]),
    ]);
    assert_eq!(
        text,
        "missing  dmatest  no DMA engine\n\
         \x20        \x20        -> modprobe dmatest\n\
         \x20        \x20        blocks: workload dmatest; knobs a, b\n\
         \x20        \x20        limits: knob c\n\
         partial  dmatest  no DMA engine\n\
         \x20        \x20        -> modprobe dmatest\n\
         \x20        \x20        needed by: monitor m; knob c\n\
         ok       dmatest  no DMA engine\n"
    );
}

#[test]
fn json_keeps_the_check_fields_and_adds_needed_by() {
    let f = Finding {
        check: Check::ok(Need::Cpuidle, "driver haltpoll"),
        needed_by: vec!["knob cpuidle".into()],
        partly_needed_by: vec![],
    };
    let v = serde_json::to_value(&f).unwrap();
    assert_eq!(v["name"], "cpuidle");
    assert_eq!(v["status"], "ok");
    assert_eq!(v["needed_by"][0], "knob cpuidle");
}
