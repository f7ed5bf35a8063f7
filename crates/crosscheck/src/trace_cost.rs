//! `perflab crosscheck trace-cost`: where the `trace` monitor's cost goes, event by event
//! (a diagnostic for issue 23's overhead targets, left out of `--help`'s list).
//!
//! For each workload of `--workloads` and each `trace` monitor of `--monitor-sets`, the
//! BPF backend runs in several configurations, each held against the workload without
//! monitors in interleaved pairs as `crosscheck monitors` takes them: the whole set with
//! empty programs (`r0 = 0; exit`: the attachments alone) and with its matching programs,
//! each attached as this kernel allows (raw tracepoint where it can) and as classic
//! tracepoints; then, for the first set, every event alone (empty, matching, and both
//! classic where the event is not classic already) and the set without that event (its
//! matching in context: the whole set's cost minus this row's is the event's share).
//! Every configuration takes one pair per round, so a machine whose load drifts drifts
//! under all of them alike. Nothing is judged: the numbers are for choosing events and
//! attach methods, on a machine quiet enough to tell them apart.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use perflab_core::Workload;
use perflab_lab::{measure_once, MonitorSet, RunOptions};
use perflab_monitors::trace::bpf::{raw::ATTACH_VAR, EMPTY_VAR, EVENTS_VAR};
use perflab_monitors::trace::BACKEND_VAR;
use perflab_stats::{Sample, StatsConfig, Summary};
use perflab_store::{PlannedMeasurement, Role};

use crate::error::{input, Error, Result};
use crate::monitors::{say_once, settings, value, workloads, Quiet};
use crate::options::Options;
use crate::say;
use crate::tolerance::Verdicts;

/// The variables a configuration sets; every one is cleared after its measurement.
const VARS: [&str; 4] = [BACKEND_VAR, EMPTY_VAR, ATTACH_VAR, EVENTS_VAR];

/// One way of running the trace monitor.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub label: String,
    pub monitor: String,
    /// (variable, value) besides `PERFLAB_TRACE_BACKEND=bpf`.
    pub env: Vec<(&'static str, String)>,
    /// The event measured alone or left out; `None` for the whole set.
    pub event: Option<String>,
    /// Its column in the per-event summary, [`COLUMNS`].
    pub column: usize,
}

/// The per-event summary's columns, in the order [`one_event`] makes them.
pub const COLUMNS: [&str; 5] = [
    "empty",
    "empty classic",
    "matching",
    "matching classic",
    "in the set",
];

impl Config {
    fn new(label: String, monitor: &str, env: &[(&'static str, &str)]) -> Self {
        Self {
            label,
            monitor: monitor.to_string(),
            env: env.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            event: None,
            column: 0,
        }
    }

    fn of(mut self, event: &str, column: usize) -> Self {
        self.event = Some(event.to_string());
        self.column = column;
        self
    }
}

/// A monitor's name for a label: `trace`, the set of `trace:SET`, a file's stem.
pub fn short(monitor: &str) -> &str {
    let arg = monitor.strip_prefix("trace:").unwrap_or(monitor);
    let file = arg.rsplit('/').next().unwrap_or(arg);
    file.strip_suffix(".toml").unwrap_or(file)
}

/// The whole set six ways: empty or matching programs, attached as this kernel allows
/// (members read through BTF types where it can), as plain raw tracepoints (members read
/// by a helper call), or all classic.
pub fn whole_set(monitor: &str) -> Vec<Config> {
    let mut out = Vec::new();
    for (empty, what) in [(true, "empty"), (false, "matching")] {
        for (way, how) in [
            ("", ""),
            ("raw", ", plain raw"),
            ("classic", ", all classic"),
        ] {
            let mut env = Vec::new();
            if empty {
                env.push((EMPTY_VAR, "1"));
            }
            if !way.is_empty() {
                env.push((ATTACH_VAR, way));
            }
            let label = format!("{}: all events, {what}{how}", short(monitor));
            let mut c = Config::new(label, monitor, &env);
            // The summary's columns: as attached here and classic; plain raw is apart.
            c.column = match way {
                "" => 2 * usize::from(!empty),
                "classic" => 2 * usize::from(!empty) + 1,
                _ => COLUMNS.len(),
            };
            out.push(c);
        }
    }
    out
}

/// One event's rows: alone (empty and matching, each as attached here and, where that is
/// not classic already, classic) and the set without it.
pub fn one_event(monitor: &str, event: &str, method: &str) -> Vec<Config> {
    let mut out = Vec::new();
    for (empty, what) in [(true, "empty"), (false, "matching")] {
        let mut ways = vec![(method, false)];
        if method != "tracepoint" {
            ways.push(("tracepoint", true));
        }
        for (how, classic) in ways {
            let mut env = vec![(EVENTS_VAR, event)];
            if empty {
                env.push((EMPTY_VAR, "1"));
            }
            if classic {
                env.push((ATTACH_VAR, "classic"));
            }
            let column = 2 * usize::from(!empty) + usize::from(classic);
            let label = format!("{event} alone, {what}, {how}");
            out.push(Config::new(label, monitor, &env).of(event, column));
        }
    }
    let without = format!("-{event}");
    let label = format!("{} without {event}", short(monitor));
    out.push(Config::new(label, monitor, &[(EVENTS_VAR, &without)]).of(event, 4));
    out
}

/// The `trace` monitors among `--monitor-sets` (other monitors are left out).
fn trace_sets(list: &str) -> Result<Vec<&str>> {
    let sets: Vec<&str> = list
        .split_whitespace()
        .filter(|s| *s == "trace" || s.starts_with("trace:"))
        .collect();
    if sets.is_empty() {
        return Err(input(
            "--monitor-sets: trace-cost needs a trace monitor (trace, trace:SET, trace:FILE.toml)",
        ));
    }
    Ok(sets)
}

/// Every configuration of one workload, in the order they are measured each round.
fn configs(w: &dyn Workload, sets: &[&str], a: &Options) -> Result<Vec<Config>> {
    let mut out = Vec::new();
    for (k, set) in sets.iter().enumerate() {
        out.extend(whole_set(set));
        if k > 0 {
            continue;
        }
        let events = perflab_monitors::trace::events_here(set, w.info().name, &a.sys)
            .map_err(|e| Error::Failed(format!("{set}: {e}")))?;
        for (event, method) in events {
            out.extend(one_event(set, &event, method));
        }
    }
    Ok(out)
}

/// What one configuration measured.
#[derive(Default)]
struct Cell {
    offs: Vec<f64>,
    ratios: Vec<f64>,
    /// How the programs were attached, as the monitor said.
    attached: Vec<String>,
}

pub fn run(a: &Options, out: &mut dyn Write, _verdicts: &mut Verdicts) -> Result<()> {
    let (duration, rounds, _) = settings(a)?;
    let sets = trace_sets(&a.monitor_sets)?;
    let opts = RunOptions {
        sys: a.sys.clone(),
        journal: std::env::temp_dir()
            .join(format!("perflab-tracecost-{}.json", std::process::id())),
        stop: Arc::new(AtomicBool::new(false)),
        label: None,
    };
    let _signals = perflab_knobs::signals::install(opts.stop.clone())?;
    let before: Vec<_> = VARS.iter().map(|v| (*v, std::env::var(v).ok())).collect();
    let result = each_workload(a, &sets, duration, rounds, &opts, out);
    // Restored, so nothing after this check runs under a diagnostic's variables.
    for (var, value) in before {
        match value {
            Some(v) => std::env::set_var(var, v),
            None => std::env::remove_var(var),
        }
    }
    result
}

fn each_workload(
    a: &Options,
    sets: &[&str],
    duration: &str,
    rounds: u32,
    opts: &RunOptions,
    out: &mut dyn Write,
) -> Result<()> {
    for (w, given) in workloads(&a.workloads)? {
        let mut p = given.clone();
        if w.info().params.iter().any(|s| s.name == "duration") {
            p.insert("duration".into(), duration.to_string());
        }
        let params = perflab_core::resolve(w.info().name, w.info().params, &p)
            .map_err(|e| input(e.to_string()))?;
        let configs = configs(w, sets, a)?;
        say!(
            out,
            "{}: the trace monitor's BPF backend in {} configurations against no monitors, \
             {rounds} rounds of one interleaved pair each ({duration} measurements); ratio = \
             on / off of {}",
            w.info().name,
            configs.len(),
            w.info().primary_metric()
        );
        let cells = measure(w, &params, &configs, rounds, opts)?;
        print(out, w.info().primary_metric(), &configs, &cells);
    }
    Ok(())
}

fn measure(
    w: &'static dyn Workload,
    params: &perflab_core::Params,
    configs: &[Config],
    rounds: u32,
    opts: &RunOptions,
) -> Result<Vec<Cell>> {
    let metric = w.info().primary_metric();
    let mut quiet = Quiet::default();
    let mut said = Vec::new();
    let mut seq = 0;
    // (value, the monitor's note of how it attached its programs, if it ran)
    let mut take =
        |names: &[String], env: &[(&'static str, String)]| -> Result<(f64, Option<String>)> {
            let pm = PlannedMeasurement {
                seq,
                point: 0,
                params: params.clone(),
                variant: String::new(),
                rep: seq,
                role: Role::Telemetry,
            };
            seq += 1;
            for (k, v) in env {
                std::env::set_var(k, v);
            }
            // A fresh monitor each time: the variables are read when it starts.
            let rec = measure_once(&pm, w, &mut MonitorSet::new(names), opts, &mut quiet);
            for k in VARS {
                std::env::remove_var(k);
            }
            let notes = std::mem::take(&mut quiet.notes);
            let attached = notes
                .iter()
                .find(|n| n.starts_with("trace: BPF programs attached"))
                .cloned();
            let rec = rec.ok_or_else(|| Error::Failed("stopped by a signal".into()))?;
            if !names.is_empty() && !rec.monitors.iter().any(|m| m.starts_with("trace")) {
                return Err(Error::Failed(format!(
                    "the trace monitor did not run: {}",
                    notes.join("; ")
                )));
            }
            say_once(
                notes
                    .into_iter()
                    .filter(|n| !n.starts_with("trace:"))
                    .collect(),
                &mut said,
            );
            Ok((value(&rec, metric)?, attached))
        };
    // The first measurement of a process pays for lazy set-up that no later one sees.
    take(&[], &[])?;
    let mut cells: Vec<Cell> = configs.iter().map(|_| Cell::default()).collect();
    for r in 0..rounds {
        for (i, (c, cell)) in configs.iter().zip(&mut cells).enumerate() {
            let mut env = vec![(BACKEND_VAR, "bpf".to_string())];
            env.extend(c.env.iter().cloned());
            let names = [c.monitor.clone()];
            let (off, (on, attached)) = if (r as usize + i).is_multiple_of(2) {
                let off = take(&[], &[])?.0;
                (off, take(&names, &env)?)
            } else {
                let on = take(&names, &env)?;
                (take(&[], &[])?.0, on)
            };
            cell.offs.push(off);
            cell.ratios.push(on / off);
            if let Some(n) = attached.filter(|n| !cell.attached.contains(n)) {
                cell.attached.push(n);
            }
            if opts.stop.load(Ordering::Relaxed) {
                return Err(Error::Failed("stopped by a signal".into()));
            }
        }
    }
    Ok(cells)
}

/// What a ratio adds to one operation of the workload: µs of latency for a `_us` metric,
/// µs per operation for a `_per_s` rate (its inverse), else nothing.
pub fn added_us(metric: &str, off: f64, ratio: f64) -> Option<f64> {
    if metric.ends_with("_us") {
        Some((ratio - 1.0) * off)
    } else if metric.ends_with("_per_s") && off > 0.0 && ratio > 0.0 {
        Some((1.0 / ratio - 1.0) * 1e6 / off)
    } else {
        None
    }
}

fn print(out: &mut dyn Write, metric: &str, configs: &[Config], cells: &[Cell]) {
    let cfg = StatsConfig::default();
    let width = configs
        .iter()
        .map(|c| c.label.chars().count())
        .max()
        .unwrap_or(0);
    say!(
        out,
        "{:<width$} {:>5} {:>10} {:>7}  {:<18} {:>10}",
        "configuration",
        "pairs",
        "off median",
        "ratio",
        "95% CI",
        "added µs"
    );
    // Per configuration, what it adds to one operation (µs), for the summary.
    let mut added = Vec::new();
    for (c, cell) in configs.iter().zip(cells) {
        let off = Sample::new(cell.offs.clone()).map_or(f64::NAN, |s| s.median());
        let Ok(sample) = Sample::new(cell.ratios.clone()) else {
            added.push(None);
            continue;
        };
        let s = Summary::new(&sample, &cfg);
        // Per pair, then the median: the round trip itself moves with the machine's load
        // (fourfold here), and a pair's two measurements share its moment.
        let per_pair: Vec<f64> = cell
            .offs
            .iter()
            .zip(&cell.ratios)
            .filter_map(|(o, r)| added_us(metric, *o, *r))
            .collect();
        let a = Sample::new(per_pair).ok().map(|s| s.median());
        added.push(a);
        say!(
            out,
            "{:<width$} {:>5} {:>10.2} {:>7.4}  [{:.4}, {:.4}] {:>10}",
            c.label,
            s.n,
            off,
            s.median,
            s.median_ci.0,
            s.median_ci.1,
            a.map_or("-".into(), |v| format!("{v:+.3}"))
        );
    }
    summary(out, configs, &added);
    // How the whole sets attached, and any program the kernel refused in its way.
    for (c, cell) in configs.iter().zip(cells) {
        for n in &cell.attached {
            if c.event.is_none() || n.contains("refused") {
                say!(out, "  {}: {n}", c.label);
            }
        }
    }
}

/// Per event of the first set: what it adds (µs per operation) alone, empty and matching,
/// as attached here and classic, and in the set (the whole set's matching cost less the
/// set's without it: the event's program and the matching it feeds, e.g. the spans that
/// start only after a span it ends).
fn summary(out: &mut dyn Write, configs: &[Config], added: &[Option<f64>]) {
    let Some(first) = configs.first().map(|c| c.monitor.as_str()) else {
        return;
    };
    let whole = configs
        .iter()
        .zip(added)
        .find(|(c, _)| c.monitor == first && c.event.is_none() && c.column == 2)
        .and_then(|(_, a)| *a);
    let mut events: Vec<&str> = Vec::new();
    for c in configs {
        if let Some(e) = c.event.as_deref().filter(|e| !events.contains(e)) {
            events.push(e);
        }
    }
    if events.is_empty() {
        return;
    }
    let width = events.iter().map(|e| e.len()).max().unwrap_or(0).max(5);
    say!(out, "added µs per operation, per event of {first}:");
    let head: Vec<String> = COLUMNS.iter().map(|h| format!("{h:>17}")).collect();
    say!(out, "{:<width$} {}", "event", head.join(""));
    for e in events {
        let cell = |col: usize| {
            configs
                .iter()
                .zip(added)
                .find(|(c, _)| c.event.as_deref() == Some(e) && c.column == col)
                .and_then(|(_, a)| *a)
                // The last column is the whole set's cost less the set's without it.
                .and_then(|a| {
                    if col == COLUMNS.len() - 1 {
                        whole.map(|w| w - a)
                    } else {
                        Some(a)
                    }
                })
                .map_or(format!("{:>17}", "-"), |v| format!("{v:>+17.3}"))
        };
        let row: Vec<String> = (0..COLUMNS.len()).map(cell).collect();
        say!(out, "{e:<width$} {}", row.join(""));
    }
}

#[cfg(test)]
mod tests;
