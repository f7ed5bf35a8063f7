//! Issue 32 item 6: spans keyed by CPU matched about 95 foreign events per round trip on a
//! VM path and printed a p50 as if it were the benchmark's. Each such span's rows say how
//! many matches per round trip the study's own work makes (`:per_round_trip`, as the
//! monitor leaves them); the workload counts its round trips (`exchanges`). Far beyond
//! that, the row refuses its figure and shows the count; about as many as expected, the
//! figure stands. Records are synthetic, shaped by the monitor's output contract.

use crate::common::catalog;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};
use perflab_report::spans::foreign::Foreign;
use perflab_report::spans::seed::SeedCell;
use perflab_report::{seed_span_table, span_table, Format, Section};

/// Round trips per telemetry repetition.
const TRIPS: f64 = 2_600.0;

/// (key, label, matches per round trip, declared per round trip, p50 ns): the host's
/// spans keyed by CPU on a VM path whose other traffic shares the CPUs.
const SPANS: [(&str, &str, f64, f64, f64); 2] = [
    // 97 matched where the set expects 2: 95 foreign per round trip.
    (
        "netrx.raise",
        "(a) NET_RX raised → softirq runs",
        97.0,
        2.0,
        2_000.0,
    ),
    // About one matched where one is expected: the study's own.
    (
        "netrx.vhost_wake",
        "(b) softirq NET_RX → vhost worker woken",
        1.02,
        1.0,
        22_020.0,
    ),
];

fn run_info() -> RunInfo {
    catalog::install();
    RunInfo {
        id: 9,
        created_at: 1_700_000_000.0,
        study: "netpaths".into(),
        workload: "netrr".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "rtt_p50_us",
            "monitors": ["trace"],
            "variants": [{"name": "vm-tap", "knobs": [["netpath", "vm-tap"]]}],
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
        unavailable: vec![],
        planned: 4,
        done: 4,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

/// Four telemetry repetitions; `trips` false: a workload that counts no round trips.
fn records(trips: bool) -> Vec<MeasurementRecord> {
    let mut p = Params::default();
    p.0.insert("load_streams".into(), ParamValue::Int(0));
    (0..4u32)
        .map(|rep| {
            let mut telemetry = Vec::new();
            for (key, label, per_trip, expected, p50) in SPANS {
                let row = |stat: &str, v: f64, unit: Unit| {
                    TelemetryRow::new("trace", format!("{key}:{stat}"), label, None, v, unit)
                };
                telemetry.push(row("count", (per_trip * TRIPS).round(), Unit::Count));
                telemetry.push(row("per_round_trip", expected, Unit::Count));
                telemetry.push(row("p50", p50 + f64::from(rep), Unit::Nanoseconds));
            }
            let mut metrics = vec![Metric::new(
                "rtt_p50_us",
                80.0,
                Unit::Microseconds,
                Better::Lower,
            )];
            if trips {
                metrics.push(Metric::new(
                    "exchanges",
                    TRIPS,
                    Unit::Count,
                    Better::Neither,
                ));
            }
            MeasurementRecord {
                seq: rep,
                point: 0,
                params: p.clone(),
                variant: "vm-tap".into(),
                rep,
                status: MeasurementStatus::Ok,
                started_at: 0.0,
                elapsed_s: 1.0,
                output: WorkloadOutput {
                    metrics,
                    ..Default::default()
                },
                telemetry,
                role: Role::Telemetry,
                monitors: vec!["trace".into()],
            }
        })
        .collect()
}

#[test]
fn a_span_with_95_foreign_events_per_round_trip_has_no_figure() {
    let t = seed_span_table(&run_info(), &records(true)).expect("netrr with spans");
    let cells: Vec<&SeedCell> = t.paths[0].spans.iter().map(|s| &s.cells[0]).collect();
    assert_eq!(
        cells[0],
        &SeedCell::Contaminated {
            foreign_per_trip: 95.0,
            expected_per_trip: 2.0
        }
    );
    // About one per round trip where one is expected: the figure stands.
    assert_eq!(cells[1], &SeedCell::Value(22.0215));
    let text = t.render(Format::Text);
    assert!(
        text.contains("contaminated: 95 foreign events per round trip (> 1.0)")
            && !text.contains("2.00 ")
            && text.contains("22.02"),
        "{text}"
    );

    // The breakdown above it refuses the same row, with the count beside it.
    let cfg = perflab_stats::StatsConfig::default();
    let b = span_table(&run_info(), &records(true), &cfg).expect("spans recorded");
    let raise = &b.groups[0].rows[0];
    assert!(raise.percentiles.iter().all(Option::is_none), "{raise:?}");
    assert!(raise.foreign.is_some_and(|f| f.contaminated()));
    let wake = &b.groups[0].rows[1];
    assert!(wake.p50().is_some());
    assert_eq!(
        wake.foreign,
        Some(Foreign::Counted {
            matched_per_trip: 2652.0 / TRIPS,
            expected_per_trip: 1.0,
            foreign_per_trip: 2652.0 / TRIPS - 1.0,
            contaminated: false
        })
    );
    let text = b.render(Format::Text);
    assert!(
        text.contains("contaminated: 95 foreign events per round trip (> 1.0)")
            && text.contains("252200 (95 foreign/round trip)")
            && text.contains("2652 (0.02 foreign/round trip)"),
        "{text}"
    );
    // In JSON, the count is a value.
    let json = serde_json::to_value(&b).expect("serialises");
    assert_eq!(
        json["groups"][0]["rows"][0]["foreign"]["foreign_per_trip"],
        95.0
    );
}

#[test]
fn without_a_round_trip_count_the_row_says_so_and_keeps_its_figure() {
    let cfg = perflab_stats::StatsConfig::default();
    let b = span_table(&run_info(), &records(false), &cfg).expect("spans recorded");
    let raise = &b.groups[0].rows[0];
    assert_eq!(raise.foreign, Some(Foreign::NoRoundTrips));
    assert!(raise.p50().is_some());
    let text = b.render(Format::Text);
    assert!(
        text.contains("foreign not counted: no round trips"),
        "{text}"
    );
}

/// Load against no load: a side whose span matched mostly other work's events has no figure
/// to compare, and the comparison says so instead of a verdict.
#[test]
fn a_contaminated_side_is_not_compared() {
    let mut ms = records(true);
    let loaded: Vec<MeasurementRecord> = records(true)
        .into_iter()
        .map(|mut m| {
            m.point = 1;
            m.seq += 10;
            m.params.0.insert("load_streams".into(), ParamValue::Int(3));
            m
        })
        .collect();
    ms.extend(loaded);
    let cfg = perflab_stats::StatsConfig::default();
    let (cmps, _) = perflab_report::span_comparisons(&run_info(), &ms, &cfg, 12);
    let c = &cmps[0];
    assert!(
        c.not_compared.iter().any(|n| n
            == "(a) NET_RX raised → softirq runs in load_streams=0: contaminated: 95 foreign \
                events per round trip (> 1.0)"),
        "{:?}",
        c.not_compared
    );
    assert!(c.rows.iter().all(|r| r.key != "netrx.raise"));
    assert!(c.rows.iter().any(|r| r.key == "netrx.vhost_wake"));
}
