//! Hand-made `xfer` records shaped like the seed's VE-to-VH scans: bandwidth in MiB/s
//! per buffer size for veos 1.2.2 and v1_64_96, small pages (4k) and huge pages (2m),
//! unpinned buffers, 5 repetitions with about 1% deterministic noise.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};

pub const REPS: u32 = 5;

/// Buffer sizes of the seed's scans, KiB.
pub const KIB: [u64; 16] = [
    32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288,
    1048576,
];

/// The seed's `small pages (4k), unpinned buffer` table, MiB/s.
pub const VEOS_4K: [f64; 16] = [
    131.0, 249.0, 447.0, 698.0, 924.0, 1190.0, 1374.0, 1487.0, 1599.0, 1633.0, 1720.0, 1683.0,
    1655.0, 1644.0, 1734.0, 1649.0,
];
pub const V164_4K: [f64; 16] = [
    106.0, 263.0, 477.0, 839.0, 1714.0, 1755.0, 2504.0, 3071.0, 4320.0, 5378.0, 5670.0, 5328.0,
    5817.0, 5748.0, 5557.0, 5527.0,
];
/// The seed's `huge pages (2M), unpinned buffer` table, MiB/s.
pub const VEOS_2M: [f64; 16] = [
    79.0, 248.0, 490.0, 718.0, 1008.0, 1296.0, 1447.0, 1566.0, 1649.0, 1704.0, 1725.0, 1676.0,
    1681.0, 1698.0, 1772.0, 1692.0,
];
pub const V164_2M: [f64; 16] = [
    110.0, 291.0, 550.0, 928.0, 1566.0, 2949.0, 4421.0, 6905.0, 8272.0, 9570.0, 10129.0, 10545.0,
    10690.0, 10669.0, 10802.0, 10872.0,
];

/// Relative noise of repetition `rep` at size index `i`, within about ±1%.
pub fn noise(i: usize, rep: u32, shift: usize) -> f64 {
    const N: [f64; 5] = [-0.008, 0.003, 0.0, 0.009, -0.005];
    N[(i + rep as usize + shift) % N.len()]
}

pub fn run(id: i64, label: &str) -> RunInfo {
    super::catalog::install();
    RunInfo {
        id,
        created_at: 1_700_000_000.0,
        study: "memxfer".into(),
        workload: "xfer".into(),
        label: Some(label.into()),
        status: RunStatus::Complete,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "bandwidth_mib_s",
            "param_roles": crate::common::catalog::roles_json("xfer"),
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

pub fn params(engine: &str, kib: u64) -> Params {
    let mut p = Params::default();
    let s = |v: &str| ParamValue::Str(v.into());
    p.0.insert("engine".into(), s(engine));
    p.0.insert("direction".into(), s("read"));
    p.0.insert("size".into(), ParamValue::Int((kib * 1024) as i64));
    p.0.insert("state".into(), s("unpinned"));
    p.0.insert("duration".into(), ParamValue::Float(2.0));
    p.0.insert("cpu".into(), ParamValue::Int(2));
    p
}

/// One scan of a run: for each engine, each size and each `(variant, MiB/s per size)`,
/// `REPS` repetitions, interleaved as the runner orders them. `fail(engine, variant,
/// kib, rep)` says which repetitions fail.
pub fn scan(
    engines: &[&str],
    variants: &[(&str, &[f64; 16])],
    shift: usize,
    fail: impl Fn(&str, &str, u64, u32) -> bool,
) -> Vec<MeasurementRecord> {
    let mut out = Vec::new();
    for rep in 0..REPS {
        for (e, engine) in engines.iter().enumerate() {
            for (i, &kib) in KIB.iter().enumerate() {
                for (v, (variant, mib_s)) in variants.iter().enumerate() {
                    let failed = fail(engine, variant, kib, rep);
                    // Each variant's noise is its own (shifted by its index): with one
                    // pattern for both, every pair's ratio would be the same, a row with
                    // no spread, which no verdict may come from.
                    let value = mib_s[i] * (1.0 + noise(i + 2 * v, rep, shift));
                    out.push(MeasurementRecord {
                        seq: out.len() as u32,
                        point: (e * KIB.len() + i) as u32,
                        params: params(engine, kib),
                        variant: variant.to_string(),
                        rep,
                        status: if failed {
                            MeasurementStatus::Failed("xfer: ve_send_data: EIO".into())
                        } else {
                            MeasurementStatus::Ok
                        },
                        started_at: 0.0,
                        elapsed_s: 2.0,
                        output: WorkloadOutput {
                            metrics: if failed {
                                vec![]
                            } else {
                                vec![Metric::new(
                                    "bandwidth_mib_s",
                                    value,
                                    Unit::MibPerSecond,
                                    Better::Higher,
                                )]
                            },
                            ..Default::default()
                        },
                        telemetry: vec![],
                        role: Default::default(),
                        monitors: Vec::new(),
                    });
                }
            }
        }
    }
    out
}
