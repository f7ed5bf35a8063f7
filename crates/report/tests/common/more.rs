//! Small hand-made runs for the whole-report tests: round-trip latencies with HDR
//! histograms per path (netrr-like) and threaded transfers with per-thread records.

use hdrhistogram::Histogram;
use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo, RunStatus};
use perflab_core::{
    Better, CpuPath, HistogramData, Metric, ParamValue, Params, TelemetryRow, ThreadRecord, Unit,
    WorkloadOutput,
};

fn info(id: i64, study: &str, workload: &str, primary: &str) -> RunInfo {
    super::catalog::install();
    RunInfo {
        id,
        created_at: 1_700_000_000.0,
        study: study.into(),
        workload: workload.into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": primary,
            "param_roles": crate::common::catalog::roles_json(workload),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(
            serde_json::json!({ "kernel": "6.18.0", "thp": "madvise" }),
        ),
        unavailable: vec![],
        planned: 0,
        done: 0,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

/// Round trips of `n` values between `lo` and `hi` ns with one slow tail value.
fn rtt(lo: u64, hi: u64, n: u64, tail: u64) -> HistogramData {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    for i in 0..n {
        h.record(lo + (hi - lo) * i / n).expect("in range");
    }
    h.record(tail).expect("in range");
    HistogramData::from_hdr("rtt", Unit::Nanoseconds, &h)
}

/// Lock waits as the channel model records them.
fn lock_waits(lo: u64, hi: u64, n: u64, tail: u64) -> HistogramData {
    let mut h = rtt(lo, hi, n, tail);
    h.name = "lock_wait_ns".into();
    h
}

/// Two paths (variants) under two loads, 4 repetitions: veth is ~10% slower.
pub fn latency_run(id: i64) -> (RunInfo, Vec<MeasurementRecord>) {
    let mut ms = Vec::new();
    for (point, streams) in [0i64, 3].into_iter().enumerate() {
        for rep in 0..4u32 {
            for (variant, base) in [("loopback", 18_000u64), ("veth", 20_000)] {
                let base = base + u64::from(rep) * 100 + streams as u64 * 2_000;
                let h = rtt(base, base * 2, 2_000, base * 40);
                let p50 = h.p50;
                let mut params = Params::default();
                params
                    .0
                    .insert("load_streams".into(), ParamValue::Int(streams));
                params.0.insert("size".into(), ParamValue::Int(64));
                ms.push(MeasurementRecord {
                    seq: ms.len() as u32,
                    point: point as u32,
                    params,
                    variant: variant.into(),
                    rep,
                    status: MeasurementStatus::Ok,
                    started_at: 0.0,
                    elapsed_s: 1.0,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new(
                            "p50_us",
                            p50 / 1000.0,
                            Unit::Microseconds,
                            Better::Lower,
                        )],
                        histograms: vec![h],
                        ..Default::default()
                    },
                    telemetry: vec![TelemetryRow::new(
                        "softirqs",
                        "NET_RX",
                        "",
                        Some(1),
                        if variant == "veth" { 4_000.0 } else { 3_000.0 } + f64::from(rep),
                        Unit::Count,
                    )],
                    role: Default::default(),
                    monitors: Vec::new(),
                });
            }
        }
    }
    (info(id, "netpaths", "netrr", "p50_us"), ms)
}

/// Four threads on two CPUs, 3 repetitions of one point: staggered, so summing is not
/// valid.
pub fn threads_run(id: i64) -> (RunInfo, Vec<MeasurementRecord>) {
    let metric = |n: &str, v: f64, u: Unit| Metric::new(n, v, u, Better::Neither);
    let ms = (0..3u32)
        .map(|rep| {
            let threads = (0..4u32)
                .map(|t| ThreadRecord {
                    role: format!("c{t}t0"),
                    tid: 100 + t as i32,
                    pinned_cpu: None,
                    cpu_samples: vec![(t % 2, 9), ((t + 1) % 2, 1)],
                    // Each thread spends its last tenth on the other CPU; thread 3 has no
                    // path, as a record from before paths were kept.
                    cpu_path: CpuPath {
                        changes: if t == 3 {
                            vec![]
                        } else {
                            vec![(0, t % 2), (45_000_000, (t + 1) % 2)]
                        },
                        unknown_after: None,
                    },
                    start_ns: 1_000_000 + u64::from(t) * 20_000_000,
                    end_ns: 51_000_000 + u64::from(t) * 20_000_000,
                    bytes: Some(64 << 20),
                    ..Default::default()
                })
                .collect();
            MeasurementRecord {
                seq: rep,
                point: 0,
                params: Params::default(),
                variant: "free".into(),
                rep,
                status: MeasurementStatus::Ok,
                started_at: 0.0,
                elapsed_s: 1.0,
                output: WorkloadOutput {
                    metrics: vec![
                        metric(
                            "bandwidth_mib_s",
                            2000.0 + f64::from(rep),
                            Unit::MibPerSecond,
                        ),
                        metric(
                            "aggregate_mib_s",
                            2000.0 + f64::from(rep),
                            Unit::MibPerSecond,
                        ),
                        metric("summed_mib_s", 5120.0, Unit::MibPerSecond),
                        metric("overlap", 0.4, Unit::Ratio),
                        metric("parallelism", 1.3, Unit::Ratio),
                        metric("sum_valid", 0.0, Unit::Count),
                        metric("threads", 4.0, Unit::Count),
                        metric(
                            "lock_wait_ms_per_thread",
                            1.5 + f64::from(rep) * 0.25,
                            Unit::Milliseconds,
                        ),
                        metric(
                            "lock_wait_ms_thread_max",
                            2.0 + f64::from(rep),
                            Unit::Milliseconds,
                        ),
                    ],
                    // 400 acquisitions of 90 to 400 ns (the seed's uncontended
                    // spintimes) and one of 25 µs.
                    histograms: vec![lock_waits(90 + u64::from(rep) * 10, 400, 400, 25_000)],
                    threads,
                    notes: vec!["summing per-thread bandwidths is NOT valid: 4 threads: \
                                 aggregate 2000 MiB/s; thread c3t0 started 10.0 ms after \
                                 thread c0t0 ended: they never ran together"
                        .into()],
                },
                telemetry: vec![],
                role: Default::default(),
                monitors: Vec::new(),
            }
        })
        .collect();
    (info(id, "parallel", "xfer", "bandwidth_mib_s"), ms)
}

/// A ctxsw run shaped like `quick`: variants pipe and futex (each setting `mechanism`) at
/// CPU pairs 0-0 and 0-1, 3 repetitions, round-trip histograms in ns. futex at 0-0 holds
/// 200 round trips per repetition (too few for p99.9 when pooled), the others 400.
pub fn ctxsw_run(id: i64) -> (RunInfo, Vec<MeasurementRecord>) {
    let mut ms = Vec::new();
    for (point, cpu_b) in [0i64, 1].into_iter().enumerate() {
        for rep in 0..3u32 {
            for (variant, base) in [("pipe", 13_000u64), ("futex", 9_000)] {
                let base = base + u64::from(rep) * 50 + cpu_b as u64 * 1_500;
                let n = if variant == "futex" && cpu_b == 0 {
                    200
                } else {
                    400
                };
                let h = rtt(base, base + base / 4, n, base * 5);
                let mut params = Params::default();
                params.0.insert("cpu_a".into(), ParamValue::Int(0));
                params.0.insert("cpu_b".into(), ParamValue::Int(cpu_b));
                params
                    .0
                    .insert("mechanism".into(), ParamValue::Str(variant.into()));
                ms.push(MeasurementRecord {
                    seq: ms.len() as u32,
                    point: point as u32,
                    params,
                    variant: variant.into(),
                    rep,
                    status: MeasurementStatus::Ok,
                    started_at: 0.0,
                    elapsed_s: 1.0,
                    output: WorkloadOutput {
                        metrics: vec![Metric::new(
                            "round_trips_per_sec",
                            1e9 / h.mean,
                            Unit::PerSecond,
                            Better::Higher,
                        )],
                        histograms: vec![h],
                        ..Default::default()
                    },
                    telemetry: Vec::new(),
                    role: Default::default(),
                    monitors: Vec::new(),
                });
            }
        }
    }
    let mut info = info(id, "quick", "ctxsw", "round_trips_per_sec");
    info.spec.variants =
        serde_json::from_value(serde_json::json!([{ "name": "pipe" }, { "name": "futex" }]))
            .expect("valid variants");
    (info, ms)
}
