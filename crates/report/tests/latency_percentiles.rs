//! The latency percentile table (p50, p90, p99, p99.9, max) of ctxsw and netrr runs in
//! every format, and its figures against the percentiles of all round trips together.

use crate::common;

use common::more::{ctxsw_run, latency_run};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::latency_percentiles;
use perflab_report::{Format, Section};

/// Equal but for the last bits of a unit conversion.
fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        (a, b) => a == b,
    }
}

#[test]
fn ctxsw_percentiles_in_every_format() {
    let (info, ms) = ctxsw_run(5);
    let t = latency_percentiles(&[(&info, &ms)]).expect("a table");
    insta::assert_snapshot!("ctxsw_percentiles_text", t.render(Format::Text));
    insta::assert_snapshot!("ctxsw_percentiles_markdown", t.render(Format::Markdown));
    let mail = t.render(Format::Mail);
    assert!(mail.lines().all(|l| l.chars().count() <= 72), "{mail}");
    insta::assert_snapshot!("ctxsw_percentiles_mail", mail);
    insta::assert_snapshot!(
        "ctxsw_percentiles_json",
        serde_json::to_string_pretty(&t).unwrap()
    );
}

#[test]
fn netrr_percentiles_of_two_runs_name_the_run() {
    let (a, ms_a) = latency_run(21);
    let (b, ms_b) = latency_run(22);
    let t = latency_percentiles(&[(&a, &ms_a), (&b, &ms_b)]).expect("a table");
    assert_eq!(t.rows.len(), 8);
    insta::assert_snapshot!("netrr_percentiles_two_runs_text", t.render(Format::Text));
}

#[test]
fn the_figures_are_those_of_every_round_trip_pooled() {
    let (info, ms) = ctxsw_run(5);
    let t = latency_percentiles(&[(&info, &ms)]).unwrap();
    assert_eq!(t.rows.len(), 4);
    for row in &t.rows {
        let mine: Vec<_> = ms
            .iter()
            .filter(|m| m.variant == row.variant)
            .filter(|m| format!("0-{}", m.params.get("cpu_b").unwrap()) == row.point)
            .collect();
        assert_eq!(row.reps as usize, mine.len());
        let mut all = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for m in &mine {
            let h: Histogram<u64> = Deserializer::new()
                .deserialize(&mut &m.output.histograms[0].encoded[..])
                .unwrap();
            all.add(&h).unwrap();
        }
        assert_eq!(row.count, all.len());
        let us = |q: f64| all.value_at_quantile(q) as f64 / 1000.0;
        assert!(close(row.p50, Some(us(0.5))), "{row:?}");
        assert!(close(row.p90, Some(us(0.9))), "{row:?}");
        assert!(close(row.p99, Some(us(0.99))), "{row:?}");
        // 3 x 201 round trips cannot support p99.9; 3 x 401 can.
        assert_eq!(row.p999.is_some(), all.len() >= 1000, "{row:?}");
        assert!(close(Some(row.max), Some(all.max() as f64 / 1000.0)));
        assert!(!row.approximate);
    }
}

#[test]
fn without_encoded_histograms_the_row_is_marked_approximate() {
    let (info, mut ms) = ctxsw_run(5);
    for m in &mut ms {
        m.output.histograms[0].encoded.clear();
    }
    let t = latency_percentiles(&[(&info, &ms)]).unwrap();
    assert!(t.rows.iter().all(|r| r.approximate));
    let text = t.render(Format::Text);
    assert!(
        text.contains("pipe ~") && text.contains("medians over the"),
        "{text}"
    );
    // The median over repetitions of each stored p50.
    let p50s: Vec<f64> = ms
        .iter()
        .filter(|m| m.variant == "pipe" && m.point == 0)
        .map(|m| m.output.histograms[0].p50 / 1000.0)
        .collect();
    assert!(close(t.rows[0].p50, perflab_stats::median(p50s)));
}

#[test]
fn a_run_without_latency_histograms_has_no_table() {
    let (info, mut ms) = ctxsw_run(5);
    for m in &mut ms {
        m.output.histograms.clear();
    }
    assert!(latency_percentiles(&[(&info, &ms)]).is_none());
}

#[test]
fn the_full_report_carries_the_table_in_text_markdown_mail_and_json() {
    let (info, ms) = ctxsw_run(5);
    let opts = ReportOptions {
        figures: false,
        ..ReportOptions::default()
    };
    let r = build_report(&[RunData { info, ms }], &opts).unwrap();
    for (format, out) in [
        ("text", r.text()),
        ("markdown", r.markdown()),
        ("mail", r.mail()),
    ] {
        assert!(
            out.contains("Latency percentiles in µs") && out.contains("p99.9"),
            "{format}: {out}"
        );
    }
    let json = r.json();
    let rows = json["latency"]["percentiles"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert!(rows[0]["p90"].is_f64(), "{}", rows[0]);
}

/// Histograms cut off at a fixed range (cyclictest's `-h 50`): percentiles among the
/// overflowed samples read `≥50.00`, never a value made up for them, and the maximum is
/// the tool's own (issue 21).
#[test]
fn percentiles_past_a_histogram_range_read_as_at_least_its_end() {
    let (info, mut ms) = ctxsw_run(5);
    for (i, m) in ms.iter_mut().enumerate() {
        let mut in_range = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        in_range.record_n(20_000, 900).unwrap();
        in_range.record_n(40_000, 50).unwrap();
        // Two tails: one a few samples past the range, one mostly past it.
        let over = if m.variant == info.spec.variants[0].name {
            20
        } else {
            900
        };
        let max = 100_000.0 + 1_000.0 * i as f64;
        m.output.histograms[0] = perflab_core::HistogramData::censored(
            "rtt",
            perflab_core::Unit::Nanoseconds,
            &in_range,
            perflab_core::AboveRange {
                limit: 50_000.0,
                count: over,
            },
            (20_000.0, 30_000.0, max),
        );
    }
    let t = latency_percentiles(&[(&info, &ms)]).expect("a table");
    insta::assert_snapshot!("censored_percentiles_text", t.render(Format::Text));
    for r in &t.rows {
        assert!(r.above.is_some() && r.max >= 100.0, "{r:?}");
    }
}
