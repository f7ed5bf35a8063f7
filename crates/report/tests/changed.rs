//! "What changed with it": the telemetry ranked beside each significant difference.

use crate::common;

use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::{ParamValue, Params, TelemetryRow, ThreadRecord, Unit, WorkloadOutput};
use perflab_report::{changes_for_table, compare_variants, involved_cpus, what_changed};
use perflab_report::{Changes, Format, Section};
use perflab_stats::StatsConfig;
use proptest::prelude::*;

/// One repetition carrying `rows`; their monitors' hints (how rows are worded and
/// grouped) are installed as the binary installs them.
fn rec(rep: u32, rows: Vec<TelemetryRow>) -> MeasurementRecord {
    common::catalog::install_monitors();
    MeasurementRecord {
        seq: rep,
        point: 0,
        params: Params::default(),
        variant: "v".into(),
        rep,
        status: MeasurementStatus::Ok,
        started_at: 0.0,
        elapsed_s: 10.0,
        output: WorkloadOutput::default(),
        telemetry: rows,
        role: Default::default(),
        monitors: Vec::new(),
    }
}

fn irq(key: &str, cpu: u32, v: f64) -> TelemetryRow {
    TelemetryRow::new("interrupts", key, "", Some(cpu), v, Unit::Count)
}

/// Five repetitions of `rows(rep)`.
fn side(rows: impl Fn(f64) -> Vec<TelemetryRow>) -> Vec<MeasurementRecord> {
    (0..5).map(|r| rec(r, rows(f64::from(r)))).collect()
}

fn refs(v: &[MeasurementRecord]) -> Vec<&MeasurementRecord> {
    v.iter().collect()
}

#[test]
fn the_interrupt_that_dropped_ranks_first() {
    let a = side(|r| {
        vec![
            irq("DBL", 24, 1000.0 + r),
            irq("LOC", 0, 5000.0 + 2.0 * r),
            irq("LOC", 24, 2500.0 - r),
        ]
    });
    let b = side(|r| {
        vec![
            irq("DBL", 24, 730.0 + r),
            irq("LOC", 0, 5010.0 + 2.0 * r),
            irq("LOC", 24, 2500.0 + r),
        ]
    });
    let got = what_changed(&refs(&a), &refs(&b), &[0, 24], 5);
    assert_eq!(got.len(), 1, "{got:#?}");
    let dbl = &got[0];
    assert_eq!(dbl.text, "DBL interrupts on CPU 24: -27%");
    assert_eq!(
        (dbl.median_a, dbl.median_b, dbl.delta),
        (1002.0, 732.0, -270.0)
    );
    assert!(dbl.p_value < 0.01, "{}", dbl.p_value);
    assert!((dbl.change_pct.unwrap() + 26.95).abs() < 0.01);
}

#[test]
fn idle_residency_that_appeared_reads_in_milliseconds() {
    let a = side(|r| {
        vec![
            TelemetryRow::new(
                "cpuidle",
                "stop2:time",
                "",
                Some(4),
                0.0,
                Unit::Microseconds,
            ),
            TelemetryRow::new("cpuidle", "stop2:disabled", "", Some(4), 1.0, Unit::Count),
            irq("DBL", 4, 1000.0 + r),
        ]
    });
    let b = side(|r| {
        vec![
            TelemetryRow::new(
                "cpuidle",
                "stop2:time",
                "",
                Some(4),
                40_000.0 + 10.0 * r,
                Unit::Microseconds,
            ),
            TelemetryRow::new("cpuidle", "stop2:disabled", "", Some(4), 0.0, Unit::Count),
            irq("DBL", 4, 850.0 + r),
        ]
    });
    let got = what_changed(&refs(&a), &refs(&b), &[4], 5);
    let texts: Vec<&str> = got.iter().map(|c| c.text.as_str()).collect();
    // 40 ms against a 10 ms floor (1 ms per second of 10 s) outranks a 15% drop; the
    // disabled flag is the variant's setting, not a change the machine made.
    assert_eq!(
        texts,
        [
            "stop2 residency on CPU 4: +40 ms",
            "DBL interrupts on CPU 4: -15%"
        ]
    );
}

#[test]
fn cpus_not_involved_are_left_out_and_totals_only_without_cpus() {
    let a = side(|r| {
        vec![
            irq("DBL", 24, 1000.0 + r),
            irq("DBL", 7, 10.0 + r),
            TelemetryRow::new("interrupts", "DBL", "", None, 5000.0 + r, Unit::Count),
        ]
    });
    let b = side(|r| {
        vec![
            irq("DBL", 24, 700.0 + r),
            irq("DBL", 7, 90_000.0 + r),
            TelemetryRow::new("interrupts", "DBL", "", None, 95_000.0 + r, Unit::Count),
        ]
    });
    let got = what_changed(&refs(&a), &refs(&b), &[24], 5);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].cpu, Some(24));
    let totals = what_changed(&refs(&a), &refs(&b), &[], 5);
    assert_eq!(totals.len(), 1, "{totals:#?}");
    assert_eq!(totals[0].cpu, None);
    assert_eq!(totals[0].text, "DBL interrupts (all CPUs): +1799%");
}

#[test]
fn a_few_events_do_not_outrank_a_big_change_of_many() {
    let a = side(|r| {
        vec![
            irq("CAL", 0, 1.0),
            irq("TLB", 0, 4.0 + r),
            irq("RES", 0, 10_000.0 + 10.0 * r),
        ]
    });
    let b = side(|r| {
        vec![
            irq("CAL", 0, 3.0),
            irq("TLB", 0, 30.0 + r),
            irq("RES", 0, 7000.0 + 10.0 * r),
        ]
    });
    let got = what_changed(&refs(&a), &refs(&b), &[0], 5);
    let keys: Vec<&str> = got.iter().map(|c| c.key.as_str()).collect();
    // CAL 1 -> 3 is under the 10-event floor: not listed at all. TLB 6 -> 32 is a real
    // change (26 events, ln(42/16) = 0.97) and outranks RES 10,020 -> 7,020 (0.36).
    assert_eq!(keys, ["TLB", "RES"], "{got:#?}");
    assert_eq!(got[1].text, "RES interrupts on CPU 0: -30%");
    assert!(got[0].score > got[1].score);
    assert_eq!(what_changed(&refs(&a), &refs(&b), &[0], 1).len(), 1);
}

#[test]
fn changes_that_do_not_hold_over_the_repetitions_are_left_out() {
    // Medians move by 40%, but one repetition of B sits among A's values.
    let a = side(|r| vec![irq("DBL", 1, 1000.0 + 10.0 * r)]);
    let b = side(|r| {
        let v = if r == 0.0 { 1020.0 } else { 1400.0 + r };
        vec![irq("DBL", 1, v)]
    });
    let got = what_changed(&refs(&a), &refs(&b), &[1], 5);
    assert_eq!(got.len(), 1, "one overlap still gives p = 0.016: {got:#?}");
    let noisy_b = side(|r| {
        let v = if r < 2.0 { 990.0 + r } else { 1400.0 + r };
        vec![irq("DBL", 1, v)]
    });
    let got = what_changed(&refs(&a), &refs(&noisy_b), &[1], 5);
    assert!(got.is_empty(), "{got:#?}");
}

#[test]
fn a_row_missing_from_a_repetition_counts_zero_there() {
    // B recorded interrupts in every repetition but the NET_RX softirq row only in one.
    let a = side(|r| {
        vec![TelemetryRow::new(
            "softirqs",
            "NET_RX",
            "",
            Some(3),
            500.0 + r,
            Unit::Count,
        )]
    });
    let b: Vec<MeasurementRecord> = (0..5)
        .map(|r| {
            let mut rows = vec![TelemetryRow::new(
                "softirqs",
                "TIMER",
                "",
                Some(3),
                100.0,
                Unit::Count,
            )];
            if r == 0 {
                rows.push(TelemetryRow::new(
                    "softirqs",
                    "NET_RX",
                    "",
                    Some(3),
                    400.0,
                    Unit::Count,
                ));
            }
            rec(r, rows)
        })
        .collect();
    let got = what_changed(&refs(&a), &refs(&b), &[3], 5);
    let net = got
        .iter()
        .find(|c| c.key == "NET_RX")
        .expect("NET_RX listed");
    assert_eq!(net.median_b, 0.0);
    assert_eq!(net.text, "NET_RX softirqs on CPU 3: -100%");
}

#[test]
fn no_telemetry_means_no_changes() {
    let a = side(|_| Vec::new());
    let b = side(|_| Vec::new());
    assert!(what_changed(&refs(&a), &refs(&b), &[0, 1], 5).is_empty());
    assert!(what_changed(&[], &[], &[], 5).is_empty());
    // Failed measurements never count.
    let mut failed = side(|r| vec![irq("DBL", 0, 1000.0 * (r + 1.0))]);
    for m in &mut failed {
        m.status = MeasurementStatus::Failed("boom".into());
    }
    assert!(what_changed(&refs(&a), &refs(&failed), &[0], 5).is_empty());
}

#[test]
fn involved_cpus_come_from_parameters_and_threads() {
    let mut params = Params::default();
    params.0.insert("client_cpu".into(), ParamValue::Int(3));
    params.0.insert("server_cpu".into(), ParamValue::Int(-1));
    let mut m = rec(0, Vec::new());
    m.output.threads = vec![ThreadRecord {
        role: "server".into(),
        pinned_cpu: None,
        cpu_samples: vec![(9, 100), (1, 2)],
        ..Default::default()
    }];
    let mut roles = perflab_core::ParamRoles::default();
    roles.insert("client_cpu", perflab_core::ParamRole::Cpu);
    roles.insert("server_cpu", perflab_core::ParamRole::Cpu);
    assert_eq!(involved_cpus(&roles, &params, &[&m]), vec![1, 3, 9]);
    assert!(involved_cpus(&roles, &Params::default(), &[]).is_empty());
}

#[test]
fn seed_pair_shows_its_idle_states_and_doorbells() {
    let run = common::run_info(1);
    let ms = common::records(1.0, None);
    let table = compare_variants(&run, &ms, "poll-only", "all", None, &StatsConfig::default())
        .expect("table");
    let rows = changes_for_table(&table, &ms, &ms, 6);
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    // Only the rows whose verdict is not `~`: 4-8 (1.5% slower) and 4-24 (4.37%). The
    // fixture gives every partner the same idle and doorbell story.
    assert_eq!(labels, ["4-8", "4-24"]);
    let pair = &rows[1];
    assert_eq!(pair.verdict, "WORSE");
    assert_eq!(pair.cpus, vec![4, 24]);
    let texts: Vec<&str> = pair.changes.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "stop2 residency on CPU 4: +40 ms",
            "stop2 residency on CPU 24: +40 ms",
            "stop2 entries on CPU 24: +24 from 0",
            "stop2 entries on CPU 4: +23 from 0",
            "DBL interrupts on CPU 4: -26%",
        ],
        "{:#?}",
        pair.changes
    );
    let text = Changes(rows.clone()).render(Format::Text);
    assert!(text.starts_with("What changed with it"), "{text}");
    assert!(
        text.contains("  4-24 (-4.36% WORSE): stop2 residency on CPU 4: +40 ms (p=0.008); "),
        "{text}"
    );
}

fn row_strategy() -> impl Strategy<Value = TelemetryRow> {
    let source = prop::sample::select(vec!["interrupts", "cpuidle", "cpu_time", "x"]);
    let key = prop::sample::select(vec!["DBL", "24", "stop2:time", "user", "", "a:b:c"]);
    let unit = prop::sample::select(vec![
        Unit::Count,
        Unit::Microseconds,
        Unit::Milliseconds,
        Unit::Percent,
        Unit::Ratio,
        Unit::BytesPerSecond,
    ]);
    let value = prop_oneof![
        -1e6f64..1e9,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(0.0),
        Just(-0.0),
    ];
    (source, key, prop::option::of(0u32..6), value, unit)
        .prop_map(|(s, k, cpu, v, u)| TelemetryRow::new(s, k, "lbl x", cpu, v, u))
}

fn records_strategy() -> impl Strategy<Value = Vec<MeasurementRecord>> {
    prop::collection::vec(
        (
            prop::collection::vec(row_strategy(), 0..8),
            any::<bool>(),
            prop_oneof![Just(0.0), Just(f64::NAN), 0.001f64..100.0],
        ),
        0..6,
    )
    .prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (rows, ok, elapsed))| {
                let mut m = rec(i as u32, rows);
                m.elapsed_s = elapsed;
                if !ok {
                    m.status = MeasurementStatus::Failed("x".into());
                }
                m
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn what_changed_never_panics_and_respects_limit(
        a in records_strategy(),
        b in records_strategy(),
        cpus in prop::collection::vec(0u32..6, 0..3),
        limit in 0usize..4,
    ) {
        let got = what_changed(&refs(&a), &refs(&b), &cpus, limit);
        prop_assert!(got.len() <= limit);
        for c in &got {
            match c.cpu {
                Some(cpu) => prop_assert!(cpus.contains(&cpu)),
                None => prop_assert!(cpus.is_empty()),
            }
            prop_assert!(c.score.is_finite() && c.score > 0.0);
            prop_assert!((0.0..=1.0).contains(&c.p_value));
            prop_assert!(c.text.is_ascii(), "{}", c.text);
        }
        prop_assert!(got.windows(2).all(|w| w[0].score >= w[1].score));
    }
}
