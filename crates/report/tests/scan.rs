//! Size scans in the seed's shape: the tables a person pastes into a mail, and what the
//! summary line must get right (parting, crossing, failed sizes).

use crate::common;

use common::xfer::{self, KIB, V164_2M, V164_4K, VEOS_2M, VEOS_4K};
use perflab_core::record::MeasurementRecord;
use perflab_report::{
    compare_runs, compare_variants, scan_tables, ComparisonTable, Direction, Parting, ScanReport,
};
use perflab_report::{Format, Section};
use perflab_stats::{StatsConfig, Verdict};

fn never(_: &str, _: &str, _: u64, _: u32) -> bool {
    false
}

/// veos 1.2.2 (run 11) against v1_64_96 (run 12), both backings, pvm engine.
fn runs(fail: impl Fn(&str, &str, u64, u32) -> bool) -> ComparisonTable {
    let a = xfer::run(11, "veos 1.2.2");
    let b = xfer::run(12, "v1_64_96");
    let a_ms = xfer::scan(&["pvm"], &[("4k", &VEOS_4K), ("2m", &VEOS_2M)], 0, never);
    let b_ms = xfer::scan(&["pvm"], &[("4k", &V164_4K), ("2m", &V164_2M)], 2, fail);
    compare_runs(&a, &a_ms, &b, &b_ms, None, &StatsConfig::default()).unwrap()
}

fn scan(t: &ComparisonTable) -> ScanReport {
    scan_tables(t, "size").expect("the rows vary in size")
}

#[test]
fn seed_scan_text() {
    insta::assert_snapshot!("seed_scan_text", scan(&runs(never)).render(Format::Text));
}

#[test]
fn seed_scan_markdown() {
    insta::assert_snapshot!(
        "seed_scan_markdown",
        scan(&runs(never)).render(Format::Markdown)
    );
}

#[test]
fn seed_scan_figures() {
    let r = scan(&runs(never));
    assert_eq!(
        (r.a_label.as_str(), r.b_label.as_str()),
        ("veos 1.2.2", "v1_64_96")
    );
    let titles: Vec<&str> = r.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["variant=4k", "variant=2m"]);
    assert_eq!(
        r.fixed.describe(),
        "cpu=2 direction=read duration=2 engine=pvm state=unpinned"
    );
    let small = &r.sections[0];
    let sizes: Vec<u64> = small.points.iter().map(|p| p.size_bytes / 1024).collect();
    assert_eq!(sizes, KIB);
    // The medians are the seed's figures: the middle noise term is 0.
    let p512 = &small.points[4];
    assert_eq!((p512.median_a, p512.median_b), (Some(924.0), Some(1714.0)));
    assert!((p512.ratio.unwrap() - 1714.0 / 924.0).abs() < 1e-12);
    let (lo, hi) = p512.ratio_ci.unwrap();
    assert!(lo < p512.ratio.unwrap() && p512.ratio.unwrap() < hi);
    // 32 KiB is 19% slower on v1_64_96; from 64 KiB (+5.6%) every size is faster, far
    // beyond 1% noise with 5 repetitions, so the curves cross and part at 64 KiB.
    assert_eq!(small.points[0].verdict, Some(Verdict::Regressed));
    let s = &small.summary;
    assert_eq!((s.compared, s.differing, s.not_compared), (16, 16, 0));
    assert_eq!(
        s.parting,
        Parting::PartAt {
            size_bytes: 64 * 1024,
            direction: Direction::Up,
            everywhere: false
        }
    );
    assert_eq!(s.crossings.len(), 1);
    let ratios: Vec<f64> = VEOS_4K.iter().zip(&V164_4K).map(|(a, b)| b / a).collect();
    let g = perflab_stats::geomean(&ratios).unwrap();
    assert!((s.geomean_ratio.unwrap() - g).abs() < 1e-9);
    // Huge pages: faster from the smallest size on.
    assert!(matches!(
        r.sections[1].summary.parting,
        Parting::PartAt {
            size_bytes: 32768,
            everywhere: true,
            ..
        }
    ));
    let json: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
    assert_eq!(json["sections"][0]["summary"]["parting"]["kind"], "part_at");
    assert_eq!(json["sections"][0]["points"][0]["verdict"], "worse");
    assert_eq!(json["compared"]["kind"], "runs");
}

#[test]
fn variants_of_one_run_scan_per_engine() {
    let run = xfer::run(12, "v1_64_96");
    let ms = xfer::scan(
        &["memcpy", "pvm"],
        &[("4k", &V164_4K), ("2m", &V164_2M)],
        0,
        never,
    );
    let cfg = StatsConfig::default();
    let t = compare_variants(&run, &ms, "4k", "2m", None, &cfg).unwrap();
    let r = scan(&t);
    let titles: Vec<&str> = r.sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["engine=memcpy", "engine=pvm"]);
    assert_eq!((r.a_label.as_str(), r.b_label.as_str()), ("4k", "2m"));
    let text = r.render(Format::Text);
    // The B/A line names the variants; the first line fits a mail without them.
    assert!(
        text.starts_with("run 12: median bandwidth_mib_s [MiB/s] by size"),
        "{text}"
    );
    assert!(text.contains("B/A: 2m against 4k"), "{text}");
    // Huge pages win from 1 MiB on; below, the two backings trade places.
    let s = &r.sections[1].summary;
    assert!(
        matches!(
            s.parting,
            Parting::PartAt {
                size_bytes: 1_048_576,
                direction: Direction::Up,
                ..
            }
        ),
        "{:?}\n{text}",
        s.parting
    );
    // A size parameter that does not vary gives no scan.
    assert!(scan_tables(&t, "duration").is_none());
    assert!(scan_tables(&t, "no_such_param").is_none());
}

/// Two curves that swap places twice and end together.
#[test]
fn crossing_curves() {
    let a_vals: [f64; 16] = [100.0; 16];
    let mut b_vals = [100.0; 16];
    for (i, b) in b_vals.iter_mut().enumerate() {
        *b = match i {
            0..=3 => 130.0, // B ahead for small buffers
            4..=5 => 100.4, // level, within the noise
            6..=12 => 80.0, // B behind
            13 => 115.0,    // ahead again
            _ => 100.2,     // level at the largest sizes
        };
    }
    let a = xfer::run(1, "kernel 6.1");
    let b = xfer::run(2, "kernel 6.6");
    let a_ms = xfer::scan(&["memcpy"], &[("4k", &a_vals)], 0, never);
    let b_ms = xfer::scan(&["memcpy"], &[("4k", &b_vals)], 3, never);
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &StatsConfig::default()).unwrap();
    let r = scan(&t);
    let s = &r.sections[0].summary;
    assert_eq!(s.parting, Parting::DoNotPart);
    let at: Vec<(u64, u64, Direction)> = s
        .crossings
        .iter()
        .map(|c| (c.below_bytes / 1024, c.above_bytes / 1024, c.to))
        .collect();
    assert_eq!(
        at,
        [
            (256, 2048, Direction::Down),
            (131072, 262144, Direction::Up)
        ]
    );
    let text = r.render(Format::Text);
    assert!(
        text.contains(
            "12 of 16 sizes differ (2 undecided); they cross 2 times, last between 131072 and 262144 KiB, and \
             kernel 6.6 is higher up to 262144 KiB, but the curves meet again at the largest \
             size, 1048576 KiB, which does not differ"
        ),
        "{text}"
    );
    insta::assert_snapshot!("crossing_scan_markdown", r.render(Format::Markdown));
}

/// Most sizes differ, the largest does not: the line says where they differed rather
/// than only "do not part" (memxfer printed that over 9 differing sizes of 11).
#[test]
fn differing_sizes_below_a_level_top_are_named() {
    let a_vals: [f64; 16] = [100.0; 16];
    let mut b_vals = [120.0; 16];
    b_vals[15] = 100.2;
    let a = xfer::run(1, "kernel 6.1");
    let b = xfer::run(2, "kernel 6.6");
    let a_ms = xfer::scan(&["memcpy"], &[("4k", &a_vals)], 0, never);
    let b_ms = xfer::scan(&["memcpy"], &[("4k", &b_vals)], 3, never);
    let t = compare_runs(&a, &a_ms, &b, &b_ms, None, &StatsConfig::default()).unwrap();
    let r = scan(&t);
    assert_eq!(r.sections[0].summary.parting, Parting::DoNotPart);
    let text = r.render(Format::Text);
    assert!(
        text.contains(
            "15 of 16 sizes differ; kernel 6.6 is higher from 32 to 524288 KiB, but the curves \
             meet again at the largest size, 1048576 KiB, which does not differ"
        ),
        "{text}"
    );
    assert!(!text.contains("do not part"), "{text}");
}

/// A size whose every repetition failed on one side stays in its table, marked, and
/// one failed repetition elsewhere is named.
#[test]
fn failed_points_are_listed() {
    let fail = |_: &str, variant: &str, kib: u64, rep: u32| {
        variant == "4k" && (kib == 4096 || (kib == 256 && rep == 1))
    };
    let t = runs(fail);
    let r = scan(&t);
    let small = &r.sections[0];
    assert_eq!(small.points.len(), 16);
    let p = small
        .points
        .iter()
        .find(|p| p.size_bytes == 4096 * 1024)
        .unwrap();
    assert_eq!(p.verdict, None);
    assert!(
        p.not_compared.as_deref().unwrap().contains("5 failed"),
        "{p:?}"
    );
    assert_eq!(small.summary.not_compared, 1);
    assert_eq!(small.summary.compared, 15);
    let text = r.render(Format::Text);
    for want in [
        "4096     1487.00         -      -               -       -       -  not compared",
        "4096 KiB: no successful value in v1_64_96 (5 failed)",
        "256 KiB: 1 failed repetition of v1_64_96 not counted",
        "(1 size not compared, skipped)",
        "first: seq",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    insta::assert_snapshot!("failed_scan_text", text);
}

mod random {
    use super::*;
    use perflab_core::record::{MeasurementStatus, RunInfo};
    use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};
    use proptest::prelude::*;

    /// (point, variant b?, size choice, engine, value, failed)
    type Raw = (u32, bool, u8, bool, f64, bool);

    fn size(choice: u8, point: u32) -> Option<ParamValue> {
        match choice % 7 {
            0 => None,
            1 => Some(ParamValue::Int(-(i64::from(point)))),
            2 => Some(ParamValue::Str(format!("{point}K"))),
            3 => Some(ParamValue::Str("junk".into())),
            4 => Some(ParamValue::Float(f64::from(point) * 1.5)),
            5 => Some(ParamValue::Float(f64::NAN)),
            _ => Some(ParamValue::Int(i64::from(point) << 15)),
        }
    }

    fn records(raw: &[Raw]) -> Vec<MeasurementRecord> {
        raw.iter()
            .enumerate()
            .map(|(seq, &(point, other, choice, pvm, value, failed))| {
                let mut params = Params::default();
                if let Some(s) = size(choice, point) {
                    params.0.insert("size".into(), s);
                }
                if pvm {
                    params
                        .0
                        .insert("engine".into(), ParamValue::Str("pvm".into()));
                }
                MeasurementRecord {
                    seq: seq as u32,
                    point,
                    params,
                    variant: if other { "2m".into() } else { "4k".into() },
                    rep: 0,
                    status: if failed {
                        MeasurementStatus::Failed("x".into())
                    } else {
                        MeasurementStatus::Ok
                    },
                    started_at: 0.0,
                    elapsed_s: 0.0,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new(
                            "bandwidth_mib_s",
                            value,
                            Unit::MibPerSecond,
                            Better::Higher,
                        )],
                        ..Default::default()
                    },
                    telemetry: vec![],
                    role: Default::default(),
                    monitors: Vec::new(),
                }
            })
            .collect()
    }

    fn raw() -> impl Strategy<Value = Vec<Raw>> {
        let value = prop_oneof![Just(0.0), -1e9f64..1e9, Just(f64::NAN), 1.0f64..2.0];
        prop::collection::vec(
            (
                0u32..6,
                any::<bool>(),
                any::<u8>(),
                any::<bool>(),
                value,
                any::<bool>(),
            ),
            0..40,
        )
    }

    fn check(t: &ComparisonTable) -> Result<(), TestCaseError> {
        for axis in ["size", "engine", "nope"] {
            if let Some(r) = scan_tables(t, axis) {
                let _ = r.render(Format::Text);
                let _ = r.render(Format::Markdown);
                let _ = r.to_json().unwrap();
                // Every row and unmatched point is in a table or listed outside.
                let placed: usize = r.sections.iter().map(|s| s.points.len()).sum();
                prop_assert_eq!(placed + r.outside.len(), t.rows.len() + t.unmatched.len());
                for s in &r.sections {
                    prop_assert!(s.summary.differing <= s.summary.compared);
                    prop_assert_eq!(s.summary.compared + s.summary.not_compared, s.points.len());
                }
            }
        }
        let _ = t.render(Format::Markdown);
        Ok(())
    }

    fn run(id: i64, label: Option<&str>) -> RunInfo {
        let mut r = xfer::run(id, "x");
        r.label = label.map(str::to_string);
        r
    }

    proptest! {
        #[test]
        fn scan_tables_never_panic(a in raw(), b in raw(), label in prop::option::of("[ a-z|*]{0,6}")) {
            let cfg = StatsConfig { resamples: 20, ..Default::default() };
            let (ma, mb) = (records(&a), records(&b));
            let (ra, rb) = (run(1, label.as_deref()), run(2, label.as_deref()));
            if let Ok(t) = compare_variants(&ra, &ma, "4k", "2m", None, &cfg) {
                check(&t)?;
            }
            if let Ok(t) = compare_runs(&ra, &ma, &rb, &mb, None, &cfg) {
                prop_assert_ne!(&t.a_label, &t.b_label);
                check(&t)?;
            }
        }
    }
}
