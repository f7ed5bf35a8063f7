//! Telemetry, B against A (issue 34 item 8, seed 003): the counters and the other
//! telemetry a variant is meant to move get the headline's columns (medians per side,
//! change, interval) and no verdict; each row says which repetitions it is from.

use crate::common;

use common::xfer;
use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role};
use perflab_core::{Better, Metric, ParamValue, TelemetryRow, Unit, WorkloadOutput};
use perflab_report::tables::telemetry_ab::{telemetry_ab, Reps, Series, TelemetryAb};
use perflab_report::{compare_runs, compare_variants, Format, Section};
use perflab_stats::StatsConfig;

/// Seed 003's counts (without and with the PIR copy), each repetition a little off.
const L1_MISSES: [f64; 2] = [8_279_458.0, 7_762_311.0];
const LLC_MISSES: [f64; 2] = [10_476.0, 23_691.0];
const JITTER: [f64; 4] = [1.0, 1.004, 0.997, 1.002];

fn counter(key: &str, value: f64) -> TelemetryRow {
    TelemetryRow::new("counters", key, key, None, value, Unit::Count)
}

fn irq(key: &str, label: &str, cpu: u32, value: f64) -> TelemetryRow {
    TelemetryRow::new("interrupts", key, label, Some(cpu), value, Unit::Count)
}

/// An irq-fill run of variants `base` and `pir` pinned to CPU 0: 4 headline repetitions
/// each (bandwidth, interrupts), then 4 telemetry ones (the counters, which disturb).
fn records() -> Vec<MeasurementRecord> {
    let mut out = Vec::new();
    for (role, reps) in [(Role::Headline, 0..4u32), (Role::Telemetry, 0..4u32)] {
        for rep in reps {
            for (v, variant) in ["base", "pir"].into_iter().enumerate() {
                let j = JITTER[(rep as usize + v) % 4];
                let telemetry = match role {
                    Role::Headline => vec![
                        irq("LOC", "Local timer interrupts", 0, 6000.0 * j),
                        // The device interrupt the variant steers away from CPU 0.
                        irq(
                            "41",
                            "PCI-MSI 49152-edge virtio0-input.0",
                            0,
                            [300.0, 30.0][v] * j,
                        ),
                        irq("LOC", "Local timer interrupts", 1, 900.0),
                    ],
                    Role::Telemetry => vec![
                        counter("L1-dcache-load-misses", L1_MISSES[v] * j),
                        counter("LLC-load-misses", LLC_MISSES[v] * j),
                        counter("cpu-migrations", 0.0),
                        counter("LLC-load-misses:running_pct", 80.0),
                        // Per CPU: not a total, not in the table.
                        TelemetryRow::new("counters", "page-faults", "", Some(0), 5.0, Unit::Count),
                    ],
                };
                let mut params = xfer::params("fill", 1024);
                params.0.insert("cpu".into(), ParamValue::Int(0));
                out.push(MeasurementRecord {
                    seq: out.len() as u32,
                    point: 0,
                    params,
                    variant: variant.into(),
                    rep,
                    status: MeasurementStatus::Ok,
                    started_at: 0.0,
                    elapsed_s: 0.3,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new(
                            "bandwidth_mib_s",
                            [4944.0, 5029.0][v] * j,
                            Unit::MibPerSecond,
                            Better::Higher,
                        )],
                        ..Default::default()
                    },
                    telemetry,
                    role,
                    monitors: Vec::new(),
                });
            }
        }
    }
    out
}

fn table() -> TelemetryAb {
    let ms = records();
    let cfg = StatsConfig::default();
    let info = xfer::run(1, "irq-fill");
    let t = compare_variants(&info, &ms, "base", "pir", None, &cfg).unwrap();
    telemetry_ab(&t, &ms, &ms, &cfg).expect("telemetry recorded")
}

fn row<'a>(
    t: &'a TelemetryAb,
    name: &str,
) -> &'a perflab_report::tables::telemetry_ab::TelemetryAbRow {
    t.rows
        .iter()
        .find(|r| r.series.name() == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", t.rows))
}

#[test]
fn counters_get_medians_change_and_interval_from_the_telemetry_repetitions() {
    let t = table();
    let l1 = row(&t, "L1-dcache-load-misses");
    assert_eq!(
        l1.series,
        Series::Counter {
            key: "L1-dcache-load-misses".into()
        }
    );
    assert_eq!((l1.reps, l1.n_a, l1.n_b), (Reps::Telemetry, 4, 4));
    // Medians of 4 jittered values: the middle two's mean.
    let med = |base: f64| base * (1.002 + 1.0) / 2.0;
    assert!((l1.median_a - med(L1_MISSES[0])).abs() < 1e-6, "{l1:?}");
    let change = l1.change_pct.unwrap();
    assert!((change - (-6.25)).abs() < 0.5, "{l1:?}");
    let (lo, hi) = l1.interval_pct.expect("4 values a side have a spread");
    assert!(lo < change && change < hi && hi < 0.0, "{l1:?}");
    assert!((l1.level - 0.95).abs() < 1e-9);
    let llc = row(&t, "LLC-load-misses");
    assert!(llc.change_pct.unwrap() > 100.0, "{llc:?}");
    // The multiplexing share and the per-CPU rows are not totals; zeros moved nothing.
    assert!(!t
        .rows
        .iter()
        .any(|r| r.series.name().contains("running_pct")));
    assert!(!t.rows.iter().any(|r| r.series.name() == "page-faults"));
    assert_eq!(t.all_zero, ["cpu-migrations"]);
}

#[test]
fn interrupts_on_the_measured_cpu_come_from_the_headline_repetitions() {
    let t = table();
    let dev = row(&t, "device interrupts on CPU 0");
    assert_eq!((dev.reps, dev.n_a, dev.n_b), (Reps::Headline, 4, 4));
    assert!((dev.change_pct.unwrap() - (-90.0)).abs() < 1.0, "{dev:?}");
    let all = row(&t, "interrupts on CPU 0");
    assert!(all.median_a > 6000.0 && all.median_b > 6000.0, "{all:?}");
    // CPU 1 is not the measured CPU.
    assert!(!t.rows.iter().any(|r| r.series.name().contains("CPU 1")));
}

/// Seed 003 itself: two runs of one measurement each (two imported perf stat files).
/// One value a side has a change and no interval.
#[test]
fn two_runs_of_one_value_each_have_a_change_and_no_interval() {
    let ms = records();
    let one = |variant: &str| -> Vec<MeasurementRecord> {
        ms.iter()
            .filter(|m| m.variant == variant && (m.rep == 0))
            .cloned()
            .map(|mut m| {
                m.variant = "default".into();
                m
            })
            .collect()
    };
    let (a, b) = (one("base"), one("pir"));
    let cfg = StatsConfig::default();
    let (ra, rb) = (xfer::run(1, "without"), xfer::run(2, "with"));
    let t = compare_runs(&ra, &a, &rb, &b, None, &cfg).unwrap();
    let x = telemetry_ab(&t, &a, &b, &cfg).unwrap();
    let l1 = row(&x, "L1-dcache-load-misses");
    assert_eq!((l1.n_a, l1.n_b), (1, 1));
    assert!(
        (l1.change_pct.unwrap() - (7_762_311.0 * 1.004 / 8_279_458.0 - 1.0) * 100.0).abs() < 1e-6
    );
    assert_eq!(l1.interval_pct, None);
    assert!(x.render(Format::Text).contains("n/a"));
}

#[test]
fn no_telemetry_no_table() {
    let mut ms = records();
    ms.retain(|m| m.role == Role::Headline);
    for m in &mut ms {
        m.telemetry.clear();
    }
    let cfg = StatsConfig::default();
    let t = compare_variants(&xfer::run(1, "x"), &ms, "base", "pir", None, &cfg).unwrap();
    assert!(telemetry_ab(&t, &ms, &ms, &cfg).is_none());
}

/// No verdict word in any format: telemetry is described, not tested.
fn no_verdict(text: &str) {
    for word in ["better", "WORSE", "worse", "same", "undecided", "p adj"] {
        let hit = text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == word);
        assert!(!hit, "{word} in {text}");
    }
}

#[test]
fn telemetry_ab_text() {
    let text = table().render(Format::Text);
    no_verdict(&text);
    insta::assert_snapshot!("telemetry_ab_text", text);
}

#[test]
fn telemetry_ab_mail() {
    let mail = table().render(Format::Mail);
    assert!(mail.lines().all(|l| l.chars().count() <= 72), "{mail}");
    no_verdict(&mail);
    insta::assert_snapshot!("telemetry_ab_mail", mail);
}

#[test]
fn telemetry_ab_markdown() {
    let md = table().render(Format::Markdown);
    no_verdict(&md);
    insta::assert_snapshot!("telemetry_ab_markdown", md);
}

#[test]
fn telemetry_ab_html() {
    let html = table().render(Format::Html);
    let start = html.find("<body>").unwrap() + "<body>".len();
    let end = html.rfind("</body>").unwrap();
    assert!(!html[start..end].contains("verdict-"), "no verdict class");
    no_verdict(&html[start..end]);
    insta::assert_snapshot!("telemetry_ab_html", &html[start..end]);
}

#[test]
fn telemetry_ab_json() {
    let j = table().json().unwrap();
    let rows = j["rows"].as_array().unwrap();
    assert!(rows
        .iter()
        .all(|r| r.get("verdict").is_none() && r.get("p_value").is_none()));
    assert_eq!(rows[0]["series"]["kind"], "counter");
    assert_eq!(rows[0]["reps"], "telemetry");
}

/// A CPU-pair study (seed 004's shape): the idle entries of each pair's two CPUs, not
/// their interrupts; in `report`, a table over several points is one line naming the
/// command that prints it, so the report stays short.
#[test]
fn cpu_pairs_give_idle_entries_and_the_report_a_pointer() {
    let info = common::run_info(7);
    let ms = common::records(1.0, Some(&[0, 8]));
    let cfg = StatsConfig::default();
    let t = compare_variants(&info, &ms, "poll-only", "all", None, &cfg).unwrap();
    let x = telemetry_ab(&t, &ms, &ms, &cfg).expect("cpuidle recorded");
    let names: Vec<String> = x.rows.iter().map(|r| r.series.name()).collect();
    assert!(
        names.contains(&"idle entries on CPU 4".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"idle entries on CPU 8".to_string()),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("interrupts")), "{names:?}");
    let blocks = x.report_blocks(&t);
    assert_eq!(blocks.len(), 1);
    let text = perflab_report::section::render(&[&x], Format::Text);
    assert!(text.contains("idle entries on CPU 8"), "{text}");
    match &blocks[0] {
        perflab_report::doc::Block::Note(line) => assert!(
            line.ends_with("perflab compare 7 --variants poll-only,all --section telemetry"),
            "{line}"
        ),
        other => panic!("{other:?}"),
    }
}
