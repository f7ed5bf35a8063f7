//! A run that measured one variant only: its summary, the per-pair drill-down and the
//! drill-down directory, in the shape of an idle-ipi run on a 2-vCPU KVM guest.

use crate::common;

use common::kvm;
use perflab_report::{
    measured_variants, render_single_pair, summarize_run, write_single_drilldown, ReportError,
};
use perflab_report::{Format, Section};
use perflab_stats::StatsConfig;

#[test]
fn kvm_summary_text() {
    let t = summarize_run(
        &kvm::run_info(3),
        &kvm::records(),
        None,
        &StatsConfig::default(),
    )
    .unwrap();
    insta::assert_snapshot!("kvm_summary", t.render(Format::Text));
}

#[test]
fn two_variant_run_summary_text() {
    let t = summarize_run(
        &common::run_info(7),
        &common::records(1.0, None),
        None,
        &StatsConfig::default(),
    )
    .unwrap();
    insta::assert_snapshot!("seed_summary", t.render(Format::Text));
}

#[test]
fn kvm_single_pair_0_1() {
    let text = render_single_pair(&kvm::run_info(3), &kvm::records(), "all", 0, 1).unwrap();
    insta::assert_snapshot!("kvm_pair_0_1", text);
}

#[test]
fn kvm_drilldown_writes_exactly_the_expected_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = kvm::run_info(3);
    let written =
        write_single_drilldown(dir.path(), &run, &kvm::records(), "all", &run.unavailable).unwrap();
    let rel: Vec<String> = written
        .iter()
        .map(|p| {
            p.strip_prefix(dir.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        rel,
        [
            "unpaired/CPUS-0-0-summary",
            "unpaired/CPUS-0-1-summary",
            "distribution.txt"
        ]
    );
    // Nothing else in the directory: no bucket directories for a comparison never made.
    let mut on_disk: Vec<String> = walk(dir.path())
        .into_iter()
        .map(|p| {
            p.strip_prefix(dir.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    on_disk.sort();
    let mut expected = rel.clone();
    expected.sort();
    assert_eq!(on_disk, expected);
    let dist = std::fs::read_to_string(dir.path().join("distribution.txt")).unwrap();
    insta::assert_snapshot!("kvm_distribution", dist);
    let pair = std::fs::read_to_string(dir.path().join("unpaired/CPUS-0-1-summary")).unwrap();
    assert_eq!(
        pair,
        render_single_pair(&run, &kvm::records(), "all", 0, 1).unwrap()
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn measured_variants_follow_the_plan_order() {
    let mut ms = common::records(1.0, None);
    assert_eq!(measured_variants(&ms), ["poll-only", "all"]);
    ms.reverse();
    assert_eq!(
        measured_variants(&ms),
        ["poll-only", "all"],
        "by seq, not slice order"
    );
    assert_eq!(measured_variants(&kvm::records()), ["all"]);
    assert!(measured_variants(&[]).is_empty());
}

#[test]
fn summary_rows_json_and_outliers() {
    let t = summarize_run(
        &kvm::run_info(3),
        &kvm::records(),
        None,
        &StatsConfig::default(),
    )
    .unwrap();
    assert_eq!(t.rows.len(), 2);
    let quiet = t.pair_row(0, 0, "all").unwrap();
    assert_eq!((quiet.n_ok, quiet.failed), (5, 0));
    assert_eq!(quiet.warning, None);
    let noisy = t.pair_row(0, 1, "all").unwrap();
    assert_eq!(noisy.outlier_reps, [4]);
    assert!(noisy.ci_half_width_pct.unwrap() > 1.0);
    assert!(noisy
        .warning
        .as_deref()
        .unwrap()
        .contains("repetitions (now 5)"));
    let json: serde_json::Value = serde_json::from_str(&t.to_json().unwrap()).unwrap();
    assert_eq!(json["metric"]["name"], "round_trips_per_sec");
    assert_eq!(json["rows"][1]["label"], "0-1");
    assert_eq!(json["rows"][1]["outlier_reps"][0], 4);
    assert_eq!(json["rows"][1]["summary"]["n"], 5);
    assert_eq!(json["unavailable"][0]["variant"], "poll-only");
}

#[test]
fn summary_of_failed_or_empty_runs_says_why() {
    let run = kvm::run_info(3);
    let cfg = StatsConfig::default();
    let mut ms = kvm::records();
    for m in &mut ms {
        m.status = perflab_core::record::MeasurementStatus::Failed("ctxsw: boom".into());
    }
    let t = summarize_run(&run, &ms, None, &cfg).unwrap();
    assert!(t.metric.is_none());
    assert_eq!(t.rows.iter().map(|r| r.failed).sum::<u32>(), 10);
    let text = t.render(Format::Text);
    assert!(text.contains("no successful measurement"), "{text}");
    assert!(text.contains("first: seq 0: ctxsw: boom"), "{text}");
    let t = summarize_run(&run, &[], None, &cfg).unwrap();
    assert!(t.rows.is_empty());
    assert!(t
        .render(Format::Text)
        .contains("no measurement has finished yet"));
    let e = summarize_run(&run, &kvm::records(), Some("bogus"), &cfg).unwrap_err();
    assert!(matches!(e, ReportError::NoSuchMetric { .. }), "{e}");
}

#[test]
fn single_repetitions_are_flagged_and_few_repetitions_noted() {
    let run = kvm::run_info(3);
    let cfg = StatsConfig::default();
    let mut ms = kvm::records();
    ms.retain(|m| m.rep == 0 || (m.params.int("cpu_b").unwrap() == 0 && m.rep < 3));
    let t = summarize_run(&run, &ms, None, &cfg).unwrap();
    let one = t.pair_row(0, 1, "all").unwrap();
    assert!(one
        .warning
        .as_deref()
        .unwrap()
        .contains("single repetition"));
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("row(s) have fewer than 2 repetitions: a median, but no spread")),
        "{:?}",
        t.notes
    );
    let text = t.render(Format::Text);
    assert!(text.contains("n/a"), "{text}");
}

#[test]
fn single_pair_errors_name_what_exists() {
    let run = kvm::run_info(3);
    let ms = kvm::records();
    let e = render_single_pair(&run, &ms, "all", 0, 5).unwrap_err();
    assert!(matches!(e, ReportError::NoSuchPair { .. }));
    assert!(e.to_string().contains("0,0 0,1"), "{e}");
    let e = render_single_pair(&run, &ms, "poll-only", 0, 1).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("no cpuidle driver") && text.contains("(variants measured: all)"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(write_single_drilldown(dir.path(), &run, &ms, "poll-only", &[]).is_err());
}

#[test]
fn same_cpu_pair_shows_one_cpu_and_measured_variant_leads_when_it_is_the_baseline() {
    let mut run = kvm::run_info(3);
    let ms = kvm::records();
    let text = render_single_pair(&run, &ms, "all", 0, 0).unwrap();
    assert!(text.contains("CPU 0: Total IRQs"), "{text}");
    assert!(!text.contains("CPU 1:"), "{text}");
    let poll = text.find("With poll-only").unwrap();
    let all = text.find("With all").unwrap();
    assert!(
        poll < all,
        "the missing baseline comes first, as in the seed"
    );
    run.spec.compare.baseline = Some("all".into());
    let text = render_single_pair(&run, &ms, "all", 0, 0).unwrap();
    assert!(text.find("With all").unwrap() < text.find("With poll-only").unwrap());
}

#[test]
fn drilldown_without_a_named_missing_variant_and_with_repeated_pairs() {
    let run = kvm::run_info(3);
    let mut ms = kvm::records();
    // The same pairs again at a second grid point with another mechanism.
    let extra: Vec<_> = ms
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.point += 2;
            m.seq += 100;
            m.params.0.insert(
                "mechanism".into(),
                perflab_core::ParamValue::Str("futex".into()),
            );
            m
        })
        .collect();
    ms.extend(extra);
    let dir = tempfile::tempdir().unwrap();
    let written = write_single_drilldown(dir.path(), &run, &ms, "all", &[]).unwrap();
    assert_eq!(written.len(), 5);
    assert!(dir.path().join("unpaired/CPUS-0-1-summary-point3").exists());
    let dist = std::fs::read_to_string(dir.path().join("distribution.txt")).unwrap();
    assert!(
        dist.starts_with("No regression distribution: run 3 measured only all"),
        "{dist}"
    );
    let t = summarize_run(&run, &ms, None, &StatsConfig::default()).unwrap();
    let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "0-0 mechanism=pipe",
            "0-1 mechanism=pipe",
            "0-0 mechanism=futex",
            "0-1 mechanism=futex"
        ]
    );
    let pair = std::fs::read_to_string(dir.path().join("unpaired/CPUS-0-0-summary")).unwrap();
    assert!(
        pair.contains("Percentage regression : n/a (only all was measured)"),
        "{pair}"
    );
}
