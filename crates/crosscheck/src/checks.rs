//! `perflab crosscheck`: numbers side by side with peer tools in one run, and the cost of
//! perflab's own machinery. These are benchmarks, printed as ratios, each held to the
//! tolerance it states: a number outside it makes the command exit 4 (see
//! [`crate::tolerance`]), so CI can act on it. No test asserts these speeds, because
//! shared machines are noisy.

use std::io::Write;
use std::time::Instant;

use perflab_lab::Progress;
use perflab_store::{MeasurementRecord, RunId, Store};
use perflab_sys::SysRoot;

use crate::error::{input, Result};
use crate::lab_side::LabSide;
use crate::null_run::run_null;
use crate::options::{tolerance, Options};
use crate::pairs::{self, Estimate, Judgement};
use crate::say;
use crate::tolerance::{fmt_num, Verdicts};

/// Runs the check, writing its tables to `out`; every number it holds to a tolerance is
/// in the returned [`Verdicts`] (the binary prints their last line and takes its exit
/// code from them).
pub fn run(o: &Options, out: &mut dyn Write) -> Result<Verdicts> {
    let mut verdicts = Verdicts::new();
    match o.check.as_str() {
        "ctxsw" => ctxsw(o, out, &mut verdicts)?,
        "runner" => {
            fixed_targets(o)?;
            runner(out, &mut verdicts)?
        }
        "memcpy" | "xfer" => memcpy(o, out, &mut verdicts)?,
        "netrr" => netrr(o, out, &mut verdicts)?,
        "report" => {
            fixed_targets(o)?;
            crate::report_cost::run(&o.perflab_exe, out, &mut verdicts)?
        }
        "monitors" => crate::monitors::run(o, out, &mut verdicts)?,
        "trace" => crate::trace::run(o, out, &mut verdicts)?,
        // A diagnostic, not in the list below: see docs/trace.md.
        "trace-cost" => crate::trace_cost::run(o, out, &mut verdicts)?,
        "verdicts" => crate::verdicts::run(o, out, &mut verdicts)?,
        "bisect" => crate::bisect::run(o, out, &mut verdicts)?,
        "history" => crate::history::run(o, out, &mut verdicts)?,
        "gpu" => crate::gpu::run(o, out, &mut verdicts)?,
        other => {
            return Err(input(format!(
                "no cross-check for {other:?} (available: bisect, ctxsw, gpu, history, memcpy, \
                 monitors, netrr, report, runner, trace, verdicts)"
            )))
        }
    }
    Ok(verdicts)
}

/// runner and report hold costs to fixed targets; a ratio tolerance means nothing there.
fn fixed_targets(a: &Options) -> Result<()> {
    match a.tolerance {
        Some(_) => Err(input(format!(
            "--tolerance applies to the ratio checks (ctxsw, memcpy, netrr), not to {}, \
             whose targets are fixed",
            a.check
        ))),
        None => Ok(()),
    }
}

/// `--pairs`, else the default pairs of this machine.
fn pairs_arg(a: &Options) -> Result<Vec<(u32, u32)>> {
    if a.pairs.is_empty() {
        return default_pairs(&a.sys);
    }
    Ok(a.pairs.clone())
}

fn ctxsw(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let duration = perflab_core::parse_duration(&a.duration).map_err(input)?;
    let pairs = pairs_arg(a)?;
    let tol = tolerance(a, 3.0)?;
    let mut lab = LabSide::new()?;
    say!(
        out,
        "ctxsw (perflab) against `perf bench sched pipe -T`, pipe, {} s per measurement, {}",
        fmt_num(duration / 2.0),
        plan_words()
    );
    say!(
        out,
        "{:>7}  {:>14}  {:>15}  {:>7}  {:>17}  {:>5}  {}",
        "pair",
        "perflab RT/s",
        "perf bench RT/s",
        "ratio",
        "95% CI",
        "pairs",
        "verdict"
    );
    let mut decided = Vec::new();
    for (ca, cb) in pairs {
        let r = crate::ctxsw::ctxsw_vs_perf_bench(
            &mut lab,
            (ca, cb),
            duration / 2.0,
            perflab_workloads::Mechanism::Pipe,
            (pairs::CPU_PLAN, tol),
        )?;
        let j = verdicts.interval(
            format!("pair {ca}-{cb}"),
            r.estimate.median,
            r.estimate.ci,
            tol,
        );
        say!(
            out,
            "{:>7}  {:>14.0}  {:>15.0}  {}",
            format!("{ca}-{cb}"),
            r.perflab_rate,
            r.peer_rate,
            decided_cells(&r.estimate, j)
        );
        decided.push((r.estimate, j));
    }
    print_judged(out, &decided, tol);
    Ok(())
}

/// xfer's memcpy engine (pinned, 4 KiB pages) against `perf bench mem memcpy` at the same
/// sizes, in interleaved pairs; perf has no page-size option, so 4 KiB pages only.
fn memcpy(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let duration = perflab_core::parse_duration(&a.duration).map_err(input)?;
    let tol = tolerance(a, 3.0)?;
    let sizes = crate::options::copy_sizes(a)?;
    say!(
        out,
        "xfer memcpy (perflab, pinned, 4k) against `perf bench mem memcpy`, {duration} s per \
         measurement, {}",
        plan_words()
    );
    say!(
        out,
        "{:>10}  {:>14}  {:>14}  {:>7}  {:>17}  {:>5}  {}",
        "size",
        "perflab MiB/s",
        "perf MiB/s",
        "ratio",
        "95% CI",
        "pairs",
        "verdict"
    );
    let mut lab = LabSide::new()?;
    let rows =
        crate::mem::memcpy_vs_perf_bench(&mut lab, &sizes, duration, (pairs::CPU_PLAN, tol))?;
    let mut decided = Vec::new();
    for r in &rows {
        let size = perflab_core::format_size(r.size);
        let j = verdicts.interval(
            format!("size {size}"),
            r.estimate.median,
            r.estimate.ci,
            tol,
        );
        say!(
            out,
            "{size:>10}  {:>14.0}  {:>14.0}  {}",
            r.perflab_mib_s,
            r.peer_mib_s,
            decided_cells(&r.estimate, j)
        );
        decided.push((r.estimate.clone(), j));
    }
    print_judged(out, &decided, tol);
    Ok(())
}

/// netrr UDP against `sockperf ping-pong --full-rtt` on 127.0.0.1, per CPU pair (client,
/// server) and message size, in interleaved pairs; the p50 ratio is the one judged.
fn netrr(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let duration = perflab_core::parse_duration(&a.duration).map_err(input)?;
    let pairs = pairs_arg(a)?;
    let tol = tolerance(a, 5.0)?;
    let sizes = message_sizes(a)?;
    let mut lab = LabSide::new()?;
    say!(
        out,
        "netrr UDP (perflab) against `sockperf ping-pong --full-rtt` on 127.0.0.1, round trips \
         in µs, {} s per measurement, medians of the rounds; the p50 ratio is judged, {}",
        duration.ceil().max(1.0),
        plan_words()
    );
    say!(
        out,
        "{:>9} {:>6}  {:>9} {:>9} {:>9}  {:>9} {:>9} {:>9}  {:>6} {:>6}  {:>6} {:>17}  {:>5}  {}",
        "cpus c,s",
        "size",
        "netrr avg",
        "p50",
        "p99",
        "sockperf",
        "p50",
        "p99",
        "avg",
        "p99",
        "p50",
        "95% CI",
        "pairs",
        "verdict"
    );
    let mut decided = Vec::new();
    for (c, s) in pairs {
        for &size in &sizes {
            let d = crate::net::netrr_vs_sockperf(
                &mut lab,
                size,
                (c, s),
                duration,
                (pairs::CPU_PLAN, tol),
            )?;
            let j = verdicts.interval(
                format!("cpus {c},{s} size {size} p50"),
                d.estimate.median,
                d.estimate.ci,
                tol,
            );
            say!(out, "{}", net_row((c, s), size, &d, j));
            decided.push((d.estimate, j));
        }
    }
    say!(
        out,
        "ratios are netrr / sockperf; avg and p99 are ratios of the rounds' medians, shown, \
         not judged"
    );
    print_judged(out, &decided, tol);
    Ok(())
}

/// `--sizes` as netrr message sizes, else 64 bytes.
fn message_sizes(a: &Options) -> Result<Vec<usize>> {
    match &a.sizes {
        Some(text) => text
            .split(',')
            .map(|s| {
                perflab_core::parse_size(s)
                    .map(|v| v as usize)
                    .map_err(input)
            })
            .collect(),
        None => Ok(vec![64]),
    }
}

/// One line of the netrr table: both tools' avg, p50 and p99 (medians over the rounds),
/// the avg and p99 ratios, and the judged p50 ratio.
fn net_row((c, s): (u32, u32), size: usize, d: &crate::net::NetDecided, j: Judgement) -> String {
    let med = |f: &dyn Fn(&crate::net::NetCrossRow) -> f64| {
        perflab_stats::median(d.rows.iter().map(f)).unwrap_or(f64::NAN)
    };
    let (na, n50, n99) = (
        med(&|r| r.netrr.avg_us),
        med(&|r| r.netrr.p50_us),
        med(&|r| r.netrr.p99_us),
    );
    let (sa, s50, s99) = (
        med(&|r| r.sockperf.avg_us),
        med(&|r| r.sockperf.p50_us),
        med(&|r| r.sockperf.p99_us),
    );
    format!(
        "{:>9} {size:>6}  {na:>9.2} {n50:>9.2} {n99:>9.2}  {sa:>9.2} {s50:>9.2} {s99:>9.2}  \
         {:>6.3} {:>6.3}  {}",
        format!("{c},{s}"),
        na / sa,
        n99 / s99,
        decided_cells(&d.estimate, j)
    )
}

/// How the ratio checks decide, in one phrase for their headers.
fn plan_words() -> String {
    format!(
        "interleaved pairs (order alternating), {} at first and up to {} while undecided; \
         the ratio is the median of the pair ratios",
        pairs::CPU_PLAN.0,
        pairs::CPU_PLAN.1
    )
}

/// `  1.012  [0.998, 1.020]     12  within`: a row's ratio, interval, pairs and verdict.
fn decided_cells(e: &Estimate, j: Judgement) -> String {
    format!(
        "{:>7.3}  {:>17}  {:>5}  {}",
        e.median,
        format!("[{:.3}, {:.3}]", e.ci.0, e.ci.1),
        e.pairs,
        j.word()
    )
}

/// The check's last line of its own: how many rows held within ±`tol` %, were OUTSIDE, or
/// stayed undecided, and the largest deviation among the medians.
fn print_judged(out: &mut dyn Write, rows: &[(Estimate, Judgement)], tol: f64) {
    let count = |j: Judgement| rows.iter().filter(|(_, k)| *k == j).count();
    let worst = rows
        .iter()
        .map(|(e, _)| (e.median - 1.0).abs())
        .fold(0.0, f64::max);
    say!(
        out,
        "{} rows: {} within ±{}%, {} OUTSIDE, {} undecided; largest deviation of a median \
         {:.2}%",
        rows.len(),
        count(Judgement::Within),
        fmt_num(tol),
        count(Judgement::Outside),
        count(Judgement::Undecided),
        worst * 100.0
    );
}

fn default_pairs(sys: &SysRoot) -> Result<Vec<(u32, u32)>> {
    let topo = perflab_sys::Topology::read(sys)?;
    let anchor = topo.online.first().copied().unwrap_or(0);
    let mut pairs = vec![(anchor, anchor)];
    if let Some(other) = topo.cores().iter().find(|c| !c.contains(&anchor)) {
        pairs.push((anchor, other[0]));
    }
    Ok(pairs)
}

struct Quiet;

impl Progress for Quiet {
    fn begin(&mut self, _: RunId, _: u64, _: u64) {}
    fn measured(&mut self, _: &MeasurementRecord) {}
    fn note(&mut self, _: &str) {}
    fn end(&mut self) {}
}

/// 1,000 measurements of the `null` workload (two variants, 500 alternating repetitions,
/// all default monitors): the runner's own cost per measurement, the process's peak memory,
/// and the time `compare` takes over the result.
fn runner(out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let dir = tempfile_dir()?;
    let mut store = Store::open(dir.join("bench.db"))?;
    let t0 = Instant::now();
    let (id, outcome, _) = run_null(&mut store, &dir, "runner-overhead", &[1.0], 500, &mut Quiet)?;
    let wall = t0.elapsed().as_secs_f64();
    let ms = store.measurements(id)?;
    let in_workload: f64 = ms.iter().map(|m| m.elapsed_s).sum();
    let n = outcome.recorded.max(1) as f64;
    let t1 = Instant::now();
    let info = store.run(id)?;
    let loaded = store.measurements(id)?;
    let table = perflab_report::compare_variants(
        &info,
        &loaded,
        "a",
        "b",
        None,
        &perflab_stats::StatsConfig::default(),
    )?;
    let compare_s = t1.elapsed().as_secs_f64();
    let rss_mb = peak_rss_kb() as f64 / 1024.0;
    let overhead_ms = (wall - in_workload) / n * 1000.0;
    say!(
        out,
        "runner overhead over {} null measurements with default monitors:",
        outcome.recorded
    );
    say!(
        out,
        "  wall {wall:.3} s, in the workload {in_workload:.3} s"
    );
    say!(
        out,
        "  overhead per measurement {overhead_ms:.3} ms (target < 5 ms)"
    );
    say!(out, "  peak memory {rss_mb:.1} MB (target < 100 MB)");
    say!(
        out,
        "  compare over the run (load + statistics, {} rows): {:.3} s (target < 1 s)",
        table.rows.len(),
        compare_s
    );
    let _ = std::fs::remove_dir_all(&dir);
    verdicts.below("overhead per measurement", overhead_ms, 5.0, "ms");
    verdicts.below("peak memory", rss_mb, 100.0, "MB");
    verdicts.below("compare over the run", compare_s, 1.0, "s");
    Ok(())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("perflab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn peak_rss_kb() -> i64 {
    // SAFETY: getrusage writes into the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss
}
