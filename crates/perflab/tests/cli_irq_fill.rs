//! End-to-end on this machine: the irq-fill preset (seed 003) compares the same
//! timer-paced fill under two interrupt settings (device interrupts as they are, and
//! steered off the fill's CPU), never a paced fill against an unpaced one; the interrupts
//! monitor's LOC delta on CPU 0 rises by about one per timer wait; `run` and `show` print
//! the interrupts on the fill's CPU; and the IRQ affinities are restored.

use crate::common;

use common::{run_id, text, Lab};
use serde_json::Value;

fn metric(m: &Value, name: &str) -> Option<f64> {
    m["output"]["metrics"]
        .as_array()?
        .iter()
        .find(|x| x["name"] == name)?["value"]
        .as_f64()
}

/// The interrupts monitor's delta of row `key` on `cpu`.
fn irq_delta(m: &Value, key: &str, cpu: u64) -> Option<f64> {
    m["telemetry"]
        .as_array()?
        .iter()
        .find(|t| t["source"] == "interrupts" && t["key"] == key && t["cpu"] == cpu)?["value"]
        .as_f64()
}

fn notes(m: &Value) -> String {
    m["output"]["notes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Every IRQ's affinity list, to see that the study left them as it found them.
fn affinities() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir("/proc/irq")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let list = std::fs::read_to_string(e.path().join("smp_affinity_list")).ok()?;
                    Some((e.file_name().to_string_lossy().into_owned(), list))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn irq_fill_compares_one_paced_fill_under_two_interrupt_settings_never_paced_vs_unpaced() {
    let _host = crate::common::host_settings();
    let interrupts = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    // LOC is x86's local timer row; elsewhere the row differs (arch_timer) and this test
    // has nothing to look up.
    if !interrupts
        .lines()
        .any(|l| l.trim_start().starts_with("LOC:"))
    {
        perflab_testkit::skip("x86-loc", "no LOC row in /proc/interrupts");
        return;
    }
    let lab = Lab::new();
    let before = affinities();
    let o = lab.run(&["run", "irq-fill", "--quick"]);
    let (out, err) = text(&o);
    // Where no device interrupt is handled on the fill's CPU 0 (this KVM guest), irqs-away
    // has nothing to move: the comparison is void, exit 9, and says so (issue 32: it read
    // "about 1,100 repetitions would decide it").
    match o.status.code() {
        Some(9) => assert!(
            out.contains("void: irqs-away vs base: no interrupt moved: no device interrupt")
                && err.contains("1 of 1 comparisons tested nothing"),
            "{out}\n{err}"
        ),
        code => assert_eq!(code, Some(0), "{out}\n{err}"),
    }
    assert_eq!(affinities(), before, "IRQ affinities were left changed");
    let id = run_id(&err);
    let doc = lab.export_named(&id);
    let ms = doc["measurements"].as_array().unwrap();
    let measured: std::collections::BTreeSet<&str> =
        ms.iter().map(|m| m["variant"].as_str().unwrap()).collect();
    // Both variants are the same paced fill: no unpaced fill is measured, so no verdict
    // can set a paced fill against an unpaced one.
    for m in ms {
        assert_eq!(m["params"]["irq"], "timer", "{m}");
    }
    assert!(
        !out.contains("cpu-fill") && !out.contains("timer-irq"),
        "{out}"
    );
    if measured.len() == 2 {
        assert!(out.contains("A = base, B = irqs-away"), "{out}");
    } else {
        // Without root the change cannot be applied: said, and only base measured.
        assert!(err.contains("variant irqs-away is unavailable"), "{err}");
    }
    let mut timer = 0;
    for m in ms.iter().filter(|m| m["status"]["status"] == "ok") {
        timer += 1;
        let loc = irq_delta(m, "LOC", 0).expect("a LOC delta on CPU 0");
        let waits = metric(m, "timer_waits").expect("timer_waits");
        assert!(waits > 100.0, "{waits} waits in 0.3 s of 50 µs periods");
        // Each wait ends with an hrtimer interrupt on CPU 0 (two may share one interrupt
        // where the tick expires with it, hence the margin).
        assert!(
            loc >= 0.5 * waits,
            "LOC on CPU 0 rose by {loc} for {waits} waits"
        );
        assert!(notes(m).contains("hrtimer interrupt"), "{}", notes(m));
    }
    assert!(timer >= 4, "{doc}");
    // The interrupts on the fill's CPU are in `run`'s output and in `show`, per variant.
    for text in [out, text(&lab.run(&["show", &id])).0] {
        let table = text
            .split("Interrupts on CPU 0, where the workload ran")
            .nth(1)
            .unwrap_or_else(|| panic!("no interrupts table in {text}"));
        let head = table.lines().nth(1).unwrap_or_default();
        assert!(
            head.starts_with("interrupt") && head.contains("base"),
            "{table}"
        );
        assert!(table.contains("LOC Local timer interrupts"), "{table}");
    }
}

#[test]
fn an_unpaced_cpu_fill_says_it_raises_no_device_interrupts() {
    let _host = crate::common::host_settings();
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "irq-fill",
        "--quick",
        "--variant",
        "base",
        "-p",
        "irq=none",
        "--reps",
        "1",
        "--monitors",
        "interrupts",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let doc = lab.export_named(&run_id(&err));
    let m = &doc["measurements"][0];
    assert!(metric(m, "timer_waits").is_none());
    assert!(
        notes(m).contains("this fill raises no device interrupts"),
        "{}",
        notes(m)
    );
}

#[test]
fn the_timer_is_refused_for_the_channel_model() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "xfer",
        "-p",
        "channels=2",
        "-p",
        "irq=timer",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("irq=timer drives the single-thread xfer"),
        "{err}"
    );
    assert!(!lab.db().exists());
}
