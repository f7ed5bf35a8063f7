//! Pairs start and end events of each span into durations.
//!
//! Events arrive in the order `trace_pipe` gives them (merged per-CPU buffers, nearly but
//! not strictly in time order). Per span, the open starts are kept by key:
//! - an end with no open start on its key is counted as unmatched and ignored;
//! - an end stamped before its key's open start (reordered across CPU buffers) is
//!   counted as unmatched, and the start stays open for its real end;
//! - a newer start on a key replaces the open one (the older never ended: it restarts);
//! - a `cancel` event drops its key's open start (e.g. the interrupt handler returned
//!   without raising NET_RX);
//! - lost events (a full buffer) drop every open start, whose end may be what was lost;
//! - at most [`MAX_OPEN`] open starts per span: the oldest goes first (bounded memory);
//! - a span with a `split` remembers, per key, the last value its split events carried
//!   (after the span's own end, cancel and start at that event), and adds each duration
//!   also to the histogram of the value at the end's key ([`SpanResult`]s named
//!   `SPAN@VALUE`, after the span's own, by value); lost events forget the values too.

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;

use super::idle_switches::IdleSwitches;
use super::parse::{Event, Line};
use super::spans::{split_name, Key, Side, Span, MAX_SPLIT};

/// Open starts kept per span before the oldest is dropped.
pub const MAX_OPEN: usize = 16_384;
/// Longest duration a histogram holds; longer ones are clamped to it (60 s).
pub const MAX_NS: u64 = 60_000_000_000;

/// A key value: numbers compare as numbers (`target_cpu=001` is CPU 1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum KeyVal {
    Num(u64),
    Text(String),
}

fn key_of(side: &Side, e: &Event<'_>) -> Option<KeyVal> {
    let text = match &side.key {
        Key::Cpu => return Some(KeyVal::Num(u64::from(e.cpu))),
        Key::Pid => return u64::try_from(e.pid).ok().map(KeyVal::Num),
        Key::Global => return Some(KeyVal::Num(0)),
        Key::Field(f) => e.field(f)?.trim(),
    };
    Some(match text.parse::<u64>() {
        Ok(n) => KeyVal::Num(n),
        Err(_) => KeyVal::Text(text.to_string()),
    })
}

fn matches(side: &Side, e: &Event<'_>) -> bool {
    side.events.iter().any(|(_, name)| *name == e.name)
        && side.filters.iter().all(|f| {
            let v = match f.field.as_str() {
                "cpu" if e.field("cpu").is_none() => return f.accepts(&e.cpu.to_string()),
                "common_pid" => return f.accepts(&e.pid.to_string()),
                other => e.field(other),
            };
            v.is_some_and(|v| f.accepts(v.trim()))
        })
}

/// The durations of one span so far.
#[derive(Clone, Debug)]
pub struct SpanResult {
    pub name: String,
    pub label: String,
    pub hist: Histogram<u64>,
    /// Exact sum of durations (the histogram's mean is quantized).
    pub sum_ns: u128,
    pub max_ns: u64,
    pub unmatched: u64,
    /// Open starts dropped for the memory cap.
    pub evicted: u64,
    /// What only the in-kernel backend counts: starts overwritten on their key before
    /// their end came, and the start and end events that passed the span's filters.
    pub kernel: Option<KernelCounts>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCounts {
    pub lost_starts: u64,
    pub starts: u64,
    pub ends: u64,
}

impl SpanResult {
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn mean_ns(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum_ns as f64 / n as f64,
        }
    }
}

impl SpanResult {
    fn empty(name: String, label: String) -> Self {
        SpanResult {
            name,
            label,
            hist: Histogram::new_with_bounds(1, MAX_NS, 3)
                .expect("constant histogram bounds are valid"),
            sum_ns: 0,
            max_ns: 0,
            unmatched: 0,
            evicted: 0,
            kernel: None,
        }
    }

    fn record(&mut self, d: u64) {
        self.hist.saturating_record(d.min(MAX_NS));
        self.sum_ns += u128::from(d);
        self.max_ns = self.max_ns.max(d);
    }
}

struct State {
    span: Span,
    open: HashMap<KeyVal, u64>,
    result: SpanResult,
    /// A split span's last value per key, and its histograms by value.
    values: HashMap<KeyVal, u64>,
    split: BTreeMap<u64, SpanResult>,
}

/// Feeds events to every span of a set.
pub struct Matcher {
    states: Vec<State>,
    ended: Vec<bool>,
    pub lost: u64,
    pub events: u64,
    /// Switches to and from idle per CPU, to name a CPU whose wake-ups never arrive.
    pub idle_switches: IdleSwitches,
}

impl Matcher {
    pub fn new(spans: Vec<Span>) -> Self {
        let states: Vec<State> = spans
            .into_iter()
            .map(|span| State {
                result: SpanResult::empty(span.name.clone(), span.label.clone()),
                span,
                open: HashMap::new(),
                values: HashMap::new(),
                split: BTreeMap::new(),
            })
            .collect();
        Self {
            ended: vec![false; states.len()],
            states,
            lost: 0,
            events: 0,
            idle_switches: IdleSwitches::default(),
        }
    }

    pub fn feed_line(&mut self, line: Line<'_>) {
        match line {
            Line::Event(e) => self.feed(&e),
            Line::Lost { count, .. } => {
                self.lost += count;
                for s in &mut self.states {
                    s.open.clear();
                    s.values.clear();
                }
            }
            Line::Other => {}
        }
    }

    pub fn feed(&mut self, e: &Event<'_>) {
        self.events += 1;
        self.idle_switches.see(e);
        self.ended.iter_mut().for_each(|x| *x = false);
        for i in 0..self.states.len() {
            let s = &mut self.states[i];
            if matches(&s.span.to, e) {
                if let Some(k) = key_of(&s.span.to, e) {
                    match s.open.get(&k).copied() {
                        Some(t0) if e.ts_ns >= t0 => {
                            s.open.remove(&k);
                            let d = e.ts_ns - t0;
                            s.result.record(d);
                            if let Some(&v) = s.values.get(&k) {
                                let (name, label) = (&s.result.name, &s.result.label);
                                s.split
                                    .entry(v)
                                    .or_insert_with(|| {
                                        SpanResult::empty(split_name(name, v), label.clone())
                                    })
                                    .record(d);
                            }
                            self.ended[i] = true;
                        }
                        _ => s.result.unmatched += 1,
                    }
                }
            }
            if let Some(c) = &s.span.cancel {
                if matches(c, e) {
                    if let Some(k) = key_of(c, e) {
                        s.open.remove(&k);
                    }
                }
            }
            let chained = s.span.after.is_none_or(|j| self.ended[j]);
            if chained && matches(&s.span.from, e) {
                if let Some(k) = key_of(&s.span.from, e) {
                    if s.open.len() >= MAX_OPEN && !s.open.contains_key(&k) {
                        let oldest = s
                            .open
                            .iter()
                            .min_by_key(|(_, t)| **t)
                            .map(|(k, _)| k.clone());
                        if let Some(o) = oldest {
                            s.open.remove(&o);
                            s.result.evicted += 1;
                        }
                    }
                    s.open.insert(k, e.ts_ns);
                }
            }
            if let Some(sp) = &s.span.split {
                if matches(&sp.side, e) {
                    let v = e
                        .field(&sp.field)
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    if let (Some(k), Some(v)) = (key_of(&sp.side, e), v) {
                        // Beyond the values the kernel backend keeps: untagged in both.
                        if v < MAX_SPLIT {
                            s.values.insert(k, v);
                        } else {
                            s.values.remove(&k);
                        }
                    }
                }
            }
        }
    }

    /// Open starts of span `i` now (for tests of the memory cap).
    pub fn open_starts(&self, i: usize) -> usize {
        self.states.get(i).map_or(0, |s| s.open.len())
    }

    /// Each span's result, a split span's by value right after it.
    pub fn results(self) -> Vec<SpanResult> {
        self.states
            .into_iter()
            .flat_map(|s| std::iter::once(s.result).chain(s.split.into_values()))
            .collect()
    }
}
