//! End-to-end: `perf bench mem memcpy` wrapped by exec over sizes and page sizes (the
//! perf-memcpy study), with counters, stored and compared. Needs root (the thp and
//! hugepages knobs) and a working perf; skipped, saying which, where either is missing.

use crate::common;

use std::process::Command;

use common::{run_id, text, Lab};

fn perf_works() -> bool {
    Command::new("perf")
        .args(["bench", "mem", "memcpy", "-s", "4KB", "-l", "1"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Median of telemetry `key` (source counters, all CPUs) over a variant's measurements
/// at the 64 MB point.
fn faults(doc: &serde_json::Value, variant: &str, key: &str) -> f64 {
    let mut v: Vec<f64> = doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["variant"] == variant)
        .filter(|m| {
            m["params"]["args"]
                .as_str()
                .unwrap()
                .starts_with("size=64MB")
        })
        .filter_map(|m| {
            m["telemetry"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["source"] == "counters" && t["key"] == key && t["cpu"].is_null())
        })
        .map(|t| t["value"].as_f64().unwrap())
        .collect();
    assert!(!v.is_empty(), "no {key} rows for {variant}");
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn perf_memcpy_study_by_size_and_page_size_needs_root_and_perf() {
    if !perflab_testkit::have_root("the thp and hugepages knobs") {
        return;
    }
    if !perf_works() {
        perflab_testkit::skip(
            "perf",
            "`perf bench mem memcpy` does not run (apt-get install linux-perf)",
        );
        return;
    }
    let lab = Lab::new();
    let o = lab.run(&["run", "perf-memcpy", "--quick"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains("B/A: thp against 4k") && out.contains("B/A: 2m against 4k"),
        "{out}"
    );
    assert!(
        out.contains("counters: medians of the telemetry repetitions"),
        "{out}"
    );
    let id = run_id(&err);
    let doc = lab.export_named(&id);
    let all = doc["measurements"].as_array().unwrap();
    let ms: Vec<&serde_json::Value> = all.iter().filter(|m| m["role"] == "headline").collect();
    assert_eq!(ms.len(), 2 * 3 * 4, "2 sizes x 3 variants x 4 repetitions");
    // The counters the study asks for run in one telemetry repetition per point and variant.
    assert_eq!(
        all.len() - ms.len(),
        2 * 3,
        "one telemetry repetition per point and variant"
    );
    for m in all {
        assert_eq!(m["status"]["status"], "ok", "{m}");
        let bw = m["output"]["metrics"][0]["value"].as_f64().unwrap();
        assert!(bw > 100.0, "bandwidth {bw} MiB/s in {m}");
    }
    // The page size shows in the faults: perf touches 2 x 64 MiB once, 32768 faults on
    // 4 KiB pages, far fewer on huge pages.
    let (small, thp, huge) = (
        faults(&doc, "4k", "page-faults"),
        faults(&doc, "thp", "page-faults"),
        faults(&doc, "2m", "page-faults"),
    );
    assert!(small >= 32_768.0, "4k faults {small}");
    assert!(
        small > 5.0 * thp && small > 5.0 * huge,
        "{small} {thp} {huge}"
    );
    // bytes = size x loops reached the per-byte rows.
    let per_byte = faults(&doc, "4k", "page-faults:per_byte");
    let moved = 64.0 * 1024.0 * 1024.0 * 20.0;
    assert!((per_byte - small / moved).abs() < 1e-9, "{per_byte}");

    let o = lab.run(&["compare", &id, "--variants", "4k,2m"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // The 64 MB point as a scan row: size 65536 KiB under loops=20, whatever its verdict
    // (the point's own name, `args=size=64MB;loops=20`, is in the notes only while it is
    // undecided).
    let group = out.split("loops=20\n").nth(1).unwrap_or_default();
    assert!(
        group.lines().any(|l| l.trim_start().starts_with("65536 ")),
        "{out}"
    );
}
