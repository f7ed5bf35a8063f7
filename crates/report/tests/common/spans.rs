//! A netpaths-like run with the `trace` monitor's rows, as its contract writes them: two
//! paths under no load and 3 bulk streams, 4 headline repetitions (no tracing) and 4
//! telemetry repetitions per point carrying the `netrx` spans. Span (c) never matches;
//! a fifth span was skipped because the kernel lacks its event (the monitor's note).

use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};

pub const REPS: u32 = 4;

/// (key, label, p50 in ns without load, extra ns with 3 streams).
pub const SPANS: [(&str, &str, f64, f64); 4] = [
    ("netrx.irq", "(a) IRQ → softirq NET_RX", 1_500.0, 500.0),
    (
        "netrx.softirq",
        "(b) softirq NET_RX → receiver woken",
        3_000.0,
        2_000.0,
    ),
    (
        "netrx.vhost",
        "(c) vhost worker woken → guest kicked",
        0.0,
        0.0,
    ),
    (
        "netrx.wakeup",
        "(d) receiver woken → running",
        4_000.0,
        6_000.0,
    ),
];

/// What the round trip holds beyond the spans, in µs.
const REST_US: f64 = 10.0;

pub fn run_info(id: i64) -> RunInfo {
    super::catalog::install();
    RunInfo {
        id,
        created_at: 1_700_000_000.0,
        study: "netpaths".into(),
        workload: "netrr".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "rtt_p50_us",
            "monitors": ["softirqs", "trace"],
            "variants": [{"name": "loopback"}, {"name": "veth"}],
            "param_roles": crate::common::catalog::roles_json("netrr"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(
            serde_json::json!({ "kernel": "6.18.0" }),
        ),
        unavailable: vec![],
        planned: 32,
        done: 32,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

/// The span rows of one measurement; `extra_ns` is added to every matched span.
pub fn span_rows(streams: i64, extra_ns: f64, rep: u32) -> Vec<TelemetryRow> {
    let mut rows = Vec::new();
    for (key, label, base, load) in SPANS {
        let matched = base > 0.0;
        let p50 = if matched {
            base + extra_ns + if streams > 0 { load } else { 0.0 } + f64::from(rep) * 20.0
        } else {
            0.0
        };
        let count = if matched {
            20_000.0 - streams as f64 * 1_000.0 + f64::from(rep)
        } else {
            0.0
        };
        let row = |stat: &str, v: f64, unit: Unit| {
            TelemetryRow::new("trace", format!("{key}:{stat}"), label, None, v, unit)
        };
        rows.push(row("count", count, Unit::Count));
        for (stat, factor) in [
            ("p50", 1.0),
            ("p90", 1.5),
            ("p99", 3.0),
            ("mean", 1.1),
            ("max", 10.0),
        ] {
            rows.push(row(stat, p50 * factor, Unit::Nanoseconds));
        }
        rows.push(row(
            "unmatched",
            if matched { 3.0 } else { 12.0 },
            Unit::Count,
        ));
    }
    rows
}

/// The spans' p50 sum in µs at a point, for the round trip that contains them.
fn spans_us(streams: i64, extra_ns: f64, rep: u32) -> f64 {
    SPANS
        .iter()
        .filter(|s| s.2 > 0.0)
        .map(|(_, _, base, load)| {
            base + extra_ns + if streams > 0 { *load } else { 0.0 } + f64::from(rep) * 20.0
        })
        .sum::<f64>()
        / 1000.0
}

fn params(streams: i64) -> Params {
    let mut p = Params::default();
    p.0.insert("load_streams".into(), ParamValue::Int(streams));
    p.0.insert("size".into(), ParamValue::Int(64));
    p.0.insert("duration".into(), ParamValue::Float(1.0));
    p
}

/// `traced = false` leaves every span row out: the same run without the monitor.
pub fn records(traced: bool) -> Vec<MeasurementRecord> {
    let mut ms = Vec::new();
    for (point, streams) in [0i64, 3].into_iter().enumerate() {
        for rep in 0..REPS {
            for (variant, extra_ns) in [("loopback", 0.0), ("veth", 1_000.0)] {
                for role in [Role::Headline, Role::Telemetry] {
                    let tracing = role == Role::Telemetry;
                    // Tracing costs the round trip a little; a headline repetition has
                    // none of it.
                    let rtt = spans_us(streams, extra_ns, rep)
                        + REST_US
                        + if tracing { 1.5 } else { 0.0 };
                    let mut telemetry = vec![TelemetryRow::new(
                        "softirqs",
                        "NET_RX",
                        "",
                        None,
                        40_000.0,
                        Unit::Count,
                    )];
                    let mut notes = Vec::new();
                    if tracing && traced {
                        telemetry.extend(span_rows(streams, extra_ns, rep));
                        notes.push(
                            "trace: kvm:kvm_entry is not in this kernel's tracefs; span \
                             netrx.kvm skipped"
                                .to_string(),
                        );
                    }
                    ms.push(MeasurementRecord {
                        seq: ms.len() as u32,
                        point: point as u32,
                        params: params(streams),
                        variant: variant.into(),
                        rep,
                        status: MeasurementStatus::Ok,
                        started_at: 0.0,
                        elapsed_s: 1.0,
                        output: WorkloadOutput {
                            metrics: vec![Metric::new(
                                "rtt_p50_us",
                                rtt,
                                Unit::Microseconds,
                                Better::Lower,
                            )],
                            notes,
                            ..Default::default()
                        },
                        telemetry,
                        role,
                        monitors: if tracing && traced {
                            vec!["softirqs".into(), "trace".into()]
                        } else {
                            vec!["softirqs".into()]
                        },
                    });
                }
            }
        }
    }
    ms
}
