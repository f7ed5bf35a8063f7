//! The four verdicts as a person reads them, in every format (issue 22): a table of four
//! CPU pairs that read better, WORSE, same and undecided, rendered as text, Markdown,
//! mail and HTML, and its JSON with `verdict` and the interval the verdict used.

use crate::common;

use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};
use perflab_report::{compare_variants, ComparisonTable, Format, Section};
use perflab_stats::{StatsConfig, Verdict};

/// Per pair: B's factor over A, and the relative noise of each repetition.
const PAIRS: [(f64, f64); 4] = [(1.05, 0.002), (0.95, 0.002), (1.0, 0.001), (1.012, 0.01)];
const WOBBLE: [f64; 5] = [-1.0, 0.6, 0.2, -0.4, 0.7];

fn table() -> ComparisonTable {
    table_of(&PAIRS)
}

fn table_of(pairs: &[(f64, f64)]) -> ComparisonTable {
    let mut ms = Vec::new();
    for (pair, (factor, noise)) in pairs.iter().enumerate() {
        for rep in 0..5u32 {
            for (variant, f) in [("base", 1.0), ("new", *factor)] {
                let w = WOBBLE[(rep as usize + pair + usize::from(variant == "new") * 2) % 5];
                let value = 100_000.0 * f * (1.0 + noise * w);
                let mut params = Params::default();
                params.0.insert("cpu_a".into(), ParamValue::Int(0));
                params
                    .0
                    .insert("cpu_b".into(), ParamValue::Int(pair as i64 + 1));
                ms.push(MeasurementRecord {
                    seq: ms.len() as u32,
                    point: pair as u32,
                    params,
                    variant: variant.into(),
                    rep,
                    status: MeasurementStatus::Ok,
                    started_at: 0.0,
                    elapsed_s: 1.0,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new("rate", value, Unit::PerSecond, Better::Higher)],
                        ..Default::default()
                    },
                    telemetry: Vec::new(),
                    role: Default::default(),
                    monitors: Vec::new(),
                });
            }
        }
    }
    let mut run = common::run_info(22);
    run.unavailable.clear();
    compare_variants(&run, &ms, "base", "new", None, &StatsConfig::default()).unwrap()
}

#[test]
fn four_verdicts_one_per_row() {
    let t = table();
    let v: Vec<Verdict> = t.rows.iter().map(|r| r.cmp.verdict).collect();
    assert_eq!(
        v,
        [
            Verdict::Improved,
            Verdict::Regressed,
            Verdict::Same,
            Verdict::Undecided
        ]
    );
}

#[test]
fn four_verdicts_text() {
    let text = table().render(Format::Text);
    for w in ["better", "WORSE", "same", "undecided"] {
        assert!(text.contains(w), "{w} missing in\n{text}");
    }
    insta::assert_snapshot!("verdicts_text", text);
}

#[test]
fn four_verdicts_markdown() {
    insta::assert_snapshot!("verdicts_markdown", table().render(Format::Markdown));
}

#[test]
fn four_verdicts_mail() {
    let mail = table().render(Format::Mail);
    assert!(mail.lines().all(|l| l.chars().count() <= 72), "{mail}");
    insta::assert_snapshot!("verdicts_mail", mail);
}

#[test]
fn four_verdicts_html() {
    let html = table().render(Format::Html);
    for class in [
        "verdict-better",
        "verdict-worse",
        "verdict-same",
        "verdict-undecided",
    ] {
        assert!(html.contains(&format!("class=\"{class}\"")), "{class}");
    }
    // The table, not the page's style sheet.
    let start = html.find("<table").unwrap();
    let end = html.rfind("</table>").unwrap() + "</table>".len();
    insta::assert_snapshot!("verdicts_html", &html[start..end]);
}

/// JSON carries `verdict` ∈ {better, worse, same, undecided} and the interval the verdict
/// used, with its level: `better` lies above +1 %, `worse` below −1 %, `same` inside.
#[test]
fn four_verdicts_json() {
    let t = table();
    let j = serde_json::to_value(&t).unwrap();
    let rows = j["rows"].as_array().unwrap();
    let verdicts: Vec<&str> = rows
        .iter()
        .map(|r| r["cmp"]["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["better", "worse", "same", "undecided"]);
    let ci = |i: usize| {
        let c = &rows[i]["cmp"]["change_ci_pct"];
        (c[0].as_f64().unwrap(), c[1].as_f64().unwrap())
    };
    assert!(ci(0).0 > 1.0);
    assert!(ci(1).1 < -0.99);
    assert!(ci(2).0 > -0.99 && ci(2).1 < 1.0);
    assert!(ci(3).0 < 1.0 && ci(3).1 > 1.0);
    let summary: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let c = &r["cmp"];
            serde_json::json!({
                "label": r["label"],
                "verdict": c["verdict"],
                "change_pct": round(&c["change_pct"]),
                "change_ci_pct": [round(&c["change_ci_pct"][0]), round(&c["change_ci_pct"][1])],
                "level": round(&c["decision"]["level"]),
                "method": c["decision"]["method"],
                "reps_to_decide": c["decision"]["reps_to_decide"],
            })
        })
        .collect();
    insta::assert_snapshot!(
        "verdicts_json",
        serde_json::to_string_pretty(&summary).unwrap()
    );
}

/// Four decimals: the snapshot should not move with the last bit of a float.
fn round(v: &serde_json::Value) -> serde_json::Value {
    serde_json::json!((v.as_f64().unwrap() * 1e4).round() / 1e4)
}

/// Issue 21 item 16: `run quick` on a loaded machine printed −1.24 % [−178.01 %,
/// +78.79 %] for a rate whose repetitions ranged 4,266 to 74,591. The interval is now
/// on the log scale (above −100 %), and the row gets the "!" of a single-variant row
/// with the repetitions that would decide it.
#[test]
fn widely_spread_rows_get_the_warning_and_a_positive_interval() {
    let t = table_of(&[(0.99, 0.6), (1.0, 0.001), (1.0, 0.001)]);
    let row = &t.rows[0];
    let (lo, hi) = row.cmp.change_ci_pct.unwrap();
    assert!(lo > -100.0 && hi > lo, "[{lo}, {hi}]");
    assert_eq!(row.cmp.verdict, Verdict::Undecided);
    let text = t.render(Format::Text);
    let line = text.lines().find(|l| l.starts_with("0-1 ")).unwrap();
    assert!(line.contains("]!"), "{line}");
    assert!(
        text.contains("0-1: ! the repetitions spread widely"),
        "{text}"
    );
    assert!(
        text.contains("repetitions per side (now 5) would decide it")
            || text.contains("look for the cause of the spread"),
        "{text}"
    );
}
