//! Timing copies with the driver's events.
//!
//! Each stream ("lane") gets a chain of events around its copies: event 0, copy, event
//! 1, copy, … event k, queued back to back, then one wait for the last event. The time
//! from event i to event i+1 is copy i's, as the GPU saw it; the chain's whole span is
//! what `bandwidthTest` times around its loop, gaps between copies included (with
//! pageable memory those gaps are the driver's staging work, which is the point).
//! Batches of at most [`MAX_BATCH`] copies repeat until the timed GPU time reaches the
//! duration.
//!
//! Copies shorter than [`GROUP_NS`] are timed in groups: an event after every `group`
//! copies, not after each. Queueing a copy and an event costs the host a few
//! microseconds, more than a small pinned copy takes the engine, so an event per copy
//! would halve the rate the stream is fed at and measure the host, not the link (and
//! `bandwidthTest`, which records no events inside its loop, would disagree). Between batches the host waits; that wait is no lane's, so the lanes'
//! spans are laid end to end on a clock that leaves it out.

use hdrhistogram::Histogram;
use perflab_core::WorkloadError;
use perflab_cuda::{CudaError, DeviceBuf, Event, Gpu, Stream};

/// Most copies queued before the host waits: enough that queueing never starves a copy
/// engine of small copies, few enough that events stay cheap.
pub const MAX_BATCH: usize = 1024;

/// Copies estimated shorter than this are timed in groups that last about this long: an
/// event record costs the host about as much as queueing a copy, so one per 200 µs keeps
/// its share of a host-bound stream of small copies under 1%.
pub const GROUP_NS: f64 = 200_000.0;

/// What one lane copies.
pub enum Copy<'a, 'g> {
    HtoD {
        dst: &'a DeviceBuf<'g>,
        src: *const u8,
    },
    DtoH {
        dst: *mut u8,
        src: &'a DeviceBuf<'g>,
    },
    DtoD {
        dst: &'a DeviceBuf<'g>,
        src: &'a DeviceBuf<'g>,
    },
}

/// A stream with its copy and its events.
pub struct Lane<'a, 'g> {
    pub name: &'static str,
    pub copy: Copy<'a, 'g>,
    pub stream: Stream<'g>,
    events: Vec<Event<'g>>,
}

impl<'a, 'g> Lane<'a, 'g> {
    pub fn new(gpu: &'g Gpu, name: &'static str, copy: Copy<'a, 'g>) -> Result<Self, CudaError> {
        Ok(Self {
            name,
            copy,
            stream: Stream::new(gpu)?,
            events: Vec::new(),
        })
    }

    /// Queues one copy of `len` bytes.
    pub fn enqueue(&self, len: usize) -> Result<(), CudaError> {
        match self.copy {
            // SAFETY: the host pointers come from buffers of at least `len` bytes that
            // outlive the lane (they are borrowed for 'a), and every batch waits for its
            // last event before the host touches them again.
            Copy::HtoD { dst, src } => unsafe { self.stream.copy_htod(dst, src, len) },
            // SAFETY: as above.
            Copy::DtoH { dst, src } => unsafe { self.stream.copy_dtoh(dst, src, len) },
            // SAFETY: as above; the device buffers are borrowed for 'a too.
            Copy::DtoD { dst, src } => unsafe { self.stream.copy_dtod(dst, src, len) },
        }
    }
}

/// One lane's timed copies.
#[derive(Clone, Debug, Default)]
pub struct LaneTimed {
    pub copies: u64,
    /// Sum of its copies' event intervals.
    pub busy_ns: f64,
    /// Its span on the gap-free clock shared by all lanes.
    pub start_ns: f64,
    pub end_ns: f64,
}

/// The copies of one measurement.
pub struct Timed {
    pub lanes: Vec<LaneTimed>,
    /// The lanes' union span, host waits between batches left out.
    pub window_ns: f64,
    /// Every copy's interval, all lanes (each group's mean, once per copy in it).
    pub histogram: Histogram<u64>,
    /// Copies per event interval (1: every copy timed alone).
    pub group: usize,
}

fn cuda(e: CudaError) -> WorkloadError {
    WorkloadError::Failed(format!("gpuxfer: {e}"))
}

/// Times copies of `len` bytes on every lane at once for at least `duration_ns` of GPU
/// time, after an untimed warm-up copy and a short calibration run per lane.
pub fn measure<'g>(
    gpu: &'g Gpu,
    lanes: &mut [Lane<'_, 'g>],
    len: usize,
    duration_ns: u64,
    stopping: &dyn Fn() -> bool,
) -> Result<Timed, WorkloadError> {
    let warm = batch(gpu, lanes, len, 1, 1).map_err(cuda)?;
    // One copy alone carries the launch latency; a short run of back-to-back copies
    // (as many as fill a few groups' time, at most 64) gives the rate that sizes the
    // groups and batches.
    let k = ((4.0 * GROUP_NS / warm.window_ns.max(1.0)).ceil() as usize).clamp(1, 64);
    let calib = batch(gpu, lanes, len, k, k).map_err(cuda)?;
    let mut est_ns = (calib.window_ns / k as f64).max(1.0);
    let group = ((GROUP_NS / est_ns).ceil() as usize).clamp(1, MAX_BATCH);
    let mut timed = Timed {
        group,
        lanes: vec![LaneTimed::default(); lanes.len()],
        window_ns: 0.0,
        histogram: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
            .expect("static histogram bounds"),
    };
    while timed.window_ns < duration_ns as f64 {
        if stopping() {
            return Err(WorkloadError::Interrupted);
        }
        let left = duration_ns as f64 - timed.window_ns;
        let k = ((left / est_ns).ceil() as usize).clamp(1, MAX_BATCH);
        let k = k.div_ceil(group) * group;
        let b = batch(gpu, lanes, len, k, group).map_err(cuda)?;
        for (t, l) in timed.lanes.iter_mut().zip(&b.lanes) {
            if t.copies == 0 {
                t.start_ns = timed.window_ns + l.start_ns;
            }
            t.end_ns = timed.window_ns + l.end_ns;
            t.copies += l.copies;
            t.busy_ns += l.busy_ns;
        }
        for &ns in &b.intervals {
            let per_copy = (ns / group as u64).clamp(1, 3_600_000_000_000);
            // Clamped into the bounds, so recording cannot fail.
            let _ = timed.histogram.record_n(per_copy, group as u64);
        }
        timed.window_ns += b.window_ns;
        est_ns = (b.window_ns / k as f64).max(1.0);
    }
    Ok(timed)
}

struct Batch {
    lanes: Vec<LaneTimed>,
    window_ns: f64,
    intervals: Vec<u64>,
}

/// Queues `k` copies on every lane, interleaved so that all lanes are fed at once, an
/// event after every `group` of them (`k` is a multiple of `group`), and reads their
/// event chains.
fn batch<'g>(
    gpu: &'g Gpu,
    lanes: &mut [Lane<'_, 'g>],
    len: usize,
    k: usize,
    group: usize,
) -> Result<Batch, CudaError> {
    let n = k / group;
    for lane in lanes.iter_mut() {
        while lane.events.len() < n + 1 {
            lane.events.push(Event::new(gpu)?);
        }
    }
    for lane in lanes.iter() {
        lane.stream.record(&lane.events[0])?;
    }
    for i in 0..n {
        for lane in lanes.iter() {
            for _ in 0..group {
                lane.enqueue(len)?;
            }
            lane.stream.record(&lane.events[i + 1])?;
        }
    }
    for lane in lanes.iter() {
        lane.events[n].synchronize()?;
    }
    let ms_ns = |ms: f32| f64::from(ms) * 1e6;
    let origin = &lanes[0].events[0];
    let mut out = Batch {
        lanes: Vec::with_capacity(lanes.len()),
        window_ns: 0.0,
        intervals: Vec::with_capacity(n * lanes.len()),
    };
    for lane in lanes.iter() {
        let mut busy = 0.0;
        for i in 0..n {
            let ns = ms_ns(lane.events[i].elapsed_ms(&lane.events[i + 1])?).max(0.0);
            busy += ns;
            out.intervals.push(ns.round() as u64);
        }
        out.lanes.push(LaneTimed {
            copies: k as u64,
            busy_ns: busy,
            // Relative to lane 0's first event; another lane may start before it.
            start_ns: ms_ns(origin.elapsed_ms(&lane.events[0])?),
            end_ns: ms_ns(origin.elapsed_ms(&lane.events[n])?),
        });
    }
    let first = out
        .lanes
        .iter()
        .map(|l| l.start_ns)
        .fold(f64::MAX, f64::min);
    let last = out.lanes.iter().map(|l| l.end_ns).fold(f64::MIN, f64::max);
    for l in &mut out.lanes {
        l.start_ns -= first;
        l.end_ns -= first;
    }
    out.window_ns = (last - first).max(0.0);
    Ok(out)
}
