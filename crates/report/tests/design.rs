//! Comparisons say what they rest on: every table names its design (interleaved within one
//! run, or separate runs), run-against-run tables carry the drift guard of the runs' timing
//! probes, and the verdicts of a many-row table rest on p-values adjusted together.

use crate::common;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo};
use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::{compare_runs, compare_variants, distribution, Design};
use perflab_report::{Format, Section};
use perflab_stats::{Buckets, StatsConfig, Verdict};

fn probe(ns_per_op: f64) -> serde_json::Value {
    serde_json::json!({
        "readings": [
            {"name": "integer loop", "unit": "ns/op", "value": ns_per_op, "better": "lower"},
            {"name": "memcpy 4 MiB", "unit": "MiB/s", "value": 40000.0, "better": "higher"},
        ],
        "tries": 7, "build": "release", "at": 1_700_000_000.0,
    })
}

fn probed_run(id: i64, ns_per_op: f64) -> RunInfo {
    let mut r = common::run_info(id);
    r.fingerprint = perflab_core::Fingerprint::from_json(
        serde_json::json!({ "kernel": "6.18.0", "probe": probe(ns_per_op) }),
    );
    r
}

fn json(t: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn every_table_names_its_design() {
    let cfg = StatsConfig::default();
    let run = common::run_info(7);
    let ms = common::records(1.0, None);
    let t = compare_variants(&run, &ms, "poll-only", "all", None, &cfg).unwrap();
    assert_eq!(t.design, Design::InterleavedWithinOneRun);
    assert_eq!(t.drift, None);
    let j = json(&t);
    assert_eq!(j["design"], "interleaved_within_one_run");
    assert!(j["drift"].is_null());
    for text in [t.render(Format::Text), t.render(Format::Markdown)] {
        assert!(
            text.contains("design: interleaved within one run (A B A B at every point)"),
            "{text}"
        );
    }
    let d = distribution(&t, &Buckets::default());
    assert_eq!(json(&d)["design"], "interleaved_within_one_run");
    assert!(d
        .render(Format::Text)
        .contains("(interleaved within one run; "));
    assert!(d
        .render(Format::Markdown)
        .contains("(interleaved within one run; "));

    let b = common::run_info(8);
    let b_ms = common::records(0.95, None);
    let t = compare_runs(&run, &ms, &b, &b_ms, None, &cfg).unwrap();
    assert_eq!(t.design, Design::SeparateRuns);
    assert_eq!(json(&t)["design"], "separate_runs");
    for text in [t.render(Format::Text), t.render(Format::Markdown)] {
        assert!(
            text.contains(
                "design: separate runs, not interleaved: any drift of the machine between \
                 the runs is confounded with the change"
            ),
            "{text}"
        );
        // Runs from before the probe are not silently unguarded.
        assert!(
            text.contains("no drift guard: run 7 has no timing probe"),
            "{text}"
        );
        // The fixture's measurements are dated, so the reader sees when each run ran.
        assert!(
            text.contains("measured: run 7 2023-11-14 22:13 to "),
            "{text}"
        );
    }
    let d = distribution(&t, &Buckets::default());
    assert!(
        d.render(Format::Text).contains("(separate runs; "),
        "{}",
        d.render(Format::Text)
    );
}

#[test]
fn a_probe_that_moved_is_a_warning_in_every_format() {
    let (a, b) = (probed_run(7, 1.0), probed_run(8, 1.1));
    let (a_ms, b_ms) = (common::records(1.0, None), common::records(0.95, None));
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &StatsConfig::default()).unwrap();
    let want = "WARNING: timing probe \"integer loop\" moved between the runs: 1.00 ns/op in \
                run 7, 1.10 ns/op in run 8 (ratio 1.100, slower in run 8), beyond the 1% \
                noise threshold";
    assert!(
        t.render(Format::Text).contains(want),
        "{}",
        t.render(Format::Text)
    );
    assert!(t.render(Format::Markdown).contains(want));
    let j = json(&t);
    let probes = j["drift"]["probes"].as_array().unwrap();
    assert_eq!(probes[0]["name"], "integer loop");
    assert_eq!(probes[0]["moved"], true);
    assert_eq!(probes[0]["a"], 1.0);
    assert_eq!(probes[0]["b"], 1.1);
    assert!((probes[0]["ratio"].as_f64().unwrap() - 1.1).abs() < 1e-12);
    assert_eq!(probes[1]["moved"], false);
    // A size scan of the same comparison says it too.
    let scan_src = common::xfer::scan(
        &["pvm"],
        &[("4k", &common::xfer::VEOS_4K)],
        0,
        |_: &str, _: &str, _: u64, _: u32| false,
    );
    let (mut xa, mut xb) = (common::xfer::run(11, "veos"), common::xfer::run(12, "next"));
    xa.fingerprint =
        perflab_core::Fingerprint::from_json(serde_json::json!({ "probe": probe(1.0) }));
    xb.fingerprint =
        perflab_core::Fingerprint::from_json(serde_json::json!({ "probe": probe(0.9) }));
    let st = compare_runs(
        &xa,
        &scan_src,
        &xb,
        &scan_src,
        None,
        &StatsConfig::default(),
    )
    .unwrap();
    let scan = perflab_report::scan_tables(&st, "size").unwrap();
    assert_eq!(json(&scan)["design"], "separate_runs");
    assert!(
        scan.render(Format::Text)
            .contains("WARNING: timing probe \"integer loop\" moved"),
        "{}",
        scan.render(Format::Text)
    );
    assert!(scan.render(Format::Markdown).contains("faster in run 12"));

    // The whole report, in each of its forms.
    let runs = [RunData { info: a, ms: a_ms }, RunData { info: b, ms: b_ms }];
    let opts = ReportOptions {
        figures: false,
        ..ReportOptions::default()
    };
    let r = build_report(&runs, &opts).unwrap();
    for (form, text) in [
        ("text", r.text()),
        ("markdown", r.markdown()),
        ("mail", r.mail()),
        ("html", r.html()),
    ] {
        assert!(
            text.contains("WARNING: timing probe"),
            "{form} lacks the warning:\n{text}"
        );
        assert!(text.contains("(separate runs)"), "{form}:\n{text}");
        assert!(
            !text.contains("Measurements ran in interleaved order"),
            "{form} claims interleaving"
        );
    }
    let json = r.json();
    let c = &json["comparison"][0]["comparison"];
    assert_eq!(c["design"], "separate_runs");
    assert_eq!(c["drift"]["probes"][0]["moved"], true);
}

#[test]
fn probes_within_the_threshold_say_so() {
    let (a, b) = (probed_run(7, 1.0), probed_run(8, 1.004));
    let ms = common::records(1.0, None);
    let t = compare_runs(&a, &ms, &b, &ms, None, &StatsConfig::default()).unwrap();
    let text = t.render(Format::Text);
    assert!(!text.contains("WARNING"), "{text}");
    assert!(
        text.contains(
            "drift guard: the timing probes of run 7 and run 8 agree within the 1% noise \
             threshold: integer loop 1.00 vs 1.00 ns/op (ratio 1.004)"
        ),
        "{text}"
    );
    // A stricter threshold holds the probe to it too.
    let strict = StatsConfig {
        noise_pct: 0.2,
        ..StatsConfig::default()
    };
    let t = compare_runs(&a, &ms, &b, &ms, None, &strict).unwrap();
    assert!(t
        .render(Format::Text)
        .contains("beyond the 0.2% noise threshold"));
}

/// `rows` CPU pairs measured 5 vs 5; pair 1 alone differs (+2.9%, p = 0.032 read alone),
/// every other pair has values on both sides that differ by a few hundredths of a percent
/// (identical values would leave no spread, and no verdict).
fn one_marginal_row(rows: u32) -> (RunInfo, Vec<MeasurementRecord>) {
    let same = [100.0, 101.0, 102.0, 103.0, 104.0];
    let close = [100.03, 100.98, 102.02, 102.97, 104.01];
    let moved = [102.5, 104.5, 105.0, 106.0, 107.0];
    let mut ms = Vec::new();
    for pair in 0..rows {
        for (variant, values) in [("a", same), ("b", if pair == 1 { moved } else { close })] {
            for (rep, v) in values.iter().enumerate() {
                let mut params = Params::default();
                params.0.insert("cpu_a".into(), ParamValue::Int(0));
                params
                    .0
                    .insert("cpu_b".into(), ParamValue::Int(i64::from(pair)));
                ms.push(MeasurementRecord {
                    seq: ms.len() as u32,
                    point: pair,
                    params,
                    variant: variant.into(),
                    rep: rep as u32,
                    status: MeasurementStatus::Ok,
                    started_at: 0.0,
                    elapsed_s: 1.0,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new("rate", *v, Unit::PerSecond, Better::Higher)],
                        ..Default::default()
                    },
                    telemetry: Vec::new(),
                    role: Default::default(),
                    monitors: Vec::new(),
                });
            }
        }
    }
    let mut run = common::run_info(3);
    run.unavailable.clear();
    (run, ms)
}

/// Issue 22: one row that moved (+2.9 %, 5 pairs) was `~` among 10 rows under
/// Benjamini-Hochberg on Mann-Whitney p-values (p adj 0.317). Now the paired log-ratios
/// decide it among 10 as alone, the unchanged rows read `same`, and the interval shown
/// is the one the verdict used.
#[test]
fn one_moved_row_is_decided_among_many_and_the_others_read_same() {
    let cfg = StatsConfig::default();
    let (run, ms) = one_marginal_row(2);
    let ms1: Vec<MeasurementRecord> = ms.into_iter().filter(|m| m.point == 1).collect();
    let t = compare_variants(&run, &ms1, "a", "b", None, &cfg).unwrap();
    let r = &t.rows[0].cmp;
    assert_eq!(r.p_adjusted, r.p_value);
    assert_eq!(r.verdict, Verdict::Improved);
    assert_eq!(t.p_adjustment.rows, 1);

    let (run, ms) = one_marginal_row(10);
    let t = compare_variants(&run, &ms, "a", "b", None, &cfg).unwrap();
    let r = &t.pair_row(0, 1).unwrap().cmp;
    assert_eq!(r.verdict, Verdict::Improved, "{:?}", r.change_ci_pct);
    let (lo, hi) = r.change_ci_pct.unwrap();
    assert!(lo > 1.0 && hi < 5.0, "[{lo}, {hi}]");
    assert!(t
        .rows
        .iter()
        .filter(|x| x.pair != Some((0, 1)))
        .all(|x| x.cmp.verdict == Verdict::Same));
    assert_eq!(t.p_adjustment.rows, 10);
    let text = t.render(Format::Text);
    assert!(text.contains("p   p adj  verdict"), "{text}");
    assert!(
        text.contains("10 rows decided together: 0 WORSE, 1 better, 9 same, 0 undecided"),
        "{text}"
    );
    let j = json(&t);
    assert_eq!(j["p_adjustment"]["method"], "benjamini_hochberg");
    let row = &j["rows"][1]["cmp"];
    assert_eq!(row["verdict"], "better");
    assert_eq!(j["rows"][0]["cmp"]["verdict"], "same");
    assert!(row["change_ci_pct"][0].as_f64().unwrap() > 1.0);
    assert_eq!(row["decision"]["method"], "t");
    // The distribution counts what the verdicts count.
    let d = distribution(&t, &Buckets::default());
    let moved: usize = d.improvements.iter().map(|c| c.significant).sum();
    let same: usize = d
        .regressions
        .iter()
        .chain(&d.improvements)
        .map(|c| c.same)
        .sum();
    assert_eq!((moved, same), (1, 9));
}
