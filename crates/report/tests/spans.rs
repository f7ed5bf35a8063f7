//! The trace monitor's spans in the reports: the breakdown per point and variant, seed
//! 001's layout, the A/B comparison (no load against 3 bulk streams, and path against
//! path) with the verdicts every metric gets, and nothing at all for a run that did not
//! trace. Records are synthetic, shaped by the monitor's output contract.

use crate::common;

use common::spans::{records, run_info};
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::{seed_span_table, span_comparisons, span_table};
use perflab_report::{Format, Section};
use perflab_stats::{StatsConfig, Verdict};

fn report(traced: bool, figures: bool) -> perflab_report::full::FullReport {
    let runs = vec![RunData {
        info: run_info(41),
        ms: records(traced),
    }];
    let opts = ReportOptions {
        figures,
        ..ReportOptions::default()
    };
    build_report(&runs, &opts).expect("the report builds")
}

#[test]
fn span_table_text() {
    let cfg = StatsConfig::default();
    let t = span_table(&run_info(41), &records(true), &cfg).expect("spans recorded");
    assert_eq!(t.groups.len(), 4);
    assert!(t.from_telemetry);
    let g = &t.groups[0];
    assert_eq!(
        (g.variant.as_str(), g.label.as_str()),
        ("loopback", "load_streams=0")
    );
    let keys: Vec<&str> = g.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        ["netrx.irq", "netrx.softirq", "netrx.vhost", "netrx.wakeup"]
    );
    // p50 of (a) over reps 0..3: 1500, 1520, 1540, 1560 ns → median 1.53 µs.
    let p50 = g.rows[0].p50().expect("matched");
    assert!((p50.median - 1.53).abs() < 1e-9, "{p50:?}");
    assert!(p50.ci.0 <= p50.median && p50.median <= p50.ci.1);
    assert!(!g.rows[2].matched());
    assert_eq!(g.rows[2].matches, 0.0);
    let text = t.render(Format::Text);
    assert!(text.contains("no events matched"), "{text}");
    assert!(text.contains("never a result"), "{text}");
    insta::assert_snapshot!("span_table_text", text);
}

#[test]
fn seed_layout_text() {
    let t = seed_span_table(&run_info(41), &records(true)).expect("netrr with spans");
    assert_eq!(t.paths.len(), 2);
    let p = &t.paths[0];
    assert_eq!(p.loads, ["no load", "3 streams"]);
    assert_eq!(p.reps, [4, 4]);
    // The latency is the traced repetitions' round trip: spans + 10 µs + 1.5 µs of
    // tracing, never the headline figure.
    let lat = p.latency[0].expect("latency");
    assert!((lat - (1.53 + 3.03 + 4.03 + 11.5)).abs() < 1e-9, "{lat}");
    insta::assert_snapshot!("span_seed_text", t.render(Format::Text));
}

#[test]
fn load_against_no_load_is_worse_with_the_usual_verdicts() {
    let cfg = StatsConfig::default();
    let (cs, total) = span_comparisons(&run_info(41), &records(true), &cfg, 12);
    // Per path, 3 streams against none; then veth against loopback at each load.
    let titles: Vec<&str> = cs.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "loopback: load_streams=3 vs load_streams=0",
            "veth: load_streams=3 vs load_streams=0",
            "veth vs loopback at load_streams=0",
            "veth vs loopback at load_streams=3",
        ]
    );
    assert_eq!(total, 4);
    let load = &cs[0];
    // Three matched spans, p50 and p99 each; (c) matched nothing on either side.
    assert_eq!(load.rows.len(), 6);
    assert_eq!(load.not_compared.len(), 2, "{:?}", load.not_compared);
    for r in &load.rows {
        assert_eq!(r.cmp.verdict, Verdict::Regressed, "{} {}", r.key, r.stat);
        assert!(r.cmp.p_adjusted < 0.05);
    }
    let wake = load
        .rows
        .iter()
        .find(|r| r.key == "netrx.wakeup" && r.stat == "p50")
        .expect("compared");
    // 4.03 µs → 10.03 µs: +6 µs, and the interval holds it.
    assert!((wake.cmp.b.median - wake.cmp.a.median - 6.0).abs() < 1e-9);
    assert!(wake.cmp.shift.ci.0 <= 6.0 && 6.0 <= wake.cmp.shift.ci.1);
    // veth against loopback: only (b)... every matched span is 1 µs slower on veth.
    assert!(cs[2]
        .rows
        .iter()
        .all(|r| r.cmp.verdict == Verdict::Regressed));
}

#[test]
fn identical_sides_get_no_verdict() {
    let cfg = StatsConfig::default();
    let mut ms = records(true);
    // veth's spans become loopback's, repetition for repetition.
    for m in ms.iter_mut().filter(|m| m.variant == "veth") {
        let streams = match m.params.get("load_streams") {
            Some(perflab_core::ParamValue::Int(n)) => *n,
            _ => 0,
        };
        if m.telemetry.iter().any(|t| t.source == "trace") {
            m.telemetry.retain(|t| t.source != "trace");
            m.telemetry
                .extend(common::spans::span_rows(streams, 0.0, m.rep));
        }
    }
    let (cs, _) = span_comparisons(&run_info(41), &ms, &cfg, 12);
    let same = cs
        .iter()
        .find(|c| c.title == "veth vs loopback at load_streams=0")
        .expect("compared");
    assert_eq!(same.rows.len(), 6);
    for r in &same.rows {
        assert!(
            !r.cmp.verdict.moved(),
            "{} {}: {:?}",
            r.key,
            r.stat,
            r.cmp.verdict
        );
        assert_eq!(r.cmp.b.median, r.cmp.a.median);
    }
}

#[test]
fn report_markdown_and_mail() {
    let r = report(true, false);
    insta::assert_snapshot!("spans_markdown", r.markdown());
    let mail = r.mail();
    assert!(
        mail.lines().all(|l| l.chars().count() <= 72),
        "wider than a mail:\n{mail}"
    );
    insta::assert_snapshot!("spans_mail", mail);
    assert_eq!(r.json()["spans"].as_array().map(Vec::len), Some(1));
}

#[test]
fn html_has_one_stacked_bar_per_path() {
    let html = report(true, true).html();
    assert_eq!(html.matches("data-plot=\"stacked\"").count(), 2);
    assert!(
        html.contains("not covered by a span"),
        "hover names the rest"
    );
    // The span that never matched has no bar; the legend says why.
    assert!(html.contains("(c) vhost worker woken → guest kicked (no events matched)"));
}

#[test]
fn without_trace_rows_there_is_no_span_section() {
    let ms = records(false);
    let cfg = StatsConfig::default();
    assert!(span_table(&run_info(41), &ms, &cfg).is_none());
    assert!(seed_span_table(&run_info(41), &ms).is_none());
    assert!(span_comparisons(&run_info(41), &ms, &cfg, 12).0.is_empty());
    let r = report(false, true);
    for text in [r.text(), r.markdown(), r.mail(), r.html()] {
        assert!(!text.contains("trace spans"), "{text}");
        assert!(!text.contains("Spans:"), "{text}");
    }
    assert_eq!(r.json()["spans"], serde_json::json!([]));
}

#[test]
fn spans_rank_in_what_changed_even_on_pinned_points() {
    let mut ms = records(true);
    // A pinned server: the CPUs involved are {1}; spans belong to no CPU and still count.
    for m in &mut ms {
        m.params
            .0
            .insert("server_cpu".into(), perflab_core::ParamValue::Int(1));
    }
    let info = run_info(41);
    let cfg = StatsConfig::default();
    let table = perflab_report::compare_variants(&info, &ms, "loopback", "veth", None, &cfg)
        .expect("compares");
    assert!(table
        .rows
        .iter()
        .all(|r| r.cmp.verdict == Verdict::Regressed));
    let changes = perflab_report::changes_for_table(&table, &ms, &ms, 3);
    assert_eq!(changes.len(), 2);
    let first = &changes[0];
    assert_eq!(first.cpus, [1]);
    let texts: Vec<&str> = first.changes.iter().map(|c| c.text.as_str()).collect();
    // Every matched span is 1 µs longer on veth (its p90 1.5 µs, its p99 3 µs); the
    // shortest span, (a), moves most relative to its length. Counts, means, maxima and
    // the unmatched starts are not listed; (c), which never matched, is not either.
    assert_eq!(
        texts,
        [
            "span netrx.irq p99: +3 us",
            "span netrx.irq p90: +1.5 us",
            "span netrx.irq p50: +1 us",
        ]
    );
    assert!(first.changes.iter().all(|c| c.source == "trace"));
}
