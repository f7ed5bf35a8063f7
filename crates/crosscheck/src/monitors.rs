//! `perflab crosscheck monitors`: does telemetry change what it observes?
//!
//! For each workload and monitor set, measurements with the monitors on and with none
//! alternate in pairs (off on, on off, …, so drift falls on both alike) through the
//! runner's own measurement path, and the ratio on/off of the workload's primary metric is
//! taken per pair. A set that runs around headline figures must keep the median ratio
//! within the tolerance; a set of monitors that disturb (perf counters) runs only in
//! telemetry repetitions, so its ratio is printed for information — it is why they do.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use perflab_core::{Workload, WorkloadOutput};
use perflab_lab::{measure_once, MonitorSet, Progress, RunOptions};
use perflab_stats::{Sample, StatsConfig, Summary};
use perflab_store::{MeasurementRecord, PlannedMeasurement, Role};

use crate::error::{input, Error, Result};
use crate::options::{tolerance, Options};
use crate::say;
use crate::tolerance::Verdicts;

/// What one row measured.
struct Cell {
    workload: &'static str,
    metric: &'static str,
    set: String,
    ran: Vec<String>,
    role: Role,
    off: f64,
    on: f64,
    ratio: Summary,
}

/// Runs the check; every headline set's ratio goes into `verdicts`, which decides the exit
/// code (telemetry-only sets are printed, not held to the tolerance: they never touch a
/// result).
pub fn run(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let sys = a.sys.clone();
    let (duration, pairs, tolerance) = settings(a)?;
    let workloads = workloads(&a.workloads)?;
    let sets = monitor_sets(&a.monitor_sets)?;
    // No knob is applied here; the runner's options want a journal all the same.
    let opts = RunOptions {
        sys: sys.clone(),
        journal: std::env::temp_dir().join(format!("perflab-monitors-{}.json", std::process::id())),
        stop: Arc::new(AtomicBool::new(false)),
        label: None,
    };
    let _signals = perflab_knobs::signals::install(opts.stop.clone())?;
    say!(
        out,
        "monitors on against none, in interleaved pairs (off on, on off, ...) of {duration} \
         measurements: at least {pairs} pairs per row, more (up to {}) until the median ratio's \
         95% CI is within ±{}%; ratio = on / off of the workload's primary metric; tolerance \
         ±{tolerance}% for what runs around headline figures. Monitor sets:",
        a.max_pairs.max(pairs),
        tolerance / 4.0
    );
    for (set, names) in &sets {
        say!(out, "  {set}: {}", names.join(", "));
    }
    let mut cells = Vec::new();
    let mut said = Vec::new();
    for (w, given) in &workloads {
        let mut p = given.clone();
        if w.info().params.iter().any(|s| s.name == "duration") {
            p.insert("duration".into(), duration.to_string());
        }
        let params = perflab_core::resolve(w.info().name, w.info().params, &p)
            .map_err(|e| input(e.to_string()))?;
        for (set, names) in &sets {
            let cell = measure_cell(
                *w,
                &params,
                set,
                names,
                (pairs, a.max_pairs.max(pairs), tolerance),
                &opts,
                &mut said,
            )?;
            print_cell(out, &cell, tolerance, cells.is_empty());
            cells.push(cell);
            if opts.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(Error::Failed("stopped by a signal".into()));
            }
        }
    }
    judge(&cells, tolerance, out, verdicts);
    Ok(())
}

/// `--measure`, `--monitor-pairs` and `--tolerance`, checked.
pub(crate) fn settings(a: &Options) -> Result<(&str, u32, f64)> {
    let duration = a.measure.as_deref().unwrap_or("0.3s");
    perflab_core::parse_duration(duration)
        .map_err(|e| input(format!("--measure {duration:?}: {e}")))?;
    let pairs = a.monitor_pairs;
    if !(2..=10_000).contains(&pairs) {
        return Err(input(format!(
            "--monitor-pairs {pairs}: expected 2 to 10000"
        )));
    }
    let tolerance = tolerance(a, 1.0)?;
    if tolerance <= 0.0 {
        return Err(input(format!(
            "--tolerance {tolerance}: expected a percentage above 0 for monitors"
        )));
    }
    Ok((duration, pairs, tolerance))
}

/// Every headline set's ratio goes to the verdicts; the largest deviation is said.
fn judge(cells: &[Cell], tolerance: f64, out: &mut dyn Write, verdicts: &mut Verdicts) {
    for c in cells.iter().filter(|c| c.role == Role::Headline) {
        // Judged by its interval, as every ratio check is (crate::pairs): a median that
        // lands inside the tolerance by luck with an interval across its edge is undecided.
        verdicts.interval(
            format!("{} with monitors {}", c.workload, c.set),
            c.ratio.median,
            c.ratio.median_ci,
            tolerance,
        );
    }
    say!(out);
    say!(
        out,
        "largest deviation of a set that runs around headline figures: {:.2}% (tolerance \
         ±{tolerance}%)",
        largest(cells)
    );
}

fn largest(cells: &[Cell]) -> f64 {
    cells
        .iter()
        .filter(|c| c.role == Role::Headline)
        .map(|c| ((c.ratio.median - 1.0) * 100.0).abs())
        .fold(0.0, f64::max)
}

/// The workloads to check, each with the parameters of its row: same-CPU pipe ping-pong
/// (where per-task counters cost the most), a pinned 1 MiB memcpy, loopback UDP.
/// A workload with the parameters of its row.
pub(crate) type Row = (&'static dyn Workload, BTreeMap<String, String>);

pub(crate) fn workloads(list: &str) -> Result<Vec<Row>> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let params: &[(&str, &str)] = match name {
            "ctxsw" => &[("cpu_a", "0"), ("cpu_b", "0"), ("mechanism", "pipe")],
            "xfer" => &[("engine", "memcpy"), ("size", "1M"), ("cpu", "0")],
            "netrr" => &[("client_cpu", "0"), ("server_cpu", "0")],
            "null" => &[],
            other => {
                return Err(input(format!(
                    "--workloads: no monitor check for {other:?} (ctxsw, xfer, netrr, null)"
                )))
            }
        };
        let w =
            perflab_workloads::by_name(name).ok_or_else(|| input(format!("no workload {name}")))?;
        let given = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        out.push((w, given));
    }
    if out.is_empty() {
        return Err(input("--workloads: name at least one workload"));
    }
    Ok(out)
}

/// Monitor sets separated by spaces, monitors of a set by commas; `default` is the set a
/// run uses when none is named.
fn monitor_sets(list: &str) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for set in list.split_whitespace() {
        let names: Vec<String> = if set == "default" {
            perflab_monitors::default_names()
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            set.split(',').map(str::to_string).collect()
        };
        for n in &names {
            if perflab_monitors::by_name(n).is_none() {
                return Err(input(format!(
                    "--monitor-sets: unknown monitor {n:?} (known: {})",
                    perflab_monitors::names().join(", ")
                )));
            }
        }
        out.push((set.to_string(), names));
    }
    if out.is_empty() {
        return Err(input("--monitor-sets: name at least one set"));
    }
    Ok(out)
}

fn measure_cell(
    w: &'static dyn Workload,
    params: &perflab_core::Params,
    set: &str,
    names: &[String],
    (pairs, max_pairs, tolerance): (u32, u32, f64),
    opts: &RunOptions,
    said: &mut Vec<String>,
) -> Result<Cell> {
    // A set whose every monitor disturbs runs only in telemetry repetitions; otherwise the
    // set is measured as a headline repetition carries it (its disturbing members left out).
    let role = if disturbing(names) {
        Role::Telemetry
    } else {
        Role::Headline
    };
    let mut on = MonitorSet::new(names);
    let mut off = MonitorSet::new(&[]);
    let metric = w.info().primary_metric();
    let pm = |seq: u32| PlannedMeasurement {
        seq,
        point: 0,
        params: params.clone(),
        variant: String::new(),
        rep: seq,
        role,
    };
    let mut quiet = Quiet::default();
    let mut take = |set: &mut MonitorSet, seq: u32| -> Result<(f64, Vec<String>)> {
        let rec = measure_once(&pm(seq), w, set, opts, &mut quiet)
            .ok_or_else(|| Error::Failed("stopped by a signal".into()))?;
        value(&rec, metric).map(|v| (v, rec.monitors.clone()))
    };
    // One unrecorded measurement first: the first of a process pays for page faults and
    // lazy set-up that no later one sees.
    take(&mut off, 0)?;
    let (mut offs, mut ons, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut ran = Vec::new();
    let cfg = StatsConfig::default();
    for i in 0..max_pairs {
        // Enough pairs once the median ratio is known to a quarter of the tolerance, so a
        // verdict against the tolerance is not a coin toss on a noisy machine.
        if i >= pairs && precise(&ratios, &cfg, tolerance / 4.0) {
            break;
        }
        let (x_off, x_on) = if i % 2 == 0 {
            let a = take(&mut off, 2 * i)?;
            let b = take(&mut on, 2 * i + 1)?;
            (a.0, b)
        } else {
            let b = take(&mut on, 2 * i)?;
            let a = take(&mut off, 2 * i + 1)?;
            (a.0, b)
        };
        ran = x_on.1;
        offs.push(x_off);
        ons.push(x_on.0);
        ratios.push(x_on.0 / x_off);
    }
    say_once(quiet.notes, said);
    let median = |v: Vec<f64>| Sample::new(v).map(|s| s.median()).unwrap_or(f64::NAN);
    Ok(Cell {
        workload: w.info().name,
        metric,
        set: set.to_string(),
        ran,
        role,
        off: median(offs),
        on: median(ons),
        ratio: Summary::new(
            &Sample::new(ratios).map_err(|e| Error::Failed(format!("ratios: {e}")))?,
            &cfg,
        ),
    })
}

/// True when every monitor of the set disturbs the workload it watches.
fn disturbing(names: &[String]) -> bool {
    names
        .iter()
        .all(|n| perflab_monitors::by_name(n).is_some_and(|m| m.disturbs()))
}

/// Prints each note not said before (the same monitor notes recur in every cell).
pub(crate) fn say_once(notes: Vec<String>, said: &mut Vec<String>) {
    for note in notes {
        if !said.contains(&note) {
            eprintln!("{note}");
            said.push(note);
        }
    }
}

/// True when the median's 95% interval is within ±`pct` percent of it.
fn precise(ratios: &[f64], cfg: &StatsConfig, pct: f64) -> bool {
    let Ok(sample) = Sample::new(ratios.to_vec()) else {
        return false;
    };
    let s = Summary::new(&sample, cfg);
    let (lo, hi) = s.median_ci;
    (hi - lo) / 2.0 / s.median.abs() * 100.0 <= pct
}

pub(crate) fn value(rec: &MeasurementRecord, metric: &str) -> Result<f64> {
    if let Some(why) = rec.status.message() {
        return Err(Error::Failed(format!(
            "{} failed: {why}",
            rec.params.describe()
        )));
    }
    let out: &WorkloadOutput = &rec.output;
    out.metric(metric)
        .map(|m| m.value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| Error::Failed(format!("the measurement reported no {metric}")))
}

fn print_cell(out: &mut dyn Write, c: &Cell, tolerance: f64, header: bool) {
    if header {
        say!(
            out,
            "{:<8} {:<20} {:<13} {:<10} {:>5} {:>12} {:>12} {:>7}  {:<18}  verdict",
            "workload",
            "metric",
            "monitors",
            "in",
            "pairs",
            "off median",
            "on median",
            "ratio",
            "95% CI"
        );
    }
    let verdict = match c.role {
        Role::Telemetry => "telemetry only: never in a result".to_string(),
        Role::Headline => format!(
            "{} ±{tolerance}%",
            crate::pairs::judge(c.ratio.median_ci, tolerance).word()
        ),
    };
    say!(
        out,
        "{:<8} {:<20} {:<13} {:<10} {:>5} {:>12.1} {:>12.1} {:>7.4}  [{:.4}, {:.4}]  {verdict}",
        c.workload,
        c.metric,
        c.set,
        c.role.as_str(),
        c.ratio.n,
        c.off,
        c.on,
        c.ratio.median,
        c.ratio.median_ci.0,
        c.ratio.median_ci.1,
    );
    if c.role == Role::Headline && c.ran.len() != c.set.split(',').count() {
        say!(
            out,
            "{:<8} (ran in a headline repetition: {})",
            "",
            c.ran.join(", ")
        );
    }
}

/// Collects the runner's notes (a monitor this machine lacks) to print once per row.
#[derive(Default)]
pub(crate) struct Quiet {
    pub(crate) notes: Vec<String>,
}

impl Progress for Quiet {
    fn begin(&mut self, _: perflab_store::RunId, _: u64, _: u64) {}
    fn measured(&mut self, _: &MeasurementRecord) {}
    fn note(&mut self, message: &str) {
        if !self.notes.iter().any(|n| n == message) {
            self.notes.push(message.to_string());
        }
    }
    fn end(&mut self) {}
}
