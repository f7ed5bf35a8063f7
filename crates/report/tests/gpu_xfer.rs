//! gpu-xfer's report on a hand-made run shaped like the H100 table of issue 25: the seed's
//! table with one column per host memory kind (text, Markdown, mail, HTML), its plot with
//! the PCIe link drawn, two driver versions against each other, and the copy engines'
//! wording. The figures are the issue's; no test compares measured times.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::tables::gpu::figure::{backing_curves, link_mib_s};
use perflab_report::{backing_table, compare_variants, scan_tables, BackingTable};
use perflab_report::{Format, Section};
use perflab_stats::StatsConfig;

const REPS: u32 = 5;
const SIZES: [u64; 4] = [32 << 10, 2 << 20, 16 << 20, 1 << 30];
/// Gen5 x16: 63.0 GB/s per direction.
const LINK: f64 = 60_096.0;

/// MiB/s per size; `None`: every repetition failed (the issue's "—").
type Curve = [Option<f64>; 4];

const H2D: [(&str, Curve); 4] = [
    (
        "4k",
        [Some(2456.0), Some(13305.0), Some(14829.0), Some(9740.0)],
    ),
    (
        "thp",
        [Some(2396.0), Some(14088.0), Some(15989.0), Some(10000.0)],
    ),
    ("2m", [Some(2414.0), None, Some(50367.0), Some(52500.0)]),
    (
        "pinned",
        [Some(3014.0), Some(41437.0), Some(50781.0), Some(52770.0)],
    ),
];
const D2H: [(&str, Curve); 4] = [
    (
        "4k",
        [Some(2301.0), Some(16012.0), Some(17433.0), Some(16507.0)],
    ),
    (
        "thp",
        [Some(2330.0), Some(16240.0), Some(17502.0), Some(16690.0)],
    ),
    (
        "2m",
        [Some(2398.0), Some(45120.0), Some(52035.0), Some(52702.0)],
    ),
    (
        "pinned",
        [Some(3120.0), Some(45507.0), Some(52311.0), Some(52730.0)],
    ),
];

/// About ±1 % deterministic noise.
fn noise(i: usize, rep: u32) -> f64 {
    const N: [f64; 5] = [-0.008, 0.003, 0.0, 0.009, -0.005];
    N[(i + rep as usize) % N.len()]
}

fn run(id: i64) -> RunInfo {
    RunInfo {
        id,
        created_at: 1_700_000_000.0,
        study: "gpu-xfer".into(),
        workload: "gpuxfer".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "bandwidth_mib_s",
            "compare": { "baseline": "4k" },
            "param_roles": crate::common::catalog::roles_json("gpuxfer"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
        unavailable: vec![],
        planned: 0,
        done: 0,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

fn params(direction: &str, size: u64, extra: &[(&str, &str)]) -> Params {
    let mut p = Params::default();
    p.0.insert("direction".into(), ParamValue::Str(direction.into()));
    p.0.insert("size".into(), ParamValue::Int(size as i64));
    p.0.insert("duration".into(), ParamValue::Float(0.5));
    for (k, v) in extra {
        p.0.insert(k.to_string(), ParamValue::Str(v.to_string()));
    }
    p
}

fn record(
    seq: usize,
    point: usize,
    p: Params,
    variant: &str,
    rep: u32,
    mib_s: Option<f64>,
) -> MeasurementRecord {
    let metrics = match mib_s {
        Some(v) => vec![
            Metric::new("bandwidth_mib_s", v, Unit::MibPerSecond, Better::Higher),
            Metric::new("link_mib_s", LINK, Unit::MibPerSecond, Better::Neither),
        ],
        None => vec![],
    };
    MeasurementRecord {
        seq: seq as u32,
        point: point as u32,
        params: p,
        variant: variant.into(),
        rep,
        status: match mib_s {
            Some(_) => MeasurementStatus::Ok,
            None => MeasurementStatus::Failed(
                "gpuxfer: source host buffer: no free 2 MiB hugetlb page".into(),
            ),
        },
        started_at: 0.0,
        elapsed_s: 0.5,
        output: WorkloadOutput {
            metrics,
            ..Default::default()
        },
        telemetry: vec![],
        role: Default::default(),
        monitors: Vec::new(),
    }
}

/// The gpu-xfer study: backings as variants, interleaved at every point.
fn backings() -> Vec<MeasurementRecord> {
    let mut out = Vec::new();
    for rep in 0..REPS {
        for (d, (direction, table)) in [("h2d", H2D), ("d2h", D2H)].iter().enumerate() {
            for (i, &size) in SIZES.iter().enumerate() {
                for (variant, curve) in table {
                    let shift = table.iter().position(|(n, _)| n == variant).unwrap_or(0);
                    let v = curve[i].map(|m| m * (1.0 + noise(i + shift, rep)));
                    let point = d * SIZES.len() + i;
                    out.push(record(
                        out.len(),
                        point,
                        params(direction, size, &[]),
                        variant,
                        rep,
                        v,
                    ));
                }
            }
        }
    }
    out
}

fn table() -> BackingTable {
    backing_table(&run(25), &backings(), None, &StatsConfig::default())
        .unwrap()
        .expect("four variants and a size axis")
}

#[test]
fn the_seed_table_has_one_column_per_backing_in_every_format() {
    let t = table();
    assert_eq!(t.baseline, "4k");
    assert_eq!(t.others, ["thp", "2m", "pinned"]);
    let titles: Vec<&str> = t.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["direction=h2d", "direction=d2h"]);
    insta::assert_snapshot!("gpu_backing_table_text", t.render(Format::Text));
    insta::assert_snapshot!("gpu_backing_table_markdown", t.render(Format::Markdown));
    insta::assert_snapshot!("gpu_backing_table_mail", t.render(Format::Mail));
    let html = t.render(Format::Html);
    insta::assert_snapshot!("gpu_backing_table_html", html);
    for line in t.render(Format::Mail).lines() {
        assert!(line.chars().count() <= 72, "{line}");
    }
}

#[test]
fn pinned_is_better_than_pageable_where_the_issue_says_and_the_empty_cell_is_not_compared() {
    let t = table();
    let h2d = &t.sections[0];
    let pinned = t.others.iter().position(|o| o == "pinned").unwrap();
    let two_m = t.others.iter().position(|o| o == "2m").unwrap();
    let big = h2d.rows.last().unwrap();
    let ratio = big.cells[pinned].ratio.unwrap();
    assert!((ratio - 52770.0 / 9740.0).abs() < 0.2, "{ratio}");
    assert_eq!(
        big.cells[pinned].verdict.map(|v| v.symbol()),
        Some("better")
    );
    let two_mib = &h2d.rows[1];
    assert_eq!(two_mib.cells[two_m].median, None);
    assert_eq!(two_mib.cells[two_m].verdict, None);
}

#[test]
fn the_plot_draws_one_curve_per_backing_and_the_links_line() {
    let ms = backings();
    assert_eq!(link_mib_s(&ms), Some(LINK));
    let svgs = backing_curves(&table(), link_mib_s(&ms));
    assert_eq!(svgs.len(), 2, "one chart per direction");
    for svg in &svgs {
        assert!(svg.contains("<svg"), "{svg}");
        // The curves' own polylines (plotters' grid and axes are written otherwise).
        assert_eq!(
            svg.matches("<polyline points=").count(),
            4,
            "one series per backing"
        );
        for name in ["4k", "thp", "2m", "pinned"] {
            assert!(
                svg.contains(&format!("<title>{name}: x ")),
                "no markers of {name}"
            );
        }
        assert_eq!(svg.matches("class=\"reference\"").count(), 1);
        assert!(
            svg.contains("PCIe link, theoretical (60096 MiB/s)"),
            "{svg}"
        );
        assert!(svg.contains("data-x-axis"), "{svg}");
    }
    // Without a recorded link the plot says so and draws no line.
    let bare = backing_curves(&table(), None);
    assert!(!bare[0].contains("class=\"reference\""));
    assert!(bare[0].contains("link bandwidth not recorded"));
}

#[test]
fn the_full_report_puts_the_seed_table_and_its_plot_before_the_pairs() {
    let data = RunData {
        info: run(25),
        ms: backings(),
    };
    let r = build_report(&[data], &ReportOptions::default()).unwrap();
    let text = r.text();
    let seed = text
        .find("bandwidth_mib_s: every variant by size, against 4k")
        .expect(&text);
    let pair = text.find("thp vs 4k").expect(&text);
    assert!(seed < pair, "{text}");
    let html = r.html();
    assert!(html.contains("class=\"reference\""));
}

/// Two driver builds as variants (`exec` or `PERFLAB_LIBCUDA` per variant), the backing a
/// parameter: the seed's own shape, one table per backing and direction, old against new.
#[test]
fn two_driver_versions_against_each_other_are_the_seeds_scan_per_backing() {
    let mut ms = Vec::new();
    for rep in 0..REPS {
        for (b, backing) in ["4k", "pinned"].iter().enumerate() {
            let (_, curve) = H2D.iter().find(|(n, _)| n == backing).unwrap();
            for (i, &size) in SIZES.iter().enumerate() {
                for (k, (variant, speedup)) in [("driver 570", 1.0), ("driver 580", 1.25)]
                    .into_iter()
                    .enumerate()
                {
                    let v = curve[i].map(|m| m * speedup * (1.0 + noise(i + 2 * k, rep)));
                    let p = params("h2d", size, &[("backing", backing)]);
                    ms.push(record(ms.len(), b * SIZES.len() + i, p, variant, rep, v));
                }
            }
        }
    }
    let info = run(26);
    let t = compare_variants(
        &info,
        &ms,
        "driver 570",
        "driver 580",
        None,
        &StatsConfig::default(),
    )
    .unwrap();
    let scan = scan_tables(&t, "size").unwrap();
    let titles: Vec<&str> = scan.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["backing=4k", "backing=pinned"]);
    insta::assert_snapshot!("gpu_versions_scan_text", scan.render(Format::Text));
    // Two variants are one scan: no side-by-side table of backings.
    assert!(backing_table(&info, &ms, None, &StatsConfig::default())
        .unwrap()
        .is_none());
}

/// A bidir point whose copy engines took turns: the threads table speaks of copy engines,
/// never of CPU time.
#[test]
fn the_threads_table_of_a_bidir_point_speaks_of_copy_engines() {
    use perflab_core::ThreadRecord;
    // gpuxfer's hints say its thread records are copy engines (no test of the workload's
    // name in the report).
    crate::common::catalog::install();
    let metric = |name: &str, v: f64| Metric::new(name, v, Unit::Count, Better::Neither);
    let mut m = record(
        0,
        0,
        params("bidir", 1 << 20, &[]),
        "pinned",
        0,
        Some(12000.0),
    );
    m.output.metrics.extend([
        metric("aggregate_mib_s", 12000.0),
        metric("summed_mib_s", 24000.0),
        metric("overlap", 1.0),
        metric("parallelism", 1.0),
        metric("sum_valid", 0.0),
        metric("threads", 2.0),
        metric("busy_measured", 1.0),
    ]);
    m.output.threads = ["h2d", "d2h"]
        .iter()
        .map(|role| ThreadRecord {
            role: role.to_string(),
            start_ns: 1_000,
            end_ns: 1_000_000,
            bytes: Some(12 << 20),
            ..Default::default()
        })
        .collect();
    let t = perflab_report::parallel_table(&run(27), &[m]).expect("a verdict");
    assert!(t.copy_engines);
    let text = t.render(Format::Text);
    assert!(text.contains("two copy engines"), "{text}");
    assert!(text.contains("of 2 copy engines"), "{text}");
    assert!(!text.contains("on a CPU"), "{text}");
}
