//! The whole report (`perflab report`) over hand-made runs: what a person reads in the
//! terminal, in Markdown and in a 72-column mail is snapshot-tested; the HTML page is
//! checked for one figure per plot kind and nothing that would load from the network.

use crate::common;

use common::more::{latency_run, threads_run};
use common::xfer::{self, V164_2M, V164_4K, VEOS_2M, VEOS_4K};
use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_report::full::{build_report, FullReport, ReportOptions, RunData};

fn data(info: RunInfo, ms: Vec<MeasurementRecord>) -> RunData {
    RunData { info, ms }
}

fn report(runs: &[RunData], figures: bool) -> FullReport {
    let opts = ReportOptions {
        figures,
        ..ReportOptions::default()
    };
    build_report(runs, &opts).expect("the report builds")
}

/// The seed's CPU-pair study: `all` against `poll-only`, one run.
fn pairs() -> Vec<RunData> {
    vec![data(common::run_info(1), common::records(1.0, None))]
}

/// The seed's transfer scans, veos 1.2.2 then v1_64_96, on different setups.
fn scans() -> Vec<RunData> {
    let fp = |kernel: &str, cmdline: &str, version: &str| {
        perflab_core::Fingerprint::from_json(serde_json::json!({
            "hostname": "ve-host", "kernel": kernel, "cmdline": cmdline,
            "cpufreq_governor": "performance", "thp": "always", "isolated_cpus": "none",
            "perflab_version": version,
        }))
    };
    let mut a = xfer::run(11, "veos 1.2.2");
    a.fingerprint = fp("4.18.0-193", "ro quiet", "0.1.0");
    let mut b = xfer::run(12, "v1_64_96");
    b.fingerprint = fp("4.18.0-240", "ro quiet isolcpus=2-7", "0.1.0");
    let never = |_: &str, _: &str, _: u64, _: u32| false;
    vec![
        data(
            a,
            xfer::scan(&["pvm"], &[("4k", &VEOS_4K), ("2m", &VEOS_2M)], 0, never),
        ),
        data(
            b,
            xfer::scan(&["pvm"], &[("4k", &V164_4K), ("2m", &V164_2M)], 2, never),
        ),
    ]
}

fn latency() -> Vec<RunData> {
    let (i, ms) = latency_run(21);
    vec![data(i, ms)]
}

fn threads() -> Vec<RunData> {
    let (i, ms) = threads_run(31);
    vec![data(i, ms)]
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn pair_study_markdown_and_mail() {
    let r = report(&pairs(), false);
    insta::assert_snapshot!("pairs_markdown", r.markdown());
    insta::assert_snapshot!("pairs_mail", r.mail());
}

#[test]
fn scan_runs_markdown_and_mail() {
    let r = report(&scans(), false);
    insta::assert_snapshot!("scans_markdown", r.markdown());
    insta::assert_snapshot!("scans_mail", r.mail());
}

#[test]
fn latency_and_threads_mail() {
    insta::assert_snapshot!("latency_mail", report(&latency(), false).mail());
    insta::assert_snapshot!("threads_mail", report(&threads(), false).mail());
}

#[test]
fn mail_is_never_wider_than_72_columns() {
    for runs in [pairs(), scans(), latency(), threads()] {
        let r = report(&runs, true);
        let mail = r.mail();
        assert!(widest(&mail) <= 72, "{} columns:\n{mail}", widest(&mail));
        // The terminal form is not narrowed: the same report has wider lines there.
        assert!(widest(&r.text()) >= widest(&mail));
    }
}

#[test]
fn differing_setups_head_the_report_and_are_compared_anyway() {
    let r = report(&scans(), false);
    let text = r.text();
    let env = text
        .find("WARNING: the runs come from different setups")
        .unwrap();
    let comparison = text
        .find("bandwidth_mib_s: v1_64_96 vs veos 1.2.2")
        .unwrap();
    assert!(env < comparison, "{text}");
    for needle in ["kernel command line", "ro quiet isolcpus=2-7", "4.18.0-240"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let json = r.json();
    let diffs = json["environment"].as_array().unwrap();
    assert_eq!(diffs.len(), 2, "{diffs:?}");
    // Identical setups say so instead.
    let same = report(&[scans().remove(0), scans().remove(0)], false).text();
    assert!(same.contains("The runs' fingerprints match"), "{same}");
}

#[test]
fn significant_pairs_name_the_telemetry_that_moved() {
    let r = report(&pairs(), false);
    let text = r.text();
    let at = text.find("What changed with it").expect(&text);
    let section = &text[at..];
    assert!(section.contains("4-24"), "{section}");
    let json = r.json();
    let changes = json["comparison"][0]["changes"].as_array().unwrap();
    assert!(!changes.is_empty());
    for c in changes {
        assert!(
            ["better", "WORSE", "changed"].contains(&c["verdict"].as_str().unwrap_or("")),
            "only rows that moved: {c}"
        );
    }
}

#[test]
fn html_has_every_plot_kind_and_loads_nothing() {
    let pages = [
        ("pairs", report(&pairs(), true).html()),
        ("scans", report(&scans(), true).html()),
        ("latency", report(&latency(), true).html()),
        ("threads", report(&threads(), true).html()),
    ];
    let count = |page: &str, kind: &str| page.matches(&format!("data-plot=\"{kind}\"")).count();
    let kinds = |name: &str| &pages.iter().find(|p| p.0 == name).unwrap().1;
    // The pair map (one anchor: bars), the distribution histogram, interrupts per CPU.
    assert!(count(kinds("pairs"), "bar") >= 3, "{}", kinds("pairs"));
    // One curve chart per scan section (4k and 2m).
    assert_eq!(count(kinds("scans"), "line"), 2);
    // A CDF (line) and a percentile chart per load.
    assert_eq!(count(kinds("latency"), "line"), 2);
    assert_eq!(count(kinds("latency"), "percentile"), 2);
    assert_eq!(count(kinds("threads"), "timeline"), 1);
    for (name, page) in &pages {
        assert!(page.starts_with("<!DOCTYPE html>"), "{name}");
        let outside = page
            .replace("http://www.w3.org/2000/svg", "")
            .to_lowercase();
        for needle in [
            "http:", "https:", "src=", "url(", "@import", "<script", "<link",
        ] {
            assert!(!outside.contains(needle), "{name}: {needle}");
        }
        for fig in page.split("<figure class=\"plot\"").skip(1) {
            assert!(fig.contains("data-x-axis=\"") && fig.contains("data-y-axis=\""));
            assert!(fig.contains("<svg") && fig.contains("</svg>"));
        }
    }
}

#[test]
fn a_single_variant_run_gets_its_summary_and_a_curve() {
    let never = |_: &str, _: &str, _: u64, _: u32| false;
    let runs = vec![data(
        xfer::run(41, "veos 1.2.2"),
        xfer::scan(&["pvm"], &[("4k", &VEOS_4K)], 0, never),
    )];
    let r = report(&runs, true);
    let html = r.html();
    assert_eq!(html.matches("data-plot=\"line\"").count(), 1, "{html}");
    assert!(r.text().contains("Results of run 41 \"veos 1.2.2\""));
}

#[test]
fn no_runs_is_an_error() {
    assert!(build_report(&[], &ReportOptions::default()).is_err());
}

/// A side none of whose measurements counted (every poll-only one ineffective, as on a
/// machine whose idle driver ignores `disable`) draws no per-CPU bars, and its legend
/// says so, rather than bars of 0 beside the other side's.
#[test]
fn a_side_with_no_counted_measurement_draws_no_per_cpu_bars() {
    let mut ms = common::records(1.0, None);
    for m in ms.iter_mut().filter(|m| m.variant == "poll-only") {
        m.status = perflab_core::record::MeasurementStatus::Ineffective(
            "state1 was entered 90 times".into(),
        );
    }
    let page = report(&[data(common::run_info(1), ms)], true).html();
    let per_cpu: Vec<&str> = page
        .split("<figure class=\"plot\"")
        .filter(|f| f.contains(" per CPU: "))
        .collect();
    assert!(!per_cpu.is_empty(), "{page}");
    for fig in per_cpu {
        assert!(fig.contains("poll-only (no measurement counted)"), "{fig}");
    }
}

/// One outlier is one repetition: the line read "1 repetitions outside Tukey's fences"
/// (the KVM fixture's pair 0-1 has one, rep 4).
#[test]
fn one_outlier_repetition_is_counted_in_the_singular() {
    let runs = vec![data(common::kvm::run_info(3), common::kvm::records())];
    let mail = report(&runs, false).mail();
    assert!(
        mail.contains("1 repetition outside Tukey's fences"),
        "{mail}"
    );
    assert!(!mail.contains("1 repetitions"), "{mail}");
}
