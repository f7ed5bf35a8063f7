//! `perflab crosscheck report`: how long `perflab report` takes, and how much memory it
//! needs, over a run of 10,000 measurements with latency histograms (issue 6: under 5 s
//! and 500 MB). A benchmark that prints ratios against the targets and exits non-zero
//! when one is missed; no unit test asserts these times, because a timed assertion on a
//! shared machine only measures the noise.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use perflab_core::{HistogramData, Unit};
use perflab_lab::Progress;
use perflab_store::{MeasurementRecord, RunId, RunStatus, Store};

use crate::error::{Error, Result};
use crate::say;
use crate::tolerance::Verdicts;

/// The run size issue 6 names: 2 variants × 50 points × 100 repetitions.
const VARIANTS: usize = 2;
const POINTS: usize = 50;
const REPS: u32 = 100;
const TARGET_S: f64 = 5.0;
const TARGET_MB: f64 = 500.0;
/// Draws per synthetic histogram, each recorded this many times: enough distinct values
/// to fill a few thousand HDR buckets, as a second of ctxsw or netrr round trips does.
const DRAWS: u32 = 8192;
const WEIGHT: u64 = 4;
/// ctxsw's and netrr's bounds, so decoding costs what it costs for their histograms.
const HIST_MAX_NS: u64 = 60_000_000_000;

/// Times `perflab report` (the executable `perflab`) over the runs it builds.
pub fn run(perflab: &Path, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let dir = TempDir::new()?;
    let db = dir.0.join("bench.db");
    let runs = build_runs(&db, &dir.0, out)?;
    let measurements = VARIANTS * POINTS * REPS as usize;
    say!(
        out,
        "timing `perflab report` as a child process ({}), {measurements} measurements per run:",
        perflab.display()
    );
    let one = [runs[0]];
    let cases: [(&str, &[RunId], Output); 4] = [
        ("1 run", &one, Output::HtmlMail),
        ("1 run", &one, Output::Text),
        ("1 run", &one, Output::Json),
        ("2 runs", &runs, Output::HtmlMail),
    ];
    let mut over = false;
    for (what, ids, format) in cases {
        let t = time_report(perflab, &db, &dir.0, ids, format)?;
        let (s_ratio, mb_ratio) = (t.wall_s / TARGET_S, t.max_rss_mb / TARGET_MB);
        let case = format!("report {what} {}", format.name());
        let in_time = verdicts.below(format!("{case} time"), t.wall_s, TARGET_S, "s");
        let in_memory = verdicts.below(format!("{case} max RSS"), t.max_rss_mb, TARGET_MB, "MB");
        let flag = if !(in_time && in_memory) {
            over = true;
            "  OVER TARGET"
        } else {
            ""
        };
        say!(
            out,
            "report {what}, {measurements} measurements, {}: {:.2} s (target < {TARGET_S} s: \
             {s_ratio:.2} of it), max RSS {:.0} MB (target < {TARGET_MB} MB: {mb_ratio:.2} of \
             it), {}{flag}",
            format.name(),
            t.wall_s,
            t.max_rss_mb,
            t.sizes
        );
    }
    if over {
        say!(
            out,
            "OVER TARGET: at least one case missed issue 6's 5 s / 500 MB"
        );
    }
    Ok(())
}

/// Runs `null` through the lab runner once, then stores its records as two runs whose
/// latency histograms are realistic: null's own hold three values each.
fn build_runs(db: &Path, dir: &Path, out: &mut dyn Write) -> Result<[RunId; 2]> {
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
    let mut ids = [0; 2];
    for (k, id) in ids.iter_mut().enumerate() {
        *id = perflab_lab::create(&mut store, &prepared, Some(format!("scale-{}", k + 1)))?;
        // The second run is 3% slower, so the run-vs-run report has a change to find.
        let slowdown = 1.0 + 0.03 * k as f64;
        for m in &ms {
            let rec = with_latency(m, &mut hist, slowdown, k as u64)?;
            store.record(*id, &rec)?;
        }
        store.set_status(*id, RunStatus::Complete)?;
    }
    store.delete_run(source)?;
    say!(
        out,
        "stored as runs {} and {}, each latency histogram {} round trips (log-normal body, 1% \
         tail to 200× the median), in {:.1} s",
        ids[0],
        ids[1],
        u64::from(DRAWS) * WEIGHT,
        t1.elapsed().as_secs_f64()
    );
    Ok(ids)
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

#[derive(Clone, Copy)]
enum Output {
    HtmlMail,
    Text,
    Json,
}

impl Output {
    fn name(self) -> &'static str {
        match self {
            Output::HtmlMail => "html+mail",
            Output::Text => "text",
            Output::Json => "json",
        }
    }
}

struct Timing {
    wall_s: f64,
    max_rss_mb: f64,
    /// What the report wrote, e.g. "html 412 KiB, mail 9 KiB".
    sizes: String,
}

fn time_report(
    perflab: &Path,
    db: &Path,
    dir: &Path,
    ids: &[RunId],
    out: Output,
) -> Result<Timing> {
    let html = dir.join("r.html");
    let stdout_path = dir.join("stdout");
    let _ = std::fs::remove_file(&html);
    let mut cmd = Command::new(perflab);
    cmd.arg("--db").arg(db).arg("report");
    cmd.args(ids.iter().map(|id| id.to_string()));
    match out {
        Output::HtmlMail => {
            cmd.arg("--html").arg(&html).args(["--format", "mail"]);
        }
        Output::Text => {
            cmd.args(["--format", "text"]);
        }
        Output::Json => {
            cmd.args(["--format", "json"]);
        }
    }
    // Standard output goes to a file, not a pipe, so the child never waits on this process.
    cmd.stdout(std::fs::File::create(&stdout_path)?)
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    let t0 = Instant::now();
    let mut child = cmd.spawn()?;
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr)?;
    }
    let (status, rss_kb) = wait4(child.id())?;
    let wall_s = t0.elapsed().as_secs_f64();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(Error::Failed(format!(
            "`perflab report` for {} failed (wait status {status:#x}): {}",
            out.name(),
            stderr.trim()
        )));
    }
    let kib = |p: &PathBuf| {
        std::fs::metadata(p)
            .map(|m| m.len().div_ceil(1024))
            .unwrap_or(0)
    };
    let stdout_kib = kib(&stdout_path);
    let sizes = match out {
        Output::HtmlMail => format!("html {} KiB, mail {stdout_kib} KiB", kib(&html)),
        _ => format!("{} {stdout_kib} KiB", out.name()),
    };
    Ok(Timing {
        wall_s,
        max_rss_mb: rss_kb as f64 / 1024.0,
        sizes,
    })
}

/// Reaps `pid`, returning its wait status and peak resident memory in KiB; std's `wait`
/// does not give the child's rusage.
fn wait4(pid: u32) -> Result<(i32, i64)> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| Error::Failed(format!("child pid {pid} out of range")))?;
    loop {
        let mut status = 0;
        // SAFETY: wait4 writes only into the two values this frame owns.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return Ok((status, ru.ru_maxrss));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::Failed(format!(
                "wait4 on the report child {pid}: {err}"
            )));
        }
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
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("perflab-report-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
