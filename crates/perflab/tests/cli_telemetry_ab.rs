//! Seed 003's evidence, compared (issue 34 item 8): its two `perf stat` outputs (without
//! and with the PIR copy) imported as runs A and B; `compare` and `report` give the
//! counters the headline's columns, B against A, with no verdict. This machine has no
//! PMU, so the counts are the seed's own, in perf's text layout
//! (crates/parsers/tests/data/perf-stat/README.md).

use crate::common;

use common::{run_id, text, Lab};

fn seed_file(name: &str) -> String {
    format!(
        "{}/../parsers/tests/data/perf-stat/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs A (without the PIR copy) and B (with it).
fn imported(lab: &Lab) -> (String, String) {
    let mut ids = Vec::new();
    for (file, label) in [
        ("seed003_without_pir_copy.txt", "without PIR copy"),
        ("seed003_with_pir_copy.txt", "with PIR copy"),
    ] {
        let f = seed_file(file);
        let o = lab.run(&["import", "--parser", "perf-stat", &f, "--label", label]);
        let (_, err) = text(&o);
        assert!(o.status.success(), "{err}");
        ids.push(run_id(&err));
    }
    (ids[0].clone(), ids[1].clone())
}

#[test]
fn compare_gives_the_seed_s_counters_b_against_a_without_a_verdict() {
    let lab = Lab::new();
    let (a, b) = imported(&lab);
    let o = lab.run(&["compare", &a, &b, "--section", "telemetry"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("Telemetry, with PIR copy (B) against without PIR copy (A)"),
        "{out}"
    );
    // The seed's figures: L1 misses 8,279,458 -> 7,762,311, LLC misses 10,476 -> 23,691.
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row in {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        line("L1-dcache-load-misses")[1..],
        ["headline", "1", "1", "8279458", "7762311", "-6.25%", "n/a"]
    );
    assert_eq!(
        line("LLC-load-misses")[1..],
        ["headline", "1", "1", "10476", "23691", "+126.15%", "n/a"]
    );
    for word in ["better", "WORSE", "same", "undecided"] {
        assert!(!out.contains(word), "{word}: {out}");
    }

    let o = lab.run(&["compare", &a, &b, "--format", "json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = doc["telemetry"]["rows"].as_array().expect("telemetry rows");
    let l1 = rows
        .iter()
        .find(|r| r["series"]["key"] == "L1-dcache-load-misses")
        .unwrap();
    assert_eq!(
        (l1["median_a"].as_f64(), l1["median_b"].as_f64()),
        (Some(8_279_458.0), Some(7_762_311.0))
    );
    assert!(
        l1["interval_pct"].is_null() && l1.get("verdict").is_none(),
        "{l1}"
    );
}

#[test]
fn report_of_the_two_runs_holds_the_counter_table_in_every_format() {
    let lab = Lab::new();
    let (a, b) = imported(&lab);
    for format in ["text", "mail", "markdown", "html"] {
        let args = match format {
            "html" => vec!["report", &a, &b, "--html", "-"],
            _ => vec!["report", &a, &b, "--format", format],
        };
        let o = lab.run(&args);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{format}: {err}");
        assert!(out.contains("LLC-load-misses"), "{format}: {out}");
        assert!(out.contains("+126.15%"), "{format}: {out}");
        // A mail wraps the caption: read it with its line breaks as spaces.
        let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("described, not tested"), "{format}: {out}");
    }
}

/// Issue 34 item 6: a file of three `perf stat` outputs (runs appended) was refused; it is
/// three repetitions, each with its own counts as the counters monitor's rows, so the
/// telemetry table has a spread per side.
#[test]
fn several_perf_stat_outputs_in_one_file_import_as_repetitions_with_their_counts() {
    let lab = Lab::new();
    let f = seed_file("appended_ls3.txt");
    let o = lab.run(&["import", "--parser", "perf-stat", &f]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("perf stat: 3 outputs in one file, read as 3 repetitions"),
        "{err}"
    );
    let mut doc = lab.export(&run_id(&err));
    common::name_telemetry_fields(&mut doc);
    let ms = doc["measurements"].as_array().unwrap();
    let reps: Vec<u64> = ms.iter().map(|m| m["rep"].as_u64().unwrap()).collect();
    assert_eq!(reps, [0, 1, 2]);
    // Each repetition carries its own output's page faults (102, 101, 104 in the file).
    let faults: Vec<f64> = ms
        .iter()
        .map(|m| {
            m["telemetry"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["source"] == "counters" && t["key"] == "page-faults")
                .unwrap_or_else(|| panic!("no page-faults row in {m}"))["value"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(faults, [102.0, 101.0, 104.0]);
}
