//! `perflab show` and `perflab report` on a stored netrr run whose telemetry repetitions
//! carry the trace monitor's span rows (synthetic, in the monitor's contract): the span
//! breakdown, seed 001's layout and the load A/B comparison are printed, said to come
//! from telemetry repetitions; a run without span rows prints none of it.

use crate::common;

use common::{text, Lab};
use perflab_core::record::{
    MeasurementRecord, MeasurementStatus, NewRun, PlannedMeasurement, Role,
};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};
use perflab_store::Store;

/// (key, label, p50 ns without load, extra ns under 3 streams); (b) never matches.
const SPANS: [(&str, &str, f64, f64); 3] = [
    ("netrx.irq", "(a) IRQ → softirq", 2_000.0, 1_000.0),
    ("netrx.vhost", "(b) vhost woken → kick", 0.0, 0.0),
    ("netrx.wakeup", "(c) woken → running", 5_000.0, 7_000.0),
];

fn spans(streams: i64, rep: u32) -> Vec<TelemetryRow> {
    let mut rows = Vec::new();
    for (key, label, base, load) in SPANS {
        let p50 = if base > 0.0 {
            base + if streams > 0 { load } else { 0.0 } + f64::from(rep) * 10.0
        } else {
            0.0
        };
        let count = if base > 0.0 { 9_000.0 } else { 0.0 };
        let row = |stat: &str, v: f64, unit| {
            TelemetryRow::new("trace", format!("{key}:{stat}"), label, None, v, unit)
        };
        rows.push(row("count", count, Unit::Count));
        for (stat, f) in [
            ("p50", 1.0),
            ("p90", 2.0),
            ("p99", 4.0),
            ("mean", 1.2),
            ("max", 9.0),
        ] {
            rows.push(row(stat, p50 * f, Unit::Nanoseconds));
        }
        rows.push(row("unmatched", 1.0, Unit::Count));
    }
    rows
}

/// One path, no load and 3 streams, 4 headline and 4 telemetry repetitions each.
fn store_run(lab: &Lab, traced: bool) -> i64 {
    let mut plan = Vec::new();
    let mut recs = Vec::new();
    for (point, streams) in [0i64, 3].into_iter().enumerate() {
        let mut params = Params::default();
        params
            .0
            .insert("load_streams".into(), ParamValue::Int(streams));
        for rep in 0..4u32 {
            for role in [Role::Headline, Role::Telemetry] {
                let seq = plan.len() as u32;
                plan.push(PlannedMeasurement {
                    seq,
                    point: point as u32,
                    params: params.clone(),
                    variant: "loopback".into(),
                    rep,
                    role,
                });
                let tracing = traced && role == Role::Telemetry;
                let rtt = 20.0 + streams as f64 * 3.0 + f64::from(rep) * 0.1;
                recs.push(MeasurementRecord {
                    seq,
                    point: point as u32,
                    params: params.clone(),
                    variant: "loopback".into(),
                    rep,
                    status: MeasurementStatus::Ok,
                    started_at: 1_700_000_000.0 + f64::from(seq),
                    elapsed_s: 1.0,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new(
                            "rtt_p50_us",
                            rtt,
                            Unit::Microseconds,
                            Better::Lower,
                        )],
                        ..Default::default()
                    },
                    telemetry: if tracing {
                        spans(streams, rep)
                    } else {
                        Vec::new()
                    },
                    role,
                    monitors: if tracing {
                        vec!["trace".into()]
                    } else {
                        Vec::new()
                    },
                });
            }
        }
    }
    let mut store = Store::open(lab.db()).expect("store opens");
    let run = NewRun {
        study: "netpaths".into(),
        workload: "netrr".into(),
        label: None,
        spec: serde_json::from_value(
            serde_json::json!({ "primary_metric": "rtt_p50_us", "monitors": ["trace"] }),
        )
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(
            serde_json::json!({ "kernel": "6.18.0" }),
        ),
        plan,
        unavailable: Vec::new(),
        uid: None,
    };
    let id = store
        .create_run(&run, 1_700_000_000.0)
        .expect("run created");
    for r in &recs {
        store.record(id, r).expect("recorded");
    }
    id
}

#[test]
fn show_and_report_print_the_spans_of_telemetry_repetitions() {
    let lab = Lab::new();
    let id = store_run(&lab, true).to_string();
    let o = lab.run(&["show", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.contains("Trace spans in µs"), "{out}");
    assert!(out.contains("from the telemetry repetitions only"), "{out}");
    assert!(out.contains("no events matched"), "{out}");
    // Seed 001's layout: the latency row, then the spans, one column per load case.
    assert!(out.contains("(usec)"), "{out}");
    let latency = out
        .lines()
        .find(|l| l.starts_with("latency "))
        .expect("latency row");
    assert_eq!(
        latency.split_whitespace().collect::<Vec<_>>(),
        ["latency", "20.15", "29.15"]
    );
    let wake = out
        .lines()
        .find(|l| l.starts_with("(c) woken → running") && l.contains("p50"))
        .expect("the A/B row of (c)");
    assert!(wake.contains("WORSE"), "{wake}");
    assert!(
        out.contains("Spans: loopback: load_streams=3 vs load_streams=0"),
        "{out}"
    );

    let o = lab.run(&["report", &id, "--format", "markdown"]);
    let (md, err) = text(&o);
    assert!(o.status.success(), "{md}{err}");
    assert!(
        md.contains("Where the time goes: trace spans of run"),
        "{md}"
    );
}

#[test]
fn a_run_without_span_rows_prints_no_span_section() {
    let lab = Lab::new();
    let id = store_run(&lab, false).to_string();
    let o = lab.run(&["show", &id]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    for absent in ["Trace spans", "(usec)", "Spans:"] {
        assert!(!out.contains(absent), "{absent} in:\n{out}");
    }
}
