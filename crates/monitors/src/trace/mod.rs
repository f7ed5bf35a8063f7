//! `trace`: where a measurement's time goes, as spans between kernel trace events.
//!
//! A span is "from event X to event Y, matched by key K" ([`spans`]), declared in TOML; the
//! monitor enables only the events its set needs in its own ftrace instance
//! ([`tracefs`]), reads `trace_pipe` on a thread while the workload runs ([`reader`]),
//! pairs the events ([`matcher`]) and leaves per-span statistics as telemetry rows
//! ([`rows`]). Tracing writes every event, so the monitor disturbs what it observes: it
//! runs in telemetry repetitions only.
//!
//! Two backends measure the same declarations: [`bpf`] matches and aggregates in the
//! kernel (nanoseconds, nothing streamed, nothing lost), the tracefs text one above is the
//! fallback where BPF cannot be used; a note of each measurement says which measured.
//! `PERFLAB_TRACE_BACKEND=text` or `=bpf` insists on one; within the BPF backend each event's
//! program is a raw tracepoint (typed by BTF where it reads struct members), an fexit or
//! a classic tracepoint ([`bpf::raw`]); `PERFLAB_TRACE_ATTACH=classic` keeps them all
//! classic, `=raw` keeps raw ones untyped.
//!
//! Names: `trace` picks the set of the workload (netrr → `netrx`, ctxsw → `wakeup`, or
//! `idlewake` under a variant that sets the idle states as idle-ipi's do, xfer/dmatest/parallel → `lock`), `trace:SET` a built-in set, `trace:FILE.toml`
//! a user's file.

pub mod bpf;
pub mod doctor;
pub mod idle_switches;
pub mod matcher;
pub mod parse;
pub mod reader;
pub mod rows;
pub mod spans;
pub mod split;
pub mod tracefs;

use perflab_core::note::Note;
use perflab_core::{
    Descriptor, KeyMatch, Kind, Need, Needs, NoCpu, ReportHints, RowHints, Wording,
};
use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unavailable};
use perflab_sys::SysRoot;

use matcher::Matcher;
use perflab_knobs::{Journal, JOURNAL_FACT};
use reader::Reader;
use spans::{Span, SpanSet};
use tracefs::{Instance, Tracefs};

const NAME: &str = "trace";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "latency spans between kernel trace events (trace: the workload's set, \
           trace:SET a built-in set, trace:FILE.toml your own); disturbs the workload, so it \
           runs in telemetry repetitions only",
    params: &[],
    needs: Needs::all(&[Need::Privileges, Need::Tracefs]),
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::RSplit(':'), "span {head} {tail}"),
            Wording::new(KeyMatch::Any, "span {key}"),
        ],
        // A span follows a packet or a wake-up across CPUs.
        no_cpu: NoCpu::Unattached,
        cpu_free: true,
        // A span's p50, p90 or p99 is what a span change is: its count follows the number
        // of round trips, its mean repeats the p50, its max is one event, and unmatched
        // starts are the matcher's bookkeeping.
        changes: Some(&[
            KeyMatch::Suffix(":p50"),
            KeyMatch::Suffix(":p90"),
            KeyMatch::Suffix(":p99"),
        ]),
        spans: true,
        ..RowHints::PLAIN
    }),
};

/// Which span set a `trace` monitor uses.
#[derive(Clone, Debug)]
pub enum Choice {
    /// The workload's built-in set, known at `start`.
    Auto,
    BuiltIn(SpanSet),
    /// A user's file: every event must exist (checked when the run is created).
    User(SpanSet),
}

/// The choice a monitor name makes: `None` when `name` is not a trace monitor, an error
/// line for an unknown set or a bad file.
pub fn parse_name(name: &str) -> Option<Result<Choice, String>> {
    if name == NAME {
        return Some(Ok(Choice::Auto));
    }
    let arg = name.strip_prefix("trace:")?;
    Some(if arg.ends_with(".toml") {
        std::fs::read_to_string(arg)
            .map_err(|e| format!("span file {arg}: {e}"))
            .and_then(|text| spans::parse_set(&text, &format!("span file {arg}")))
            .map(Choice::User)
    } else {
        spans::built_in(arg).map(Choice::BuiltIn).ok_or_else(|| {
            let known: Vec<&str> = spans::BUILT_IN.iter().map(|(n, _)| *n).collect();
            format!(
                "monitor {name}: no built-in span set {arg:?} (known: {}; or a path ending in .toml)",
                known.join(", ")
            )
        })
    })
}

/// Checks a trace monitor name before a run is created: the set exists or the file
/// parses, and a user file names only events this kernel has (where tracefs can be
/// reached; elsewhere the monitor is reported unavailable at run time).
pub fn check_name(name: &str, sys: &SysRoot) -> Result<(), String> {
    let Some(choice) = parse_name(name) else {
        return Ok(());
    };
    let Choice::User(set) = choice? else {
        return Ok(());
    };
    let Ok(fs) = Tracefs::open(sys) else {
        return Ok(());
    };
    let has = |s: &str, e: &str| fs.has_event(s, e);
    let spans: Vec<Span> = set
        .spans
        .into_iter()
        .map(|s| s.with_fallbacks(&has))
        .collect();
    for span in &spans {
        for (system, event) in span.events() {
            if !fs.has_event(&system, &event) {
                return Err(format!(
                    "monitor {name}: span {:?} names event {system}:{event}, which this \
                     kernel does not have (see {}/events)",
                    span.name,
                    locate_hint(sys)
                ));
            }
        }
    }
    // A key or filter field the event does not carry never matches, in either backend.
    match bpf::plan_spans(&fs.fs, sys, &spans) {
        Err(bpf::plan::PlanError::Bad(e)) => Err(format!("monitor {name}: {e}")),
        _ => Ok(()),
    }
}

/// The events a `trace` monitor name (`trace`, `trace:SET`, `trace:FILE.toml`) traces for
/// `workload` on this kernel outside any variant, each `system:event` with how its program
/// attaches here (`crosscheck trace-cost` measures what each one costs).
pub fn events_here(
    name: &str,
    workload: &str,
    sys: &SysRoot,
) -> Result<Vec<(String, &'static str)>, String> {
    let choice = parse_name(name).ok_or_else(|| format!("{name} is not a trace monitor"))??;
    let set = match choice {
        Choice::Auto => spans::set_for(workload, &Default::default())
            .and_then(spans::built_in)
            .ok_or_else(|| format!("workload {workload:?} has no built-in span set"))?,
        Choice::BuiltIn(s) | Choice::User(s) => s,
    };
    let fs = Tracefs::open(sys)?;
    let all: Vec<String> = set.spans.iter().map(|s| s.name.clone()).collect();
    let has = |s: &str, e: &str| fs.has_event(s, e);
    let here = set
        .spans
        .into_iter()
        .map(|s| s.with_fallbacks(&has))
        .filter(|s| s.when.is_none() && s.events().iter().all(|(a, b)| has(a, b)))
        .collect();
    let (plans, attach) = bpf::attach_here(&fs.fs, sys, &renumber_after(here, &all))?;
    Ok(plans
        .iter()
        .zip(&attach)
        .map(|(p, a)| (format!("{}:{}", p.system, p.event), a.method()))
        .collect())
}

/// Which backend measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    /// BPF where it can be used, else the text backend (the default).
    Best,
    Bpf,
    Text,
}

/// The variable that insists on a backend (`bpf` or `text`).
pub const BACKEND_VAR: &str = "PERFLAB_TRACE_BACKEND";

fn backend() -> Backend {
    match std::env::var(BACKEND_VAR).as_deref() {
        Ok("text") => Backend::Text,
        Ok("bpf") => Backend::Bpf,
        _ => Backend::Best,
    }
}

/// The note that says which backend measured (the report lists the monitor's notes).
pub const NOTE_BPF: &str = "trace: measured in the kernel (BPF backend): durations in ns, \
                            in buckets 1/128 wide (0.8 %); nothing streamed, so no events lost";
pub const NOTE_TEXT: &str = "trace: measured from tracefs text (trace_pipe backend): \
                             durations in whole µs";

fn locate_hint(sys: &SysRoot) -> String {
    tracefs::locate(sys)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "tracefs".into())
}

/// Per-CPU ring buffer of an instance: enough for netrr's event rate between reads,
/// bounded on machines with many CPUs (the kernel allocates it on every CPU).
fn buffer_kb(cpus: usize) -> u64 {
    (256 * 1024 / cpus.max(1) as u64).clamp(1024, 8192)
}

struct Running {
    set: String,
    /// What was measured: a split span's values are named after them.
    spans: Vec<Span>,
    how: Measuring,
}

enum Measuring {
    /// The reader owns the instance: it turns tracing off, closes the pipe and removes
    /// the instance, in that order, however it ends.
    Text(Reader),
    Kernel(bpf::Loaded),
}

pub struct TraceMonitor {
    choice: Choice,
    /// What is being measured: ended (by `Drop` below) before `fs` goes, as an instance
    /// torn down after its private tracefs mount stays in the kernel, tracing.
    running: Option<Running>,
    fs: Option<Tracefs>,
    notes: Vec<String>,
    /// The last programs planned, by the spans they were planned for: planning reads every
    /// event's format (and /proc/kallsyms for a callback filter, the kernel's BTF for the
    /// attach methods), once per span list.
    plans: Option<Planned>,
}

impl std::fmt::Debug for TraceMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceMonitor")
            .field("choice", &self.choice)
            .field("running", &self.running.is_some())
            .finish()
    }
}

impl Drop for TraceMonitor {
    fn drop(&mut self) {
        self.running = None;
    }
}

impl TraceMonitor {
    pub fn new(choice: Choice) -> Self {
        Self {
            choice,
            running: None,
            fs: None,
            notes: Vec::new(),
            plans: None,
        }
    }

    pub fn from_name(name: &str) -> Option<Result<Self, String>> {
        parse_name(name).map(|c| c.map(Self::new))
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// The set for this measurement, with the spans this kernel and variant can have.
    fn spans_for(
        &mut self,
        ctx: &MeasureCtx,
        fs: &Tracefs,
    ) -> Result<(String, Vec<Span>), MonitorError> {
        let (set, user) = match &self.choice {
            Choice::Auto => {
                let Some(name) = spans::set_for(ctx.workload, &ctx.facts) else {
                    return Err(MonitorError::Unavailable(
                        Unavailable::new(format!(
                            "workload {:?} has no built-in span set",
                            ctx.workload
                        ))
                        .with_hint("name one: --monitors trace:netrx, trace:wakeup, trace:idlewake, trace:lock or trace:FILE.toml"),
                    ));
                };
                (
                    spans::built_in(name).expect("a built-in set for each workload"),
                    false,
                )
            }
            Choice::BuiltIn(s) => (s.clone(), false),
            Choice::User(s) => (s.clone(), true),
        };
        let on_cpus = set.workload_cpus;
        let mut keep = Vec::new();
        for span in set.spans {
            if span.when.as_ref().is_some_and(|w| !w.holds(&ctx.facts)) {
                continue;
            }
            let span = span.with_fallbacks(&|s, e| fs.has_event(s, e));
            let missing: Vec<String> = span
                .events()
                .into_iter()
                .filter(|(s, e)| !fs.has_event(s, e))
                .map(|(s, e)| format!("{s}:{e}"))
                .collect();
            if !missing.is_empty() {
                if user {
                    return Err(MonitorError::Unavailable(Unavailable::new(format!(
                        "span {} of set {} needs {}, which this kernel does not have",
                        span.name,
                        set.name,
                        missing.join(", ")
                    ))));
                }
                let key = format!("{}.{}", set.name, span.name);
                self.note(Note::span_skipped("trace", missing, &key).text());
                continue;
            }
            keep.push(span);
        }
        // A span chained after a skipped one is renumbered or dropped with it.
        let keep = renumber_after(keep, &set_names(&self.choice, ctx));
        let keep = if on_cpus {
            spans::on_cpus(keep, &ctx.cpus)
        } else {
            keep
        };
        if keep.is_empty() {
            return Err(MonitorError::Unavailable(Unavailable::new(format!(
                "no span of set {} can be traced here",
                set.name
            ))));
        }
        Ok((set.name, keep))
    }
}

/// A span list's programs and how each is attached.
struct Planned {
    spans: Vec<Span>,
    plans: Vec<bpf::plan::EventPlan>,
    attach: Vec<bpf::raw::Attach>,
}

/// Loads and enables the set's programs (any refusal is the reason to fall back), with the
/// line that says how they are attached.
fn start_bpf(
    ctx: &MeasureCtx,
    tracefs: &SysRoot,
    spans: &[Span],
    cache: &mut Option<Planned>,
) -> Result<(bpf::Loaded, String), String> {
    bpf::probe()?;
    let planned = match cache {
        Some(p) if p.spans == spans => p,
        _ => {
            let plans = bpf::plan_spans(tracefs, &ctx.sys, spans).map_err(|e| e.to_string())?;
            let attach = bpf::attachments(tracefs, &ctx.sys, &plans);
            cache.insert(Planned {
                spans: spans.to_vec(),
                plans,
                attach,
            })
        }
    };
    let cpus = ctx
        .sys
        .read_string("sys/devices/system/cpu/possible")
        .ok()
        .and_then(|t| bpf::sys::possible_cpus(&t))
        .ok_or("cannot read /sys/devices/system/cpu/possible")?;
    let (plans, attach) = bpf::selected_events(&planned.plans, &planned.attach);
    let loaded = bpf::Loaded::load(&plans, &attach, spans, cpus)?;
    loaded.set_enabled(true)?;
    let how = format!(
        "trace: BPF programs attached as {}",
        bpf::describe(&plans, &loaded.used)
    );
    Ok((loaded, how))
}

/// The names of the set's spans in declaration order (for `after` indices).
fn set_names(choice: &Choice, ctx: &MeasureCtx) -> Vec<String> {
    let set = match choice {
        Choice::Auto => spans::set_for(ctx.workload, &ctx.facts).and_then(spans::built_in),
        Choice::BuiltIn(s) | Choice::User(s) => Some(s.clone()),
    };
    set.map(|s| s.spans.into_iter().map(|s| s.name).collect())
        .unwrap_or_default()
}

/// After spans were left out, `after` indices point into the full set: map them to the
/// kept spans, dropping a span whose predecessor is gone (it could never start).
fn renumber_after(kept: Vec<Span>, all: &[String]) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for mut s in kept {
        if let Some(j) = s.after {
            let Some(name) = all.get(j) else { continue };
            match out.iter().position(|o| &o.name == name) {
                Some(k) => s.after = Some(k),
                None => continue,
            }
        }
        out.push(s);
    }
    out
}

impl TraceMonitor {
    /// tracefs (opened once, kept for the monitor's life) and the set's spans here.
    fn chosen(&mut self, ctx: &MeasureCtx) -> Result<(Tracefs, String, Vec<Span>), MonitorError> {
        if self.fs.is_none() {
            let fs = Tracefs::open(&ctx.sys).map_err(|reason| {
                MonitorError::Unavailable(Unavailable::new(reason).with_hint(tracefs::HOW))
            })?;
            self.fs = Some(fs);
        }
        let fs = self.fs.clone().expect("set above");
        let (set, spans) = self.spans_for(ctx, &fs)?;
        Ok((fs, set, spans))
    }
}

/// The run's journal, where an instance is recorded before it is made; `None` outside a
/// run (a monitor driven by hand has no journal, and its instances are found by pid).
fn journal_of(ctx: &MeasureCtx) -> Result<Option<Journal>, MonitorError> {
    let Some(path) = ctx.facts.get(JOURNAL_FACT) else {
        return Ok(None);
    };
    Journal::open(path)
        .map(Some)
        .map_err(|e| MonitorError::Failed(format!("cannot open the journal {path}: {e}")))
}

impl Monitor for TraceMonitor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn disturbs(&self) -> bool {
        true
    }

    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError> {
        self.running = None;
        let (fs, set, spans) = self.chosen(ctx)?;
        let tracefs_root = fs.fs.clone();
        let want = backend();
        if want != Backend::Text {
            match start_bpf(ctx, &tracefs_root, &spans, &mut self.plans) {
                Ok((loaded, how)) => {
                    self.note(NOTE_BPF.into());
                    self.note(how);
                    self.note(loaded.histograms());
                    self.running = Some(Running {
                        set,
                        spans,
                        how: Measuring::Kernel(loaded),
                    });
                    return Ok(());
                }
                Err(e) if want == Backend::Bpf => {
                    return Err(MonitorError::Unavailable(
                        Unavailable::new(format!("the BPF backend cannot measure here: {e}"))
                            .with_hint(format!("unset {BACKEND_VAR} to fall back to tracefs text")),
                    ))
                }
                Err(e) => self.note(format!(
                    "trace: the BPF backend cannot measure here ({e}); tracefs text measures"
                )),
            }
        }
        self.note(NOTE_TEXT.into());
        let mut events: Vec<(String, String)> = Vec::new();
        for s in &spans {
            for e in s.events() {
                if !events.contains(&e) {
                    events.push(e);
                }
            }
        }
        let cpus = perflab_sys::Topology::read(&ctx.sys)
            .map(|t| t.online.len())
            .unwrap_or(1);
        let unavailable =
            |e: String| MonitorError::Unavailable(Unavailable::new(e).with_hint(tracefs::HOW));
        let journal = journal_of(ctx)?;
        let instance = Instance::create(
            &fs,
            &events,
            buffer_kb(cpus),
            journal.as_ref().map(|j| (j, &ctx.sys)),
        )
        .map_err(unavailable)?;
        let reader =
            Reader::spawn(instance, Matcher::new(spans.clone())).map_err(MonitorError::Failed)?;
        self.running = Some(Running {
            set,
            spans,
            how: Measuring::Text(reader),
        });
        Ok(())
    }

    /// Whether tracing can work here, without making an instance or loading a program:
    /// tracefs can be reached and the set has a span this kernel and workload can have.
    fn available(&mut self, ctx: &MeasureCtx) -> Result<(), Unavailable> {
        match self.chosen(ctx) {
            Ok(_) => Ok(()),
            Err(MonitorError::Unavailable(u)) => Err(u),
            Err(MonitorError::Failed(_)) => Ok(()),
        }
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let run = self
            .running
            .take()
            .ok_or_else(|| crate::counter::not_started(NAME))?;
        let mut results = match run.how {
            Measuring::Text(reader) => {
                let reader::Drained { matcher, cut_short } =
                    reader.finish().map_err(MonitorError::Failed)?;
                if cut_short {
                    self.note(format!(
                        "trace: {} s after tracing stopped the buffer was still not read to \
                         its end (more events than the span matcher keeps up with); the rest \
                         were not counted",
                        reader::DRAIN_LIMIT.as_secs()
                    ));
                }
                if matcher.lost > 0 {
                    self.note(format!(
                        "trace: the kernel dropped {} events (buffer full); spans open across \
                         them were not counted",
                        matcher.lost
                    ));
                }
                for n in matcher.idle_switches.notes() {
                    self.note(n);
                }
                matcher.results()
            }
            Measuring::Kernel(loaded) => {
                let results = loaded.finish().map_err(MonitorError::Failed)?;
                let full: u64 = results.iter().map(|r| r.evicted).sum();
                if full > 0 {
                    self.note(format!(
                        "trace: {full} starts could not be stored in the BPF start map (full, \
                         or its bucket busy) and were not counted"
                    ));
                }
                results
            }
        };
        let splits = split::name_values(&run.spans, &mut results, &split::cpuidle_names(&ctx.sys));
        Ok(rows::rows(&run.set, &run.spans, &results, &splits))
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests;
