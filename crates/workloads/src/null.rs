//! `null`: a deterministic fake workload for runner and CLI tests (fio's `null` engine,
//! hyperfine's mock executor).
//!
//! Its output depends only on its parameters and on how many times this instance has been
//! called: `value × (1 + noise)` with the noise drawn from a hash of both, within
//! ±`noise_pct`. Every `fail_every`th call fails. With `sleep=0` it does no waiting at
//! all, so the runner's own overhead can be measured with it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use perflab_core::{
    Better, HistogramData, MeasureCtx, Metric, Needs, ParamError, ParamKind, ParamSpec, Params,
    Unit, Workload, WorkloadError, WorkloadInfo, WorkloadOutput,
};
use perflab_core::{Kind, ReportHints, WorkloadHints};

/// The null workload. Each instance counts its own calls, so tests that need a known
/// sequence make a fresh one with [`NullWorkload::new`].
#[derive(Debug, Default)]
pub struct NullWorkload {
    calls: AtomicU64,
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "value",
        role: perflab_core::ParamRole::Plain,
        help: "the value reported before noise",
        kind: ParamKind::Float {
            min: -1e300,
            max: 1e300,
        },
        default: Some("100"),
    },
    ParamSpec {
        name: "noise_pct",
        role: perflab_core::ParamRole::Plain,
        help: "deterministic pseudo-noise, uniform within ±this percent",
        kind: ParamKind::Float {
            min: 0.0,
            max: 100.0,
        },
        default: Some("0"),
    },
    ParamSpec {
        name: "sleep",
        role: perflab_core::ParamRole::Plain,
        help: "time to sleep in each call (0: return at once)",
        kind: ParamKind::Duration {
            min_s: 0.0,
            max_s: 3600.0,
        },
        default: Some("0"),
    },
    ParamSpec {
        name: "fail_every",
        role: perflab_core::ParamRole::Plain,
        help: "fail every Nth call of this workload (0: never)",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: Some("0"),
    },
];

static INFO: WorkloadInfo = WorkloadInfo {
    kind: Kind::Workload,
    name: "null",
    help: "Deterministic fake for tests: reports `value` with seeded pseudo-noise, \
           optionally sleeps, and fails every `fail_every`th call.",
    params: PARAMS,
    needs: Needs::NONE,
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "value",
        result_title: None,
        latency_table: None,
        workers: perflab_core::note::Workers::Threads,
    }),
};

/// The sleep is cut into slices so a stop request ends it within one slice.
const SLEEP_SLICE: Duration = Duration::from_millis(10);

/// SplitMix64: a fixed, documented mixer, so the noise stays the same across Rust
/// versions (std's hasher makes no such promise).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn hash(params: &Params, call: u64) -> u64 {
    let mut h = mix(call);
    for b in params.describe().bytes() {
        h = mix(h ^ u64::from(b));
    }
    h
}

/// The value the `call`th call (0-based) reports for `params`.
pub fn null_value(params: &Params, call: u64) -> Result<f64, ParamError> {
    let unit = (hash(params, call) >> 11) as f64 / (1u64 << 53) as f64;
    let noise = params.float("noise_pct")? / 100.0 * (2.0 * unit - 1.0);
    Ok(params.float("value")? * (1.0 + noise))
}

impl NullWorkload {
    pub const fn new() -> Self {
        Self {
            calls: AtomicU64::new(0),
        }
    }
}

impl Workload for NullWorkload {
    fn info(&self) -> &'static WorkloadInfo {
        &INFO
    }

    fn cpus(&self, _params: &Params) -> Result<Vec<u32>, ParamError> {
        Ok(Vec::new())
    }

    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        if ctx.stopping() {
            return Err(WorkloadError::Interrupted);
        }
        let sleep = Duration::from_secs_f64(params.seconds("sleep")?.max(0.0));
        let every = params.int("fail_every")?;
        let value = null_value(params, call)?;
        let probe = ctx.threads.begin("null", None);
        if !sleep.is_zero() {
            let end = Instant::now() + sleep;
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                if ctx.stopping() {
                    probe.finish(&ctx.threads, None);
                    return Err(WorkloadError::Interrupted);
                }
                std::thread::sleep((end - now).min(SLEEP_SLICE));
            }
        }
        probe.finish(&ctx.threads, Some(0));

        if every > 0 && (call + 1).checked_rem(every as u64) == Some(0) {
            return Err(WorkloadError::Failed(format!(
                "null: call {} fails as asked (fail_every={every})",
                call + 1
            )));
        }

        // Fixed bounds: `saturating_record` on an auto-sized histogram clamps to its
        // initial, tiny range.
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3)
            .map_err(|e| WorkloadError::Failed(format!("null: histogram: {e}")))?;
        let base = hash(params, call) % 1000 + 1000;
        for k in 1..=3 {
            h.saturating_record(base * k);
        }
        Ok(WorkloadOutput {
            metrics: vec![Metric::new("value", value, Unit::Count, Better::Higher)],
            histograms: vec![HistogramData::from_hdr("latency", Unit::Nanoseconds, &h)],
            threads: Vec::new(),
            notes: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::{resolve, SysRoot};
    use std::collections::BTreeMap;

    fn params(pairs: &[(&str, &str)]) -> Params {
        let given: BTreeMap<String, String> = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        resolve("null", PARAMS, &given).unwrap()
    }

    fn ctx() -> MeasureCtx {
        MeasureCtx::new(SysRoot::host(), Vec::new())
    }

    fn values(w: &NullWorkload, p: &Params, n: usize) -> Vec<Result<f64, String>> {
        (0..n)
            .map(|_| {
                w.run(p, &ctx())
                    .map(|o| o.metric("value").map(|m| m.value).unwrap_or(f64::NAN))
                    .map_err(|e| e.to_string())
            })
            .collect()
    }

    #[test]
    fn same_inputs_give_same_outputs() {
        let p = params(&[("value", "50"), ("noise_pct", "10")]);
        let a = values(&NullWorkload::new(), &p, 20);
        let b = values(&NullWorkload::new(), &p, 20);
        assert_eq!(a, b);
        let vals: Vec<f64> = a.into_iter().map(|r| r.unwrap()).collect();
        assert!(vals.iter().all(|v| (45.0..=55.0).contains(v)), "{vals:?}");
        // Noise really varies between calls.
        assert!(vals.windows(2).any(|w| w[0] != w[1]), "{vals:?}");
    }

    #[test]
    fn no_noise_reports_the_value_exactly() {
        let p = params(&[("value", "123.5")]);
        let out = NullWorkload::new().run(&p, &ctx()).unwrap();
        assert_eq!(out.metric("value").unwrap().value, 123.5);
        assert_eq!(out.metric("value").unwrap().better, Better::Higher);
        let h = &out.histograms[0];
        assert_eq!(h.count, 3);
        // base, 2 x base, 3 x base with base in 1000..2000: never clamped.
        assert!(h.min >= 999.0 && h.max >= 2.9 * h.min, "{h:?}");
    }

    #[test]
    fn fails_on_every_nth_call() {
        let p = params(&[("fail_every", "3")]);
        let r = values(&NullWorkload::new(), &p, 7);
        let failed: Vec<usize> = (0..7).filter(|&i| r[i].is_err()).collect();
        assert_eq!(failed, vec![2, 5]);
        assert!(r[2].as_ref().unwrap_err().contains("fail_every=3"));
    }

    #[test]
    fn a_parameter_missing_from_its_params_fails_the_run_naming_it() {
        let mut p = params(&[("value", "7")]);
        p.0.remove("noise_pct");
        let e = NullWorkload::new().run(&p, &ctx()).unwrap_err().to_string();
        assert_eq!(
            e,
            "parameter \"noise_pct\" (read as a number) is not declared by this workload \
             (it has: fail_every, sleep, value)"
        );
        p.0.insert(
            "noise_pct".into(),
            perflab_core::ParamValue::Str("5".into()),
        );
        let e = NullWorkload::new().run(&p, &ctx()).unwrap_err().to_string();
        assert!(
            e.contains("\"noise_pct\" is read as a number but holds text"),
            "{e}"
        );
    }

    #[test]
    fn records_a_thread_and_honours_stop() {
        let c = ctx();
        NullWorkload::new().run(&params(&[]), &c).unwrap();
        let recs = c.threads.take();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].role, "null");

        let c = ctx();
        let stop = c.stop.clone();
        let t0 = Instant::now();
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stop.store(true, Ordering::Relaxed);
        });
        let r = NullWorkload::new().run(&params(&[("sleep", "100s")]), &c);
        h.join().unwrap();
        assert!(matches!(r, Err(WorkloadError::Interrupted)), "{r:?}");
        // Far from the 100 s asked for, with room for a loaded machine.
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    }
}
