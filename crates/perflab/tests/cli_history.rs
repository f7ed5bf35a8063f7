//! `perflab history`: runs of the null workload stored with a known step are one series,
//! and its change point is found at the run where the step is.

use crate::common;

use common::{text, Lab};

/// Eight runs at about 100 then six at about 110, labelled v1..v14: each run's value
/// moves by up to ±0.6 (a run-to-run noise of its own) and its repetitions by 1 %.
fn stepped(lab: &Lab) {
    for i in 1..=14 {
        let level = if i <= 8 { 100.0 } else { 110.0 };
        let value = level + ((i * 37) % 7) as f64 * 0.2 - 0.6;
        let label = format!("v{i}");
        let o = lab.run(&[
            "run",
            "--workload",
            "null",
            "-p",
            &format!("value={value:.1}"),
            "-p",
            "noise_pct=1",
            "--reps",
            "3",
            "--label",
            &label,
        ]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    }
}

#[test]
fn history_finds_the_step_at_the_run_it_happened() {
    let lab = Lab::new();
    stepped(&lab);
    let listed = text(&lab.run(&["history"])).0;
    assert!(listed.contains("1 series in"), "{listed}");

    let o = lab.run(&[
        "history", "--study", "null", "--metric", "value", "--format", "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["format"], "perflab-history");
    let series = &doc["history"][0];
    let changes = series["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{series}");
    let c = &changes[0];
    assert_eq!(c["index"], 8);
    assert_eq!(c["before"]["label"], "v8");
    assert_eq!(c["after"]["label"], "v9");
    let (before, after) = (
        c["median_before"].as_f64().unwrap(),
        c["median_after"].as_f64().unwrap(),
    );
    assert!(
        (before - 100.0).abs() < 1.5 && (after - 110.0).abs() < 1.5,
        "{c}"
    );
    // The null workload's value: higher is better, so a rise is "better".
    assert_eq!(c["verdict"], "better", "{c}");
    assert_eq!(doc["events"].as_array().map(Vec::len), Some(1));

    let text_out = text(&lab.run(&["history", "--study", "null"])).0;
    assert!(text_out.contains("run 9 (v9)"), "{text_out}");
    let html = text(&lab.run(&["history", "--study", "null", "--format", "html"])).0;
    assert!(html.contains("<svg"), "the HTML page plots the series");
    let mail = text(&lab.run(&["history", "--study", "null", "--format", "mail"])).0;
    assert!(
        mail.lines()
            .all(|l| l.chars().count() <= 72 || !l.contains(' ')),
        "{mail}"
    );
}

#[test]
fn a_filter_matching_nothing_is_one_line_and_exit_2() {
    let lab = Lab::new();
    let o = lab.run(&["run", "--workload", "null", "--reps", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let o = lab.run(&["history", "--study", "no-such-study"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(out.is_empty());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no series matches --study no-such-study"),
        "{err}"
    );
}
