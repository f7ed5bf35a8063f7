//! `perflab crosscheck trace`: do the two backends of the `trace` monitor tell the same
//! story? Loopback netrr at a low, fixed request rate (where the tracefs text backend
//! loses nothing) runs with the `netrx` spans measured by the text backend and by the BPF
//! backend, alternating, and per span the medians are printed side by side. Held to
//! issue 23's targets: each span that both backends matched about as often (counts within
//! 10 %; where they are further apart, the text backend lost events or never saw them,
//! and the row says so instead of comparing two populations) has its BPF median within
//! 1 µs or 5 % of the text one (text
//! has whole-µs resolution, hence the 1 µs), BPF values that are not whole microseconds
//! (the kernel's nanoseconds reach the report), and the sum of the spans' medians below
//! the round trip netrr measured alongside them (they are parts of one direction of it).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use perflab_core::TelemetryRow;
use perflab_lab::{measure_once, MonitorSet, Progress, RunOptions};
use perflab_store::{MeasurementRecord, PlannedMeasurement, Role};

use crate::error::{input, Error, Result};
use crate::options::Options;
use crate::say;
use crate::tolerance::Verdicts;

/// Matched counts further apart than this share of the larger: the backends saw different
/// events (the text backend lost some, or its ring buffer never recorded them), so their
/// medians describe different populations and are not compared.
pub const COMPARABLE_PCT: f64 = 10.0;

/// Requests per second: low enough that trace_pipe keeps up on a small machine.
pub const RATE: u32 = 1000;
/// A span's medians agree within this many ns, or within [`AGREE_PCT`] of the text one.
pub const AGREE_NS: f64 = 1000.0;
pub const AGREE_PCT: f64 = 5.0;
const BACKEND_VAR: &str = perflab_monitors::trace::BACKEND_VAR;

/// netrx's host spans restricted to netrr's threads (see the file for why).
pub const SPANS: &str = include_str!("trace/netrr_only.toml");

/// One span of one measurement, from its telemetry rows (ns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpanStat {
    pub label: String,
    pub count: f64,
    pub p50: Option<f64>,
    /// p50, p90, p99 and max: the values whose resolution is looked at.
    pub values: Vec<f64>,
}

/// The spans of a measurement's `trace` rows, by `set.span` in the set's order.
pub fn spans(rows: &[TelemetryRow]) -> Vec<(String, SpanStat)> {
    let mut out: Vec<(String, SpanStat)> = Vec::new();
    for r in rows.iter().filter(|r| r.source == "trace") {
        let Some((span, stat)) = r.key.rsplit_once(':') else {
            continue;
        };
        let i = match out.iter().position(|(n, _)| n == span) {
            Some(i) => i,
            None => {
                out.push((span.to_string(), SpanStat::default()));
                out.len() - 1
            }
        };
        let s = &mut out[i].1;
        s.label = r.label.clone();
        match stat {
            "count" => s.count = r.value,
            "p50" => {
                s.p50 = Some(r.value);
                s.values.push(r.value);
            }
            "p90" | "p99" | "max" => s.values.push(r.value),
            _ => {}
        }
    }
    out
}

/// Whether both backends matched a span about as often (within [`COMPARABLE_PCT`]).
pub fn comparable(text_count: f64, bpf_count: f64) -> bool {
    let most = text_count.max(bpf_count);
    most > 0.0 && (text_count - bpf_count).abs() <= most * COMPARABLE_PCT / 100.0
}

/// Why the text backend matched fewer (or more) of a span than BPF, from its notes.
pub fn why_apart(text_notes: &[String]) -> String {
    // The text backend's note: "… switches to idle on CPU 1 and none away from it …".
    let mut idle: Vec<&str> = text_notes
        .iter()
        .filter(|n| n.contains("switches to idle on CPU "))
        .filter_map(|n| n.split_once(" on CPU ")?.1.split_once(' ').map(|(c, _)| c))
        .collect();
    // One note per measurement: the same CPU in each round.
    idle.sort_unstable();
    idle.dedup();
    if let Some(n) = text_notes.iter().find(|n| n.contains("dropped")) {
        return n.trim_start_matches("trace: ").to_string();
    }
    if !idle.is_empty() {
        return format!(
            "tracefs recorded no switch away from idle on CPU {}: wake-ups there are missing \
             from the text backend",
            idle.join(", ")
        );
    }
    "the backends matched different events".into()
}

/// The allowance of a span's difference: 1 µs or 5 % of the text median, the larger.
pub fn allowed_ns(text_ns: f64) -> f64 {
    AGREE_NS.max(text_ns.abs() * AGREE_PCT / 100.0)
}

/// Values that are not a whole number of microseconds. The stored quantiles are an HDR
/// histogram's (3 significant digits), so a whole µs can come back a little off (the
/// text backend's 28 µs as 28.015): a value counts as sub-µs when it is further from
/// the nearest whole µs than that precision, 0.1 % of it and 1 ns.
pub fn sub_us(values: &[f64]) -> usize {
    values
        .iter()
        .filter(|v| {
            let off = (*v - (*v / 1000.0).round() * 1000.0).abs();
            off > v.abs() / 1000.0 + 1.0
        })
        .count()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// What one backend measured over its rounds.
#[derive(Default)]
struct Side {
    /// Per span, the p50 of each round that matched any.
    p50s: BTreeMap<String, Vec<f64>>,
    counts: BTreeMap<String, Vec<f64>>,
    order: Vec<(String, String)>,
    values: Vec<f64>,
    rtt_p50_us: Vec<f64>,
    notes: Vec<String>,
}

impl Side {
    fn add(&mut self, rec: &MeasurementRecord) -> Result<()> {
        if let Some(why) = rec.status.message() {
            return Err(Error::Failed(format!("netrr failed: {why}")));
        }
        let rtt = rec
            .output
            .metric("rtt_p50_us")
            .map(|m| m.value)
            .ok_or_else(|| Error::Failed("netrr reported no rtt_p50_us".into()))?;
        self.rtt_p50_us.push(rtt);
        for (name, s) in spans(&rec.telemetry) {
            if !self.order.iter().any(|(n, _)| *n == name) {
                self.order.push((name.clone(), s.label.clone()));
            }
            self.counts.entry(name.clone()).or_default().push(s.count);
            if let Some(p) = s.p50 {
                self.p50s.entry(name).or_default().push(p);
            }
            self.values.extend(s.values);
        }
        Ok(())
    }

    fn p50(&self, span: &str) -> Option<f64> {
        median(self.p50s.get(span).cloned().unwrap_or_default())
    }

    fn count(&self, span: &str) -> f64 {
        median(self.counts.get(span).cloned().unwrap_or_default()).unwrap_or(0.0)
    }
}

/// Collects the runner's notes (which backend measured, how it attached, events lost).
struct Notes<'a>(&'a mut Vec<String>);

impl Progress for Notes<'_> {
    fn begin(&mut self, _: perflab_store::RunId, _: u64, _: u64) {}
    fn measured(&mut self, _: &MeasurementRecord) {}
    fn note(&mut self, message: &str) {
        if !self.0.iter().any(|n| n == message) {
            self.0.push(message.to_string());
        }
    }
    fn end(&mut self) {}
}

/// Runs the check (root, tracefs and bpf() needed; the text side alone where BPF is not
/// here makes the check fail, saying why).
pub fn run(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let duration = a.measure.as_deref().unwrap_or(a.duration.as_str());
    perflab_core::parse_duration(duration)
        .map_err(|e| input(format!("--duration {duration:?}: {e}")))?;
    if a.tolerance.is_some() {
        return Err(input(
            "--tolerance does not apply to trace: its targets are 1 µs or 5 % per span",
        ));
    }
    let (client, server) = match a.pairs.as_slice() {
        [] => {
            // Two CPUs where there are: the request crosses to another CPU's softirq and
            // wakes a task there, the path the spans follow.
            let online = perflab_sys::Topology::read(&a.sys)?.online;
            let first = online.first().copied().unwrap_or(0);
            (first, online.get(1).copied().unwrap_or(first))
        }
        [p] => *p,
        _ => return Err(input("--pairs: trace takes one client,server pair")),
    };
    let w = perflab_workloads::by_name("netrr").ok_or_else(|| input("no workload netrr"))?;
    let given: BTreeMap<String, String> = [
        ("rate", RATE.to_string()),
        ("client_cpu", client.to_string()),
        ("server_cpu", server.to_string()),
        ("duration", duration.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let params = perflab_core::resolve(w.info().name, w.info().params, &given)
        .map_err(|e| input(e.to_string()))?;
    let opts = RunOptions {
        sys: a.sys.clone(),
        journal: std::env::temp_dir().join(format!("perflab-trace-{}.json", std::process::id())),
        stop: Arc::new(AtomicBool::new(false)),
        label: None,
    };
    let _signals = perflab_knobs::signals::install(opts.stop.clone())?;
    let rounds = a.rounds.max(1);
    say!(
        out,
        "trace backends on loopback netrr (UDP 64 B, {RATE} requests/s open loop, client CPU \
         {client}, server CPU {server}), spans of set netrx restricted to netrr's threads: \
         {rounds} rounds of {duration} per backend, text and bpf alternating; medians over \
         rounds, in µs"
    );
    // The monitor takes a span file by path: this check's spans, written for the run.
    let file = std::env::temp_dir().join(format!("perflab-trace-{}.toml", std::process::id()));
    std::fs::write(&file, SPANS)
        .map_err(|e| Error::Failed(format!("cannot write {}: {e}", file.display())))?;
    let monitor = format!("trace:{}", file.display());
    let before = std::env::var(BACKEND_VAR).ok();
    let measured = measure_both(w, &params, rounds, &opts, &monitor);
    let _ = std::fs::remove_file(&file);
    // Restored, so nothing after this check is forced onto a backend.
    match before {
        Some(v) => std::env::set_var(BACKEND_VAR, v),
        None => std::env::remove_var(BACKEND_VAR),
    }
    let (text, bpf) = measured?;
    print(out, &text, &bpf, verdicts);
    Ok(())
}

fn measure_both(
    w: &'static dyn perflab_core::Workload,
    params: &perflab_core::Params,
    rounds: u32,
    opts: &RunOptions,
    monitor: &str,
) -> Result<(Side, Side)> {
    let (mut text, mut bpf) = (Side::default(), Side::default());
    for i in 0..2 * rounds {
        // text, bpf, bpf, text, … so drift falls on both alike.
        let use_bpf = (i % 2 == 1) ^ ((i / 2) % 2 == 1);
        let (name, side) = if use_bpf {
            ("bpf", &mut bpf)
        } else {
            ("text", &mut text)
        };
        std::env::set_var(BACKEND_VAR, name);
        let pm = PlannedMeasurement {
            seq: i,
            point: 0,
            params: params.clone(),
            variant: String::new(),
            rep: i,
            role: Role::Telemetry,
        };
        // A fresh monitor per measurement: the backend is chosen when it starts.
        let mut set = MonitorSet::new(&[monitor.to_string()]);
        let rec = measure_once(&pm, w, &mut set, opts, &mut Notes(&mut side.notes))
            .ok_or_else(|| Error::Failed("stopped by a signal".into()))?;
        if !rec.monitors.iter().any(|m| m.starts_with("trace")) {
            return Err(Error::Failed(format!(
                "the trace monitor did not run ({})",
                side.notes.join("; ")
            )));
        }
        side.add(&rec)?;
    }
    for (name, side) in [("text", &text), ("bpf", &bpf)] {
        let want = if name == "bpf" {
            "BPF backend"
        } else {
            "trace_pipe backend"
        };
        if !side.notes.iter().any(|n| n.contains(want)) {
            return Err(Error::Failed(format!(
                "the {name} backend did not measure: {}",
                side.notes.join("; ")
            )));
        }
    }
    Ok((text, bpf))
}

fn us(ns: Option<f64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.3}", v / 1000.0))
}

fn print(out: &mut dyn Write, text: &Side, bpf: &Side, verdicts: &mut Verdicts) {
    let sum = print_spans(out, text, bpf, verdicts);
    print_resolution(out, text, bpf, verdicts);
    print_sum(out, text, bpf, sum, verdicts);
    for (name, side) in [("text", text), ("bpf", bpf)] {
        for n in &side.notes {
            say!(out, "{name}: {n}");
        }
    }
}

/// One row per span seen by either backend, judged; returns the sum of the BPF medians.
fn print_spans(out: &mut dyn Write, text: &Side, bpf: &Side, verdicts: &mut Verdicts) -> f64 {
    say!(
        out,
        "{:<16} {:>9} {:>9} {:>10} {:>10} {:>9} {:>8}  verdict",
        "span",
        "count",
        "text p50",
        "bpf p50",
        "bpf-text",
        "allowed",
        "bpf cnt"
    );
    let mut sum = 0.0;
    let mut order = text.order.clone();
    for o in &bpf.order {
        if !order.iter().any(|(n, _)| *n == o.0) {
            order.push(o.clone());
        }
    }
    let (mut compared, mut measured) = (0, 0);
    for (name, label) in &order {
        let (t, b) = (text.p50(name), bpf.p50(name));
        sum += b.unwrap_or(0.0);
        let counts = (text.count(name), bpf.count(name));
        measured += usize::from(t.is_some() || b.is_some());
        let verdict = if t.is_some() && b.is_some() && !comparable(counts.0, counts.1) {
            format!(
                "not compared: text matched {:.0} of bpf's {:.0} ({})",
                counts.0,
                counts.1,
                why_apart(&text.notes)
            )
        } else {
            compared += usize::from(t.is_some() && b.is_some());
            span_verdict(name, t, b, verdicts)
        };
        say!(
            out,
            "{:<16} {:>9.0} {:>9} {:>10} {:>10} {:>9} {:>8.0}  {verdict}  ({label})",
            name,
            text.count(name),
            us(t),
            us(b),
            match (t, b) {
                (Some(t), Some(b)) => format!("{:+.3}", (b - t) / 1000.0),
                _ => "-".into(),
            },
            t.map_or("-".into(), |t| format!("{:.3}", allowed_ns(t) / 1000.0)),
            bpf.count(name),
        );
    }
    // A check that compared no span proved nothing.
    verdicts.below(
        format!("spans left uncompared (of {measured} with a median; all: nothing compared)"),
        (measured - compared) as f64,
        measured as f64,
        "spans",
    );
    sum
}

/// Whether the two backends' medians of one span agree (judged where both have one).
fn span_verdict(name: &str, t: Option<f64>, b: Option<f64>, verdicts: &mut Verdicts) -> String {
    match (t, b) {
        (Some(t), Some(b)) => {
            let (diff, allowed) = ((b - t).abs(), allowed_ns(t));
            let within = verdicts.below(
                format!("span {name} |bpf - text|"),
                diff / 1000.0,
                allowed / 1000.0 + 1e-9,
                "µs",
            );
            if within { "agree" } else { "DISAGREE" }.to_string()
        }
        (None, Some(_)) => "text matched none".into(),
        (Some(_), None) => "bpf matched none".into(),
        (None, None) => "empty in both".into(),
    }
}

/// How many of the BPF backend's span values are not whole microseconds (judged).
fn print_resolution(out: &mut dyn Write, text: &Side, bpf: &Side, verdicts: &mut Verdicts) {
    let (bs, ts) = (sub_us(&bpf.values), sub_us(&text.values));
    say!(
        out,
        "resolution: {bs} of {} bpf span values (p50/p90/p99/max) are not whole µs; text: {ts} \
         of {}",
        bpf.values.len(),
        text.values.len()
    );
    verdicts.below(
        "bpf span values that are whole µs (share)",
        if bpf.values.is_empty() {
            1.0
        } else {
            1.0 - bs as f64 / bpf.values.len() as f64
        },
        1.0,
        "",
    );
}

/// The spans' sum against the round trip measured with them (judged: it must be below).
fn print_sum(out: &mut dyn Write, text: &Side, bpf: &Side, sum: f64, verdicts: &mut Verdicts) {
    let rtt = median(bpf.rtt_p50_us.clone()).unwrap_or(f64::NAN);
    let rtt_text = median(text.rtt_p50_us.clone()).unwrap_or(f64::NAN);
    say!(
        out,
        "span sum (bpf medians) {:.3} µs against netrr's round trip p50 {rtt:.3} µs in the \
         same measurements (with the text backend: {rtt_text:.3} µs)",
        sum / 1000.0
    );
    verdicts.below(
        "bpf span sum against the round trip",
        sum / 1000.0,
        rtt,
        "µs",
    );
}

#[cfg(test)]
mod tests;
