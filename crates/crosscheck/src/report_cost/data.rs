//! The runs `crosscheck report` times the commands over, built once in a temporary
//! database: the `null` workload through the lab runner once (10,000 measurements with
//! the default monitors' telemetry), then stored again as runs of the sizes the targets
//! name, with latency histograms as realistic as ctxsw's or netrr's (null's own hold three
//! values each).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use perflab_core::{HistogramData, Unit};
use perflab_lab::{Prepared, Progress};
use perflab_store::{MeasurementRecord, PlannedMeasurement, RunId, RunStatus, Store};

use crate::error::{Error, Result};
use crate::say;

/// The run measured through the runner: 2 variants × 50 points × 100 repetitions.
const POINTS: usize = 50;
const REPS: u32 = 100;
/// The large runs repeat each point this many times as often: 2 × 50 × 500 = 50,000.
const LARGE_REPS: u32 = 500;
/// The wide run: 2 variants × 1,000 points × 10 repetitions.
const WIDE_POINTS: usize = 1000;
const WIDE_REPS: u32 = 10;
/// Draws per synthetic histogram, each recorded this many times: enough distinct values
/// to fill a few thousand HDR buckets, as a second of ctxsw or netrr round trips does.
const DRAWS: u32 = 8192;
const WEIGHT: u64 = 4;
/// ctxsw's and netrr's bounds, so decoding costs what it costs for their histograms.
const HIST_MAX_NS: u64 = 60_000_000_000;

/// The runs built: two of 10,000 measurements, two of 50,000 (the second of each pair
/// 3% slower, so comparisons have a change to find), and one of 1,000 points.
pub(super) struct Runs {
    pub small: [RunId; 2],
    pub large: [RunId; 2],
    pub wide: RunId,
}

/// A measured record's cell and repetition, which the larger runs borrow it by.
type Slot = (u32, String, u32);

pub(super) fn build(db: &Path, dir: &Path, out: &mut dyn Write) -> Result<Runs> {
    let mut store = Store::open(db)?;
    let noise: Vec<f64> = (1..=POINTS).map(|i| i as f64).collect();
    let t0 = Instant::now();
    let (source, _, prepared) = crate::null_run::run_null(
        &mut store,
        dir,
        "report-scale",
        &noise,
        REPS,
        &mut Dots {
            n: 0,
            out: &mut *out,
        },
    )?;
    let ms = store.measurements(source)?;
    say!(
        out,
        " {} null measurements with default monitors in {:.1} s",
        ms.len(),
        t0.elapsed().as_secs_f64()
    );
    let t1 = Instant::now();
    let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, HIST_MAX_NS, 3)
        .map_err(|e| Error::Failed(format!("histogram: {e}")))?;
    // Each small run's records by slot: the larger runs store copies of them.
    let mut measured: Vec<HashMap<Slot, MeasurementRecord>> = Vec::new();
    let mut small = [0; 2];
    for (k, id) in small.iter_mut().enumerate() {
        *id = perflab_lab::create(&mut store, &prepared, Some(format!("scale-{}", k + 1)))?;
        // The second run is 3% slower.
        let slowdown = 1.0 + 0.03 * k as f64;
        let mut by_slot = HashMap::new();
        for m in &ms {
            let rec = with_latency(m, &mut hist, slowdown, k as u64)?;
            store.record(*id, &rec)?;
            by_slot.insert((m.point, m.variant.clone(), m.rep), rec);
        }
        store.set_status(*id, RunStatus::Complete)?;
        measured.push(by_slot);
    }
    store.delete_run(source)?;
    let large_plan = crate::null_run::prepare_null("report-scale-100k", &noise, LARGE_REPS)?;
    let mut large = [0; 2];
    for (k, id) in large.iter_mut().enumerate() {
        *id = copies(
            &mut store,
            &large_plan,
            &format!("scale-100k-{}", k + 1),
            |p| &measured[k][&(p.point, p.variant.clone(), p.rep % REPS)],
        )?;
    }
    let wide_noise: Vec<f64> = (1..=WIDE_POINTS).map(|i| i as f64 / 10.0).collect();
    let wide_plan = crate::null_run::prepare_null("compare-1000", &wide_noise, WIDE_REPS)?;
    let wide = copies(&mut store, &wide_plan, "wide", |p| {
        &measured[0][&(p.point % POINTS as u32, p.variant.clone(), p.rep)]
    })?;
    say!(
        out,
        "stored runs {} and {} (10,000 measurements each), {} and {} (50,000 each) and {} \
         (1,000 points × 2 variants × {WIDE_REPS}), each latency histogram {} round trips \
         (log-normal body, 1% tail to 200× the median), in {:.1} s",
        small[0],
        small[1],
        large[0],
        large[1],
        wide,
        u64::from(DRAWS) * WEIGHT,
        t1.elapsed().as_secs_f64()
    );
    drop(store);
    drop(measured);
    drop(ms);
    trim();
    Ok(Runs { small, large, wide })
}

/// Hands the memory freed since the build back to the kernel, so that the children
/// forked next do not start from this process's resident memory (see `child`).
fn trim() {
    // SAFETY: malloc_trim only releases free heap memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// This process's resident memory now, in MB (from /proc/self/status), which a forked
/// child's max RSS includes: the floor under every figure.
pub(super) fn own_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// A run of `prepared`'s plan whose every measurement is a copy of the record `like`
/// picks for its plan row, renumbered to that row.
fn copies<'a>(
    store: &mut Store,
    prepared: &Prepared,
    label: &str,
    like: impl Fn(&PlannedMeasurement) -> &'a MeasurementRecord,
) -> Result<RunId> {
    let id = perflab_lab::create(store, prepared, Some(label.into()))?;
    for p in store.plan(id)? {
        let mut rec = like(&p).clone();
        rec.seq = p.seq;
        rec.point = p.point;
        rec.params = p.params;
        rec.variant = p.variant;
        rec.rep = p.rep;
        rec.role = p.role;
        store.record(id, &rec)?;
    }
    store.set_status(id, RunStatus::Complete)?;
    Ok(id)
}

/// `m` with its `latency` histogram replaced by a synthetic one, and its metrics scaled
/// down by `slowdown`.
fn with_latency(
    m: &MeasurementRecord,
    hist: &mut hdrhistogram::Histogram<u64>,
    slowdown: f64,
    run: u64,
) -> Result<MeasurementRecord> {
    let mut rec = m.clone();
    for metric in &mut rec.output.metrics {
        metric.value /= slowdown;
    }
    // Medians differ by variant and point, as they would between CPU pairs or sizes.
    let variant = if m.variant == "a" { 1.0 } else { 1.02 };
    let median = 8000.0 * variant * (1.0 + 0.01 * f64::from(m.point)) * slowdown;
    let mut rng = SplitMix(u64::from(m.seq) << 8 | run);
    hist.reset();
    for _ in 0..DRAWS {
        let v = if rng.unit() < 0.01 {
            median * 200f64.powf(rng.unit())
        } else {
            median * (0.25 * rng.normal()).exp()
        };
        hist.saturating_record_n(v.max(1.0) as u64, WEIGHT);
    }
    let data = HistogramData::from_hdr("latency", Unit::Nanoseconds, hist);
    match rec
        .output
        .histograms
        .iter_mut()
        .find(|h| h.name == "latency")
    {
        Some(h) => *h = data,
        None => rec.output.histograms.push(data),
    }
    Ok(rec)
}

/// A seeded generator (SplitMix64), so every run of the benchmark reports on the same data.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A dot per 500 measurements, so the ~15 s of setup visibly moves.
struct Dots<'a> {
    n: u64,
    out: &'a mut dyn Write,
}

impl Progress for Dots<'_> {
    fn begin(&mut self, _: RunId, total: u64, _: u64) {
        let _ = write!(self.out, "building a run of {total} null measurements ");
    }
    fn measured(&mut self, _: &MeasurementRecord) {
        self.n += 1;
        if self.n.is_multiple_of(500) {
            let _ = write!(self.out, ".");
            let _ = self.out.flush();
        }
    }
    fn note(&mut self, _: &str) {}
    fn end(&mut self) {}
}

/// The benchmark's database, removed however the benchmark ends.
pub(super) struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("perflab-report-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
