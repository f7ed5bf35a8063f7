//! The views of the commands (`perflab_report::views`): each format renders the same
//! sections, and the JSON keys are the sections' ids.

use crate::common;

use std::collections::BTreeSet;

use perflab_core::record::{RunInfo, RunStatus};
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::section::{self, Format};
use perflab_report::views::{after_run, compare, doctor, list, ls, report, show};
use perflab_stats::{Buckets, StatsConfig};

fn keys(map: &serde_json::Map<String, serde_json::Value>) -> BTreeSet<&str> {
    map.keys().map(String::as_str).collect()
}

fn set<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
    ids.into_iter().collect()
}

#[test]
fn show_prints_its_header_then_the_sections_and_keys_them_by_id() {
    let (info, ms) = (common::run_info(7), common::records(1.0, None));
    let view = show::view(&info, &ms, usize::MAX, " --db x.db").unwrap();
    let text = view.text(&[]).unwrap();
    assert!(text.starts_with("run 7  2023-11-14"), "{text}");
    let body = section::render(
        &view.sections.iter().map(|s| s.as_ref()).collect::<Vec<_>>(),
        Format::Text,
    );
    assert!(text.ends_with(&format!("\n\n{body}")), "{text}");
    let doc = view.document::<()>(&[], None).unwrap();
    let ids = view.sections.iter().map(|s| s.id().as_str());
    assert_eq!(keys(&doc.sections), set(ids.chain(["run"])));
    assert_eq!(doc.sections["run"]["id"], 7);

    let picked = view.document::<()>(&["summary".into()], None).unwrap();
    assert_eq!(keys(&picked.sections), set(["run", "summary"]));
    let err = view.text(&["nope".into()]).unwrap_err().to_string();
    assert!(err.starts_with("--section nope: no such section"), "{err}");
}

#[test]
fn an_interrupted_run_says_how_to_resume_it_on_its_database() {
    let mut info = common::run_info(7);
    info.status = RunStatus::Interrupted;
    let view = show::view(&info, &common::records(1.0, None), 0, " --db x.db").unwrap();
    assert!(view
        .text(&[])
        .unwrap()
        .contains("\ninterrupted: resume with: perflab run --resume 7 --db x.db\n\n"));
}

#[test]
fn compare_keys_every_section_by_id_and_prints_the_scan_or_the_table() {
    let (info, ms) = (common::run_info(7), common::records(1.0, None));
    let cfg = StatsConfig::default();
    let how = compare::Reading {
        metric: None,
        cfg: &cfg,
        buckets: &Buckets::default(),
    };
    let view = compare::variants(&info, &ms, None, &how).unwrap();
    assert!(view.distribution.is_some() && view.scan.is_none());
    let json = view.json(&[]).unwrap();
    assert!(keys(&json).is_subset(&set(section::COMPARE.iter().copied())));
    assert!(keys(&json).contains("comparison") && keys(&json).contains("distribution"));
    assert_eq!(json["comparison"]["kind"], "variants");
    let md = view.text(Format::Markdown, &[]).unwrap();
    let want = section::render(
        &[&view.table, view.distribution.as_ref().unwrap()],
        Format::Markdown,
    );
    assert!(md.starts_with(&want), "{md}");
    let only = view.json(&["distribution".into()]).unwrap();
    assert_eq!(keys(&only), set(["distribution"]));
}

#[test]
fn two_runs_from_different_setups_say_so_first_and_in_the_json() {
    let a = common::run_info(7);
    let mut b = common::run_info(8);
    b.fingerprint = perflab_core::Fingerprint::from_json(serde_json::json!({ "kernel": "6.2" }));
    let (a_ms, b_ms) = (common::records(1.0, None), common::records(0.97, None));
    let cfg = StatsConfig::default();
    let how = compare::Reading {
        metric: None,
        cfg: &cfg,
        buckets: &Buckets::default(),
    };
    let view = compare::runs((&a, &a_ms), (&b, &b_ms), &how).unwrap();
    let text = view.text(Format::Text, &["distribution".into()]).unwrap();
    assert!(
        text.starts_with(
            "The two runs come from different setups:\n  kernel: run 7 \"\"  vs  run 8 \"6.2\"\n\n"
        ),
        "{text}"
    );
    let json = view.json(&[]).unwrap();
    assert_eq!(json["setup_differences"][0]["value_b"], "6.2");
    assert_eq!(json["comparison"]["kind"], "runs");
}

#[test]
fn the_report_renders_as_the_full_report_and_keys_its_parts_by_id() {
    let runs = [RunData {
        info: common::run_info(7),
        ms: common::records(1.0, None),
    }];
    let opts = ReportOptions::default();
    let full = build_report(&runs, &opts).unwrap();
    let view = report::view(&runs, &opts).unwrap();
    for format in [Format::Text, Format::Mail, Format::Markdown, Format::Html] {
        assert_eq!(view.render(format, &[]).unwrap(), full.render(format));
    }
    let json = view.json(&[]).unwrap();
    let parts = section::REPORT.iter().filter(|id| **id != "how-to-read");
    assert_eq!(keys(&json), set(parts.copied().chain(["title"])));
    let whole = full.json();
    for id in ["comparison", "threads", "lock-wait", "spans"] {
        assert_eq!(json[id], whole[id], "{id}");
    }
    let picked = view.json(&["runs".into()]).unwrap();
    assert_eq!(keys(&picked), set(["title", "runs"]));
    assert_eq!(
        view.render(Format::Text, &["runs".into()]).unwrap(),
        full.render_parts(Format::Text, &["runs".into()]).unwrap()
    );
}

#[test]
fn the_end_of_a_run_of_two_variants_compares_them() {
    let (info, ms) = (common::run_info(7), common::records(1.0, None));
    let after = after_run::AfterRun::of(&info, &ms, None, || "/nowhere".into()).unwrap();
    assert!(after.pairs && !after.wants_drilldown);
    let view = after_run::EndView::of(&info, &ms, after, (usize::MAX, "")).unwrap();
    assert_eq!(view.write_drilldown(&info, &ms).unwrap(), None);
    let comparisons = view.comparisons_json();
    assert_eq!(comparisons.len(), 1);
    assert_eq!(keys(&comparisons[0]), set(["comparison", "distribution"]));
    assert!(!keys(&view.sections_json()).contains("summary"));
    let text = view.text(None);
    assert!(text.starts_with(&format!(
        "\n{}",
        section::render(&[&view.variants[0].table], Format::Text)
    )));
}

fn stored(id: i64, status: RunStatus) -> RunInfo {
    RunInfo {
        status,
        ..common::run_info(id)
    }
}

#[test]
fn ls_lists_runs_and_resumes_the_interrupted_oldest_first() {
    let none = ls::view(&[], "/tmp/r.db", "").unwrap();
    assert_eq!(none.text(), "no runs in /tmp/r.db\n");
    assert_eq!(none.json()["runs"], serde_json::json!([]));
    let runs = [
        stored(3, RunStatus::Interrupted),
        stored(2, RunStatus::Complete),
        stored(1, RunStatus::Interrupted),
    ];
    let view = ls::view(&runs, "/tmp/r.db", " --db /tmp/r.db").unwrap();
    let text = view.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[0].starts_with("run  created (UTC)"), "{text}");
    assert!(lines[1].starts_with("  3  "), "{text}");
    assert_eq!(
        lines[4..],
        [
            "run 1 interrupted: resume with: perflab run --resume 1 --db /tmp/r.db",
            "run 3 interrupted: resume with: perflab run --resume 3 --db /tmp/r.db",
        ]
    );
    assert_eq!(view.json()["runs"][0]["id"], 3);
}

#[test]
fn list_prints_a_section_per_kind_and_keys_them_by_kind() {
    let entry = |name, summary: &str| list::Entry {
        name,
        summary: summary.into(),
        params: Vec::new(),
    };
    let mut w = entry("null", "does nothing");
    w.params.push(list::Param {
        name: "sleep",
        help: "how long",
        kind: "duration".into(),
        default: Some("0"),
    });
    let listing = list::Listing {
        studies: vec![entry("quick", "a first look")],
        workloads: vec![w],
        monitors: vec![],
        parsers: vec![],
        knobs: vec![entry("cpuidle", "idle states")],
    };
    let view = list::view(&listing).unwrap();
    assert_eq!(
        view.text(),
        "Studies (perflab run STUDY):\n  quick        a first look\n\n\
         Workloads (perflab run --workload NAME -p param=value):\n  null         does nothing\n      \
         sleep        how long (duration) [default: 0]\n\n\
         Monitors (--monitors a,b):\n\n\
         Parsers (exec -p parser=NAME, perflab import --parser NAME):\n\n\
         Knobs (--variant NAME:knob=value):\n  cpuidle      idle states\n"
    );
    let json = view.json();
    assert_eq!(
        keys(&json),
        set(["studies", "workloads", "monitors", "parsers", "knobs"])
    );
    assert_eq!(json["workloads"][0]["params"][0]["default"], "0");
    assert!(json["studies"][0].get("params").is_none());
}

#[test]
fn doctor_prints_the_findings_text_under_the_tree_it_read() {
    #[derive(serde::Serialize)]
    struct Finding {
        name: &'static str,
    }
    let findings = [Finding { name: "cpuidle" }];
    let text = "ok       cpuidle  haltpoll\n";
    let here = doctor::view(&findings, text, None).unwrap();
    assert_eq!(here.text(), text);
    let there = doctor::view(&findings, text, Some(std::path::Path::new("/fx"))).unwrap();
    assert_eq!(there.text(), format!("(reading the tree at /fx)\n{text}"));
    assert_eq!(
        there.json()["checks"],
        serde_json::json!([{ "name": "cpuidle" }])
    );
}

/// The commands a view names reach the database the run is in: the span comparisons left
/// out say `perflab show 41 --db … --format json` (issue 31 item 8: a hint without the
/// `--db` reads another database's run 41), and a run none of whose measurements
/// succeeded ends with its summary, not a comparison that has no metric to compare.
#[test]
fn a_views_hints_name_the_database_and_a_run_that_all_failed_has_a_summary() {
    let (info, ms) = (common::spans::run_info(41), common::spans::records(true));
    let spans = perflab_report::views::parts::span_sections(&info, &ms, 0, " --db /tmp/r.db");
    let more = spans.more.expect("comparisons left out");
    assert!(
        more.ends_with("`perflab show 41 --db /tmp/r.db --format json` has them all"),
        "{more}"
    );

    let (info, mut ms) = (common::run_info(7), common::records(1.0, None));
    for m in &mut ms {
        m.status = perflab_core::record::MeasurementStatus::Failed("died".into());
    }
    let after = after_run::AfterRun::of(&info, &ms, None, || "/nowhere".into()).unwrap();
    let view = after_run::EndView::of(&info, &ms, after, (usize::MAX, "")).unwrap();
    assert!(view.variants.is_empty());
    assert!(view.summary.is_some());
}
