//! `dmatest`: the kernel's own DMA engine test (drivers/dma/dmatest.c) as a workload,
//! seed 000's tool. perflab sets its parameters, starts it, waits for it, and turns each
//! test thread's summary line in the kernel log into a thread record, so the same
//! verdict as for xfer's channel model says whether the per-thread bandwidths may be
//! summed.
//!
//! A thread's interval ends at its summary's log timestamp and starts `tests / iops`
//! before it (dmatest's own runtime, which leaves out the time spent filling and
//! verifying buffers: with `noverify=false` the real start is earlier). Its bytes are its
//! `KB/s` (KiB/s) times that runtime, so the summed bandwidth is the sum of the kernel's
//! per-thread figures and the aggregate is all bytes over the union window. All
//! intervals are on the kernel log clock. Where the machine has no DMA engine or the
//! module is not loaded, the workload is unavailable with the reason.

pub mod driver;

use std::time::Duration;

use perflab_core::{
    format_size, Better, MeasureCtx, Metric, Needs, ParamError, ParamKind, ParamSpec, Params,
    ThreadRecord, Unit, Workload, WorkloadError, WorkloadInfo, WorkloadOutput,
};
use perflab_core::{Kind, Need, ReportHints, WorkloadHints};

use crate::parallel::{self, Criteria};
use driver::Settings;
use perflab_parsers::dmatest_log::Summary;

#[derive(Debug, Default)]
pub struct Dmatest;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "channel",
        role: perflab_core::ParamRole::Plain,
        help: "channels to test, e.g. dma0chan0 or dma0chan0,dma1chan0 (empty: every channel)",
        kind: ParamKind::Text { max_len: 1024 },
        default: Some(""),
    },
    ParamSpec {
        name: "device",
        role: perflab_core::ParamRole::Plain,
        help: "only channels of this DMA device, e.g. 8002000000.gpdma (empty: any)",
        kind: ParamKind::Text { max_len: 256 },
        default: Some(""),
    },
    ParamSpec {
        name: "threads_per_chan",
        role: perflab_core::ParamRole::Plain,
        help: "test threads per channel",
        kind: ParamKind::Int { min: 1, max: 1024 },
        default: Some("1"),
    },
    ParamSpec {
        name: "max_channels",
        role: perflab_core::ParamRole::Plain,
        help: "test at most this many channels (0: no limit)",
        kind: ParamKind::Int { min: 0, max: 4096 },
        default: Some("0"),
    },
    ParamSpec {
        name: "iterations",
        role: perflab_core::ParamRole::Plain,
        help: "transfers per thread",
        kind: ParamKind::Int {
            min: 1,
            max: 1_000_000_000,
        },
        default: Some("1000"),
    },
    ParamSpec {
        name: "test_buf_size",
        role: perflab_core::ParamRole::Plain,
        help: "bytes of each transfer's buffer",
        kind: ParamKind::Size {
            min: 1,
            max: 1 << 30,
        },
        default: Some("16K"),
    },
    ParamSpec {
        name: "norandom",
        role: perflab_core::ParamRole::Plain,
        help: "true: every transfer moves the whole buffer (bandwidth); false: random \
               lengths and offsets (dmatest's default, a correctness test)",
        kind: ParamKind::Bool,
        default: Some("true"),
    },
    ParamSpec {
        name: "noverify",
        role: perflab_core::ParamRole::Plain,
        help: "true: skip the CPU's fill and compare of the buffers (the engine's \
               bandwidth); false: verify every transfer",
        kind: ParamKind::Bool,
        default: Some("true"),
    },
    ParamSpec {
        name: "polled",
        role: perflab_core::ParamRole::Plain,
        help: "poll for completion instead of waiting for the interrupt",
        kind: ParamKind::Bool,
        default: Some("false"),
    },
    ParamSpec {
        name: "alignment",
        role: perflab_core::ParamRole::Plain,
        help: "buffer alignment as a power of two (-1: the engine's own)",
        kind: ParamKind::Int { min: -1, max: 16 },
        default: Some("-1"),
    },
    ParamSpec {
        name: "timeout",
        role: perflab_core::ParamRole::Plain,
        help: "dmatest's per-transfer timeout in milliseconds",
        kind: ParamKind::Int {
            min: 1,
            max: 3_600_000,
        },
        default: Some("3000"),
    },
    ParamSpec {
        name: "transfer",
        role: perflab_core::ParamRole::Plain,
        help: "memcpy or memset (dmatest's `dmatest` parameter, 0 or 1)",
        kind: ParamKind::Choice(&["memcpy", "memset"]),
        default: Some("memcpy"),
    },
    ParamSpec {
        name: "wait",
        role: perflab_core::ParamRole::Plain,
        help: "longest time perflab waits for the test before stopping it",
        kind: ParamKind::Duration {
            min_s: 0.1,
            max_s: 86_400.0,
        },
        default: Some("600s"),
    },
];

static INFO: WorkloadInfo = WorkloadInfo {
    kind: Kind::Workload,
    name: "dmatest",
    help: "The kernel's DMA engine test (dmatest module, seed 000): sets its parameters, runs \
           it, reads each thread's summary from the kernel log as a thread record, and says \
           whether the per-thread bandwidths may be summed (aggregate_mib_s, summed_mib_s, \
           overlap, parallelism, sum_valid). bandwidth_mib_s is the aggregate. Needs a DMA \
           engine and the dmatest module.",
    params: PARAMS,
    needs: Needs::all(&[Need::Privileges, Need::Dmatest]),
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "bandwidth_mib_s",
        result_title: None,
        latency_table: None,
        workers: perflab_core::note::Workers::Threads,
    }),
};

fn yn(b: bool) -> String {
    if b { "Y" } else { "N" }.to_string()
}

/// The parameter writes a point asks for.
pub fn settings(params: &Params) -> Result<Settings, ParamError> {
    let p: Vec<(&'static str, String)> = vec![
        ("timeout", params.int("timeout")?.to_string()),
        ("iterations", params.int("iterations")?.to_string()),
        ("test_buf_size", params.int("test_buf_size")?.to_string()),
        (
            "threads_per_chan",
            params.int("threads_per_chan")?.to_string(),
        ),
        ("max_channels", params.int("max_channels")?.to_string()),
        ("noverify", yn(params.bool("noverify")?)),
        ("norandom", yn(params.bool("norandom")?)),
        ("polled", yn(params.bool("polled")?)),
        ("alignment", params.int("alignment")?.to_string()),
        (
            "dmatest",
            if params.str("transfer")? == "memset" {
                "1"
            } else {
                "0"
            }
            .to_string(),
        ),
        ("device", params.str("device")?.trim().to_string()),
    ];
    // An empty `device` is dmatest's default: writing it resets an earlier run's choice.
    Ok(Settings {
        params: p,
        channels: params
            .str("channel")?
            .split([',', ' '])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect(),
        wait: Duration::from_secs_f64(params.seconds("wait")?.max(0.1)),
    })
}

impl Workload for Dmatest {
    fn info(&self) -> &'static WorkloadInfo {
        &INFO
    }

    fn cpus(&self, _params: &Params) -> Result<Vec<u32>, ParamError> {
        Ok(Vec::new())
    }

    fn validate(&self, params: &Params) -> Result<(), String> {
        // Written to the module's `device` parameter: a name as sysfs spells devices.
        let device = params.str("device").map_err(|e| e.to_string())?.trim();
        if !device
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
        {
            return Err(format!(
                "device {device:?} is not a DMA device name such as 8002000000.gpdma"
            ));
        }
        for c in &settings(params).map_err(|e| e.to_string())?.channels {
            if !c
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                return Err(format!(
                    "channel {c:?} is not a DMA channel name such as dma0chan0"
                ));
            }
        }
        Ok(())
    }

    /// No DMA channel or no dmatest module: every measurement would fail, so no run.
    fn available(&self, sys: &perflab_sys::SysRoot) -> Result<(), perflab_core::Unavailable> {
        driver::check(sys).map(drop)
    }

    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError> {
        let s = settings(params)?;
        let buf_size = params.int("test_buf_size")?;
        let chans = driver::check(&ctx.sys)?;
        if let Some(c) = s.channels.iter().find(|c| !chans.contains(c)) {
            return Err(WorkloadError::Failed(format!(
                "dmatest: no DMA channel {c} on this machine (it has {})",
                chans.join(", ")
            )));
        }
        let r = driver::run(&ctx.sys, &s, ctx)?;
        let expected: u64 = r.scan.started.iter().map(|(_, n)| u64::from(*n)).sum();
        let mut out = output(&r.scan.summaries, &r.placement, ctx)?;
        out.notes.extend(r.notes);
        out.notes
            .extend(r.scan.skipped.iter().map(ToString::to_string));
        if expected > 0 && (r.scan.summaries.len() as u64) < expected {
            out.notes.push(format!(
                "dmatest started {expected} threads but the log holds {} summaries; the \
                 verdict covers those",
                r.scan.summaries.len()
            ));
        }
        for res in r.scan.results.iter().take(5) {
            out.notes.push(format!("dmatest: {res}"));
        }
        out.notes.push(format!(
            "dmatest set {}; thread intervals are on the kernel log clock, each starting \
             tests/iops before its summary ({} per transfer)",
            r.written.join(" "),
            format_size(buf_size.max(0) as u64)
        ));
        Ok(out)
    }
}

/// Thread records, metrics and the verdict from the summaries.
pub fn output(
    summaries: &[Summary],
    placement: &std::collections::BTreeMap<String, driver::Seen>,
    ctx: &MeasureCtx,
) -> Result<WorkloadOutput, WorkloadError> {
    if summaries.is_empty() {
        return Err(WorkloadError::Failed(
            "dmatest: the test ended but the kernel log holds no summary line for it".into(),
        ));
    }
    let mut out = WorkloadOutput::default();
    let mut spans = Vec::new();
    for s in summaries {
        let (Some(end_us), Some(run_ns)) = (s.ts_us, s.runtime_ns()) else {
            out.notes.push(format!(
                "dmatest thread {} left out of the verdict: its summary has no timestamp or \
                 no iops",
                s.thread
            ));
            continue;
        };
        let end_ns = end_us.saturating_mul(1000);
        let bytes = (s.kib_s * 1024.0 * run_ns as f64 / 1e9).round() as u64;
        // comm holds at most 15 bytes of the name.
        let comm: String = s.thread.chars().take(15).collect();
        let seen = placement.get(&comm);
        let rec = ThreadRecord {
            role: s.thread.clone(),
            tid: seen.map_or(0, |p| p.pid),
            pinned_cpu: None,
            cpu_samples: seen
                .map(|p| p.cpus.iter().map(|(&c, &n)| (c, n)).collect())
                .unwrap_or_default(),
            migrations: seen.and_then(|p| p.migrations),
            start_ns: end_ns.saturating_sub(run_ns),
            end_ns,
            bytes: Some(bytes),
            ..Default::default()
        };
        spans.extend(parallel::spans_from_records(std::slice::from_ref(&rec)));
        ctx.threads.add(rec);
        if s.status != 0 {
            out.notes.push(format!(
                "dmatest thread {} ended with status {}",
                s.thread, s.status
            ));
        }
    }
    let v = parallel::judge(&spans, &Criteria::default());
    let sum = |f: fn(&Summary) -> f64| summaries.iter().map(f).sum::<f64>();
    let failures = sum(|s| s.failures as f64);
    out.metrics = parallel::bandwidth_metrics(&v).to_vec();
    out.metrics.extend([
        Metric::new(
            "tests",
            sum(|s| s.tests as f64),
            Unit::Count,
            Better::Neither,
        ),
        Metric::new("failures", failures, Unit::Count, Better::Lower),
        Metric::new("iops", sum(|s| s.iops), Unit::PerSecond, Better::Higher),
    ]);
    out.metrics.extend(parallel::metrics(&v));
    if failures > 0.0 {
        out.notes.push(format!(
            "dmatest counted {failures:.0} failed transfers: the engine moved wrong data or \
             timed out, so its bandwidth is not to be trusted"
        ));
    }
    out.notes.extend(parallel::notes(&v));
    Ok(out)
}

#[cfg(test)]
mod tests;
