//! Imports refuse figures that cannot be (issue 21): a negative count, rate, bandwidth or
//! duration, or a `nan`, in any tool's output or a `perflab-json` document refuses the
//! whole file with one line naming the file, where in it and the field; exit 2, and the
//! database is byte-identical afterwards.

use crate::common;

use common::{text, Lab};
use std::path::Path;

fn data(tool: &str, file: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parsers/tests/data")
        .join(tool)
        .join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A database holding one run, so "nothing stored" is a byte comparison with a real file.
fn lab_with_a_run() -> Lab {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "--reps",
        "1",
        "--monitors",
        "interrupts",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    lab
}

/// Imports `content` as `name` with `parser` and checks the refusal: exit 2, one line
/// holding the file name and every needle, the database unchanged.
fn assert_refused(lab: &Lab, parser: &str, name: &str, content: &str, needles: &[&str]) {
    let file = lab.dir.path().join(name);
    std::fs::write(&file, content).unwrap();
    let before = std::fs::read(lab.db()).unwrap();
    let o = lab.run(&["import", "--parser", parser, file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{parser} {name}\n{out}\n{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(name), "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
    assert!(
        std::fs::read(lab.db()).unwrap() == before,
        "{parser} {name}: the database changed"
    );
}

#[test]
fn tool_outputs_with_impossible_figures_are_refused_whole() {
    let lab = lab_with_a_run();
    let pipe = data("perf-bench", "sched_pipe.txt").replace("82789 ops/sec", "-163306 ops/sec");
    assert_refused(
        &lab,
        "perf-bench",
        "pipe.txt",
        &pipe,
        &["-163306 is negative, and a rate cannot be"],
    );
    let cyc = data("cyclictest", "quiet_t2.txt").replace("Max:    2574", "Max: -1000000000000");
    assert_refused(
        &lab,
        "cyclictest",
        "cyc.txt",
        &cyc,
        &["row 1", "latency_max_us", "-1e12 is negative"],
    );
    let sock = data("sockperf", "pingpong_udp.txt")
        .replace("# dropped messages = 0", "# dropped messages = -1");
    assert_refused(
        &lab,
        "sockperf",
        "sock.txt",
        &sock,
        &["dropped", "-1 is negative, and a count cannot be"],
    );
}

#[test]
fn perflab_json_with_impossible_figures_is_refused_whole() {
    let lab = lab_with_a_run();
    let doc = lab.export_named("1");
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut d = doc.clone();
        // Another uid, so that a wrongly accepted import would add a run.
        d["run"]["uid"] = "0123456789abcdef0123456789abcdef".into();
        f(&mut d["measurements"][0]);
        serde_json::to_string(&d).unwrap()
    };
    let bandwidth = |v: f64| {
        edit(&move |m| {
            m["output"]["metrics"][0] = serde_json::json!({
                "name": "bandwidth_mib_s", "value": v, "unit": "mib_per_second", "better": "higher"
            })
        })
    };
    let cases = [
        (
            "bw.json",
            bandwidth(-1.0),
            "field bandwidth_mib_s: -1 is negative, and a bandwidth cannot be",
        ),
        ("bw2.json", bandwidth(-9.2e18), "-9.2e18 is negative"),
        (
            "elapsed.json",
            edit(&|m| m["elapsed_s"] = (-1e308).into()),
            "field elapsed_s: -1e308 is negative, and a duration cannot be",
        ),
        (
            "hist.json",
            edit(&|m| m["output"]["histograms"][0]["min"] = (-1.0).into()),
            "field histogram latency min: -1 is negative",
        ),
        (
            "irq.json",
            edit(&|m| m["telemetry"][0]["value"] = (-5.0).into()),
            "field telemetry interrupts ",
        ),
    ];
    for (name, content, needle) in cases {
        assert_refused(
            &lab,
            "perflab-json",
            name,
            &content,
            &["measurements[0] (seq 0)", needle],
        );
    }
    // The fingerprint's timing probe is a reading too (issue 31 item 11).
    for (name, v, needle) in [
        ("probe-neg.json", -1.0, "is negative"),
        ("probe-big.json", 1e308, "1e308 is more than"),
    ] {
        let mut d = doc.clone();
        d["run"]["uid"] = "0123456789abcdef0123456789abcdef".into();
        let readings = &mut d["run"]["fingerprint"]["probe"]["readings"];
        assert!(
            readings.is_array(),
            "the run's fingerprint has a probe: {d}"
        );
        readings[0]["value"] = v.into();
        let content = serde_json::to_string(&d).unwrap();
        assert_refused(
            &lab,
            "perflab-json",
            name,
            &content,
            &["run fingerprint, field probe ", needle],
        );
    }
    // The same document unedited imports: the check refuses only what cannot be.
    let file = lab.dir.path().join("fine.json");
    std::fs::write(&file, edit(&|_| {})).unwrap();
    let o = lab.run(&["import", "--parser", "perflab-json", file.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
}

/// Issue 21: a cyclictest histogram with 952 of 957 samples past its 50 µs range. What a
/// person reads states only what is known: the percentiles among the overflows are
/// `≥50`, the maximum is cyclictest's own; the export says the same in numbers.
#[test]
fn an_overflowed_cyclictest_histogram_reads_as_censored() {
    let lab = Lab::new();
    let file = lab.dir.path().join("cyc-h50.txt");
    std::fs::write(&file, data("cyclictest", "histogram_h50_overflowed.txt")).unwrap();
    let o = lab.run(&["import", "--parser", "cyclictest", file.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = lab.run(&["show", "1", "--section", "percentiles"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("point"))
        .collect();
    assert_eq!(
        table,
        [
            "point  variant  reps  round trips     p50     p90     p99  p99.9       max",
            "all    default     1          957  ≥50.00  ≥50.00  ≥50.00      -  14055.00",
        ],
        "{out}"
    );
    assert!(
        out.contains("`≥N` where the percentile falls among samples past"),
        "{out}"
    );
    let doc = lab.export_named("1");
    let h = &doc["measurements"][0]["output"]["histograms"][0];
    assert_eq!(h["count"], 957);
    assert_eq!(h["p50"], serde_json::Value::Null);
    assert_eq!(h["mean"], 120.0);
    assert_eq!(h["above"], serde_json::json!({"limit": 50.0, "count": 952}));
    // The export comes back whole: its censored figures are "not known", not impossible.
    let other = Lab::new();
    let exported = other.dir.path().join("run.json");
    std::fs::write(&exported, serde_json::to_string(&doc).unwrap()).unwrap();
    let o = other.run(&[
        "import",
        "--parser",
        "perflab-json",
        exported.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert_eq!(other.export_named("1")["measurements"], doc["measurements"]);
}
