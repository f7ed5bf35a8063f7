//! The channel-model measurement: `channels × threads_per_channel` threads, each with
//! `buffers_per_thread` buffer sets of its own, taking a descriptor from its channel for
//! every transfer (see [`super::channels`]).
//!
//! Every thread maps, fills and checks its buffers, pins itself where the placement says,
//! then waits at a barrier, so set-up is outside every thread's interval. Its interval
//! runs from its first clock read after the barrier to its last transfer: with a
//! duration, all threads stop at one deadline set by the first thread through; with
//! `transfers_per_thread`, each stops after that many transfers (as dmatest's
//! `iterations`), so stragglers show. Each thread's CPU time over its interval
//! (CLOCK_THREAD_CPUTIME_ID) is its busy time for the verdict's parallelism.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};

use hdrhistogram::Histogram;
use perflab_core::{
    monotonic_ns, thread_cpu_ns, Better, HistogramData, MeasureCtx, Metric, Unit, WorkloadError,
    WorkloadOutput,
};

use super::buffer::Backing;
use super::channels::{wait_histogram, Channel};
use super::engine::Setup;
use super::engine::{MapFailure, Seen, Xfer as Buffers};
use super::failure::{failed, map_failure};
use super::shape::Shape;
use super::timing::Step;
use crate::parallel::{self, Criteria, Span};

/// The thread's CPU is sampled about this often, outside the copies.
const CPU_SAMPLE_NS: u64 = 1_000_000;

/// Where one thread belongs and runs.
#[derive(Clone, Debug)]
pub struct Slot {
    pub channel: usize,
    pub index: u32,
    pub cpu: Option<u32>,
}

impl Slot {
    /// `c0t3`: channel 0, its thread 3; the OS thread is named `xfer-c0t3`, so
    /// `ps -eLo psr,comm` shows it as the seed's `dma0chan0-sg0` showed.
    pub fn role(&self) -> String {
        format!("c{}t{}", self.channel, self.index)
    }
}

/// What one thread reports back besides its ThreadRecord.
struct Done {
    role: String,
    busy_ns: u64,
    transfers: u64,
    waits: Histogram<u64>,
    seen: Seen,
}

/// Set when some thread failed, so the others stop instead of running out their time.
struct Shared<'a> {
    setup: Setup,
    shape: Shape,
    duration_ns: u64,
    channels: Vec<Channel>,
    start: Barrier,
    deadline: AtomicU64,
    abort: AtomicBool,
    ctx: &'a MeasureCtx,
}

/// Runs the channel model with one thread per slot.
pub fn run(
    setup: Setup,
    shape: Shape,
    slots: Vec<Slot>,
    duration_ns: u64,
    ctx: &MeasureCtx,
) -> Result<WorkloadOutput, WorkloadError> {
    let per_channel = shape
        .threads_per_channel
        .saturating_mul(shape.buffers_per_thread);
    let shared = Shared {
        setup,
        shape,
        duration_ns,
        channels: (0..shape.channels)
            .map(|_| Channel::new(per_channel))
            .collect(),
        start: Barrier::new(slots.len()),
        deadline: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        ctx,
    };
    let results: Mutex<Vec<Result<Done, WorkerError>>> = Mutex::new(Vec::new());
    let spawned = std::thread::scope(|scope| {
        for slot in &slots {
            let (shared, results) = (&shared, &results);
            let spawned = std::thread::Builder::new()
                .name(format!("xfer-{}", slot.role()))
                .spawn_scoped(scope, move || {
                    let r = worker(slot, shared);
                    if r.is_err() {
                        shared.abort.store(true, Ordering::Relaxed);
                    }
                    results.lock().unwrap_or_else(|e| e.into_inner()).push(r);
                });
            if let Err(e) = spawned {
                // Threads already waiting at the barrier would wait for ever: this
                // cannot be undone, so it is reported and the barrier is never reached
                // by the threads that exist (they see `abort` only after it). Avoid it
                // by refusing before spawning (MAX_THREADS) — here only a resource limit.
                shared.abort.store(true, Ordering::Relaxed);
                return Err(failed(format!(
                    "xfer: cannot start thread {}: {e} (ulimit -u?)",
                    slot.role()
                )));
            }
        }
        Ok(())
    });
    spawned?;
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut done = Vec::with_capacity(results.len());
    let mut first_error = None;
    for r in results {
        match r {
            Ok(d) => done.push(d),
            Err(WorkerError::Aborted) => {}
            Err(WorkerError::Failed(e)) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
    }
    if ctx.stopping() {
        return Err(WorkloadError::Interrupted);
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(output(&shared, &done))
}

/// Why a worker thread gave up. The run branches on it: a thread that stopped because
/// another failed has no error of its own, the first real failure is the measurement's.
#[derive(Debug, thiserror::Error)]
enum WorkerError {
    #[error("xfer: stopped because another thread failed")]
    Aborted,
    #[error(transparent)]
    Failed(#[from] WorkloadError),
}

fn worker(slot: &Slot, sh: &Shared<'_>) -> Result<Done, WorkerError> {
    let s = sh.setup;
    let sys = &sh.ctx.sys;
    let map_failed = |label: &str, e, held| map_failure(&s, sys, label, e, held);
    let prepared = prepare(slot, sh, &map_failed);
    let role = slot.role();
    // The thread's counters are opened before the barrier and started after it, so the
    // slow opening does not stagger the threads' starts.
    let mut probe = sh.ctx.threads.prepare(&role, slot.cpu);
    // Every thread reaches the barrier, failed or not, or the others would wait for ever.
    sh.start.wait();
    let mut bufs = prepared?;
    if sh.abort.load(Ordering::Relaxed) {
        return Err(WorkerError::Aborted);
    }
    let ctx = sh.ctx;
    let mut waits = wait_histogram()?;
    let cpu0 = thread_cpu_ns();
    probe.start();
    let now0 = monotonic_ns();
    let deadline = match sh.deadline.compare_exchange(
        0,
        now0 + sh.duration_ns,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => now0 + sh.duration_ns,
        Err(d) => d,
    };
    let channel = &sh.channels[slot.channel];
    let quota = sh.shape.transfers_per_thread;
    let (mut done, mut sampled) = (0u64, now0);
    loop {
        if quota > 0 && done >= quota {
            break;
        }
        if ctx.stopping() {
            return Err(WorkloadError::Interrupted.into());
        }
        if sh.abort.load(Ordering::Relaxed) {
            return Err(WorkerError::Aborted);
        }
        let n = bufs.len().max(1);
        let Some(x) = bufs.get_mut((done % n as u64) as usize) else {
            return Err(failed("xfer: a thread without buffers".into()).into());
        };
        x.prepare()?;
        let d = channel.take(&mut waits);
        x.transfer(done)?;
        channel.complete(d, &mut waits);
        x.release(false)?;
        done += 1;
        let now = monotonic_ns();
        if now.saturating_sub(sampled) >= CPU_SAMPLE_NS {
            probe.sample_cpu();
            sampled = now;
        }
        if quota == 0 && now >= deadline {
            break;
        }
    }
    let busy_ns = thread_cpu_ns().saturating_sub(cpu0);
    probe.finish(&ctx.threads, Some(done.saturating_mul(sh.setup.size)));
    let mut seen = Seen::default();
    for b in &mut bufs {
        for &(label, f) in &std::mem::take(&mut b.seen).fractions {
            seen.fractions.push((label, f));
        }
    }
    Ok(Done {
        role,
        busy_ns,
        transfers: done,
        waits,
        seen,
    })
}

/// Pins the thread, then maps, fills and checks its buffer sets (first touch on the
/// CPU that will use them).
fn prepare<'x>(
    slot: &Slot,
    sh: &'x Shared<'_>,
    map_failed: MapFailure<'x>,
) -> Result<Vec<Buffers<'x>>, WorkerError> {
    let s = sh.setup;
    if let Some(c) = slot.cpu {
        crate::affinity::pin(0, &[c]).map_err(|e| {
            failed(format!(
                "xfer: cannot pin thread {} to CPU {c}: {e}",
                slot.role()
            ))
        })?;
    }
    let ctx = sh.ctx;
    let mut bufs = Vec::with_capacity(sh.shape.buffers_per_thread as usize);
    for _ in 0..sh.shape.buffers_per_thread {
        if sh.abort.load(Ordering::Relaxed) || ctx.stopping() {
            return Err(WorkerError::Aborted);
        }
        let mut x = Buffers::new(s, &ctx.stop, map_failed, || Ok(()))?;
        x.check_content()?;
        x.zero_sources()?;
        bufs.push(x);
    }
    Ok(bufs)
}

fn output(sh: &Shared<'_>, done: &[Done]) -> WorkloadOutput {
    let records = sh.ctx.threads.snapshot();
    let spans: Vec<Span> = parallel::spans_from_records(&records)
        .into_iter()
        .map(|mut s| {
            s.busy_ns = done.iter().find(|d| d.role == s.name).map(|d| d.busy_ns);
            s
        })
        .collect();
    let v = parallel::judge(&spans, &Criteria::default());
    let transfers: u64 = done.iter().map(|d| d.transfers).sum();
    let mut out = WorkloadOutput {
        metrics: parallel::bandwidth_metrics(&v)
            .into_iter()
            .chain([
                Metric::new("iterations", transfers as f64, Unit::Count, Better::Neither),
                Metric::new(
                    "timed_s",
                    v.window_ns as f64 / 1e9,
                    Unit::Seconds,
                    Better::Neither,
                ),
                Metric::new(
                    "channels",
                    f64::from(sh.shape.channels),
                    Unit::Count,
                    Better::Neither,
                ),
                // Derived from total_buffers where not given: the seed's sg_buffers.
                Metric::new(
                    "buffers_per_thread",
                    f64::from(sh.shape.buffers_per_thread),
                    Unit::Count,
                    Better::Neither,
                ),
            ])
            .collect(),
        ..Default::default()
    };
    out.metrics.extend(parallel::metrics(&v));
    huge_pages(done, sh.setup.backing, &mut out);
    lock_waits(done, &mut out);
    out.notes.extend(parallel::notes(&v));
    out
}

/// The smallest share of huge pages each buffer got, over the threads, and notes on it.
fn huge_pages(done: &[Done], backing: Backing, out: &mut WorkloadOutput) {
    let mut seen = Seen::default();
    for d in done {
        for &(label, f) in &d.seen.fractions {
            match seen.fractions.iter_mut().find(|(l, _)| *l == label) {
                Some((_, g)) => *g = g.min(f),
                None => seen.fractions.push((label, f)),
            }
        }
    }
    if let Some(f) = seen.min() {
        out.metrics.push(Metric::new(
            "huge_fraction",
            f,
            Unit::Ratio,
            Better::Neither,
        ));
    }
    seen.notes(backing, out);
}

/// Each thread's total lock wait, and every wait together as a histogram.
fn lock_waits(done: &[Done], out: &mut WorkloadOutput) {
    let mut waits = done.first().map(|d| d.waits.clone());
    if let Some(all) = waits.as_mut() {
        for d in done.iter().skip(1) {
            // Same bounds everywhere, so adding cannot fail.
            let _ = all.add(&d.waits);
        }
    }
    // Each thread's total wait, as the seed summed its spintime lines per thread (from the
    // histogram: values to 3 significant digits).
    let totals_ms: Vec<f64> = done
        .iter()
        .map(|d| d.waits.mean() * d.waits.len() as f64 / 1e6)
        .collect();
    if !totals_ms.is_empty() {
        out.metrics.push(Metric::new(
            "lock_wait_ms_per_thread",
            totals_ms.iter().sum::<f64>() / totals_ms.len() as f64,
            Unit::Milliseconds,
            Better::Neither,
        ));
        out.metrics.push(Metric::new(
            "lock_wait_ms_thread_max",
            totals_ms.iter().copied().fold(0.0, f64::max),
            Unit::Milliseconds,
            Better::Neither,
        ));
    }
    if let Some(w) = waits {
        out.metrics.push(Metric::new(
            "lock_acquisitions",
            w.len() as f64,
            Unit::Count,
            Better::Neither,
        ));
        out.histograms.push(HistogramData::from_hdr(
            "lock_wait_ns",
            Unit::Nanoseconds,
            &w,
        ));
    }
}
