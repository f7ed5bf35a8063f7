//! Span declarations → what each tracepoint's program does: per event, in the set's
//! order, the span sides it takes part in (end, cancel, start — the order the text
//! matcher applies them), each with its key and filters resolved to loads at the
//! record's offsets ([`super::format`]).
//!
//! A span with a `split` gets one more action on its split events, [`Role::Split`]: the
//! value to remember at the split's key; its end then also adds the duration to the
//! histogram of that value, an entry of the span map after every span's own
//! ([`split_entries`]).
//!
//! Two kinds of refusal: [`PlanError::Bad`] is the user's mistake (an event the kernel
//! lacks, a field the event does not carry: one line, exit 2); [`PlanError::Unsupported`]
//! is a declaration the BPF backend cannot express (a filter on a string stored out of
//! line, a text value of a number field): the text backend measures it instead.

use super::format::{Format, Kind};
use crate::trace::spans::{Filter, Key, Side, Span, MAX_SPLIT};

/// Where a value comes from when the program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A number field of the record: offset, bytes, sign-extended when `signed`.
    Field {
        offset: u32,
        size: u32,
        signed: bool,
    },
    /// The CPU the event fired on.
    Cpu,
    /// The task that logged it (`common_pid`, which the BPF context cannot read: the
    /// kernel overwrites the record's common fields with a register pointer).
    Pid,
    /// One key for everything.
    Zero,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The value is one of these numbers.
    Num { source: Source, any_of: Vec<u64> },
    /// A char array field holds one of these strings (`true`: as a prefix).
    Text {
        offset: u32,
        size: u32,
        any_of: Vec<(Vec<u8>, bool)>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    End,
    Cancel,
    Start,
    /// Remember `value` at the key, for the span's ends to be tagged with.
    Split,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// The span's index in the set.
    pub span: u32,
    pub role: Role,
    /// For a start: the span whose end, in this same event, it must follow.
    pub after: Option<u32>,
    pub key: Source,
    /// All must hold.
    pub checks: Vec<Check>,
    /// Every side of the span is keyed by CPU: start and end happen on the same CPU, so
    /// the open start lives in a per-CPU slot (no hash map, no lock).
    pub local: bool,
    /// For a split: the field whose value is remembered.
    pub value: Option<Source>,
    /// For the end of a split span: the span-map entry of its value 0 (value `v` is this
    /// plus `v`, for `v` below [`MAX_SPLIT`]).
    pub split: Option<u32>,
}

/// The span-map entries of the split spans' values: (span index, entry of value 0), after
/// the `spans.len()` entries of the spans themselves.
pub fn split_entries(spans: &[Span]) -> Vec<(usize, u32)> {
    let mut next = spans.len() as u32;
    spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.split.is_some())
        .map(|(i, _)| {
            let first = next;
            next += MAX_SPLIT as u32;
            (i, first)
        })
        .collect()
}

/// Entries of the span map: the spans, then [`MAX_SPLIT`] per split span.
pub fn map_entries(spans: &[Span]) -> u32 {
    spans.len() as u32 + split_entries(spans).len() as u32 * MAX_SPLIT as u32
}

/// At most this many CPUs may write a shared histogram map (see [`shared_histograms`]).
pub const SHARED_MAX_CPUS: usize = 4;

/// Whether the spans' histograms can be one copy shared by every CPU rather than a copy
/// per CPU: where every side of every span passes only events on a few listed CPUs (a
/// set restricted to the workload's CPUs, such as idle-ipi's pair), so at most that many
/// CPUs' programs add to it and an atomic add rarely finds its cache line elsewhere. A
/// per-CPU map's memory is its entries × 28 KiB × every possible CPU: `idlewake`'s 35
/// would be 250 MiB on a 256-CPU machine, and as much read back after each measurement;
/// shared, 1 MiB whatever the machine.
pub fn shared_histograms(spans: &[Span]) -> bool {
    let few_cpus = |side: &Side| {
        side.filters.iter().any(|f| {
            f.field == "cpu"
                && f.patterns.len() <= SHARED_MAX_CPUS
                && f.patterns
                    .iter()
                    .all(|(p, prefix)| !prefix && p.parse::<u32>().is_ok())
        })
    };
    !spans.is_empty() && spans.iter().all(|s| s.sides().all(few_cpus))
}

/// Bytes of kernel memory the span map takes: its value rounded to 8 bytes, per entry,
/// per possible CPU unless shared.
pub fn span_map_bytes(entries: u32, value_size: usize, cpus: usize, shared: bool) -> u64 {
    let per_entry = value_size.div_ceil(8) as u64 * 8;
    u64::from(entries) * per_entry * if shared { 1 } else { cpus as u64 }
}

/// One tracepoint and its program's actions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventPlan {
    pub system: String,
    pub event: String,
    pub id: u64,
    pub actions: Vec<Action>,
}

/// Why a span set has no BPF programs (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The user's mistake: one line, exit 2.
    #[error("{0}")]
    Bad(String),
    /// What the BPF backend cannot express: the text backend measures it instead.
    #[error("{0}")]
    Unsupported(String),
}

/// Spans a program tracks at once: the bitmask of spans ended by the current event is
/// one register.
pub const MAX_SPANS: usize = 64;
/// Addresses a symbol prefix may stand for.
const MAX_SYMBOLS: usize = 16;

/// The addresses of the kernel symbols named `name` (`true`: whose names start with it).
pub type Symbols<'a> = dyn Fn(&str, bool) -> Vec<u64> + 'a;

/// The programs of a set. `format` gives an event's layout (an error when the kernel
/// lacks it), `symbols` resolves `callback = "name*"` filters of pointer fields.
pub fn plan(
    spans: &[Span],
    format: &dyn Fn(&str, &str) -> Result<Format, String>,
    symbols: &Symbols<'_>,
) -> Result<Vec<EventPlan>, PlanError> {
    if spans.len() > MAX_SPANS {
        return Err(PlanError::Unsupported(format!(
            "{} spans; the BPF backend takes at most {MAX_SPANS}",
            spans.len()
        )));
    }
    let splits = split_entries(spans);
    let mut out: Vec<EventPlan> = Vec::new();
    for s in spans {
        for (system, event) in s.events() {
            if out.iter().any(|p| p.system == system && p.event == event) {
                continue;
            }
            let f = format(&system, &event).map_err(|e| {
                PlanError::Bad(format!(
                    "span {:?} names event {system}:{event}, which this kernel does not have ({e})",
                    s.name
                ))
            })?;
            let actions = actions_at(spans, &splits, (&system, &event), &f, symbols)?;
            out.push(EventPlan {
                system,
                event,
                id: f.id,
                actions,
            });
        }
    }
    Ok(out)
}

/// What the program of one event does: an action for every span side that names the
/// event, in the set's order and, within a span, in the order end, cancel, start, split.
fn actions_at(
    spans: &[Span],
    splits: &[(usize, u32)],
    (system, event): (&str, &str),
    f: &Format,
    symbols: &Symbols<'_>,
) -> Result<Vec<Action>, PlanError> {
    let mut actions = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        let sides = [
            (Role::End, Some(&span.to)),
            (Role::Cancel, span.cancel.as_ref()),
            (Role::Start, Some(&span.from)),
            (Role::Split, span.split.as_ref().map(|s| &s.side)),
        ];
        for (role, side) in sides {
            let Some(side) = side else { continue };
            if !side.events.iter().any(|(s, e)| s == system && e == event) {
                continue;
            }
            let split = match role {
                Role::End => splits.iter().find(|(s, _)| *s == i).map(|(_, e)| *e),
                _ => None,
            };
            let action = side_action((i, span), role, side, f, symbols, split)
                .map_err(|e| e.within(&format!("span {:?}, event {system}:{event}", span.name)))?;
            actions.push(action);
        }
    }
    Ok(actions)
}

/// One side's action, its key, filters and (for a split) the value to remember resolved
/// to loads from the event's record. `split`: the span-map entry of an end's value 0.
fn side_action(
    (i, span): (usize, &Span),
    role: Role,
    side: &Side,
    f: &Format,
    symbols: &Symbols<'_>,
    split: Option<u32>,
) -> Result<Action, PlanError> {
    // Resolved in this order so that the first refusal is the one a reader of the
    // declaration meets first: key, filters, split value.
    let key = key(side, f)?;
    let checks = side
        .filters
        .iter()
        .map(|flt| check(flt, f, symbols))
        .collect::<Result<_, _>>()?;
    let value = match (role, &span.split) {
        (Role::Split, Some(sp)) => {
            Some(number_field(f, &sp.field).map_err(|e| e.prefixed("split: "))?)
        }
        _ => None,
    };
    Ok(Action {
        span: i as u32,
        role,
        after: match role {
            Role::Start => span.after.map(|a| a as u32),
            _ => None,
        },
        key,
        local: is_local(span),
        checks,
        value,
        split,
    })
}

fn is_local(span: &Span) -> bool {
    [Some(&span.from), Some(&span.to), span.cancel.as_ref()]
        .into_iter()
        .flatten()
        .all(|s| s.key == Key::Cpu)
}

impl PlanError {
    /// The same refusal, saying where (`span "x", event sched:sched_switch: …`).
    fn within(self, at: &str) -> Self {
        match self {
            PlanError::Bad(s) => PlanError::Bad(format!("{at}: {s}")),
            PlanError::Unsupported(s) => PlanError::Unsupported(format!("{at}: {s}")),
        }
    }

    fn prefixed(self, p: &str) -> Self {
        match self {
            PlanError::Bad(s) => PlanError::Bad(format!("{p}{s}")),
            PlanError::Unsupported(s) => PlanError::Unsupported(format!("{p}{s}")),
        }
    }
}

fn number_field(f: &Format, name: &str) -> Result<Source, PlanError> {
    let field = f.field(name).ok_or_else(|| {
        PlanError::Bad(format!(
            "the event has no field {name:?} (its fields: {})",
            f.own_fields().join(", ")
        ))
    })?;
    match field.kind {
        Kind::Int | Kind::Pointer if field.offset >= 8 && field.offset % field.size == 0 => {
            Ok(Source::Field {
                offset: field.offset,
                size: field.size,
                signed: field.signed,
            })
        }
        Kind::Int | Kind::Pointer => Err(PlanError::Unsupported(format!(
            "field {name:?} is a common field or not aligned, which a BPF program cannot read"
        ))),
        _ => Err(PlanError::Unsupported(format!(
            "field {name:?} is not a number, which the BPF backend cannot use here"
        ))),
    }
}

fn key(side: &Side, f: &Format) -> Result<Source, PlanError> {
    match &side.key {
        Key::Cpu => Ok(Source::Cpu),
        Key::Pid => Ok(Source::Pid),
        Key::Global => Ok(Source::Zero),
        Key::Field(name) => number_field(f, name).map_err(|e| e.prefixed("key: ")),
    }
}

fn check(flt: &Filter, f: &Format, symbols: &Symbols<'_>) -> Result<Check, PlanError> {
    let name = flt.field.as_str();
    let field = f.field(name);
    let source = match (name, field) {
        ("cpu", None) => Source::Cpu,
        ("common_pid", _) => Source::Pid,
        (_, Some(field)) if field.kind == Kind::Chars => {
            return Ok(Check::Text {
                offset: field.offset,
                size: field.size,
                any_of: flt
                    .patterns
                    .iter()
                    .map(|(p, prefix)| (p.as_bytes().to_vec(), *prefix))
                    .collect(),
            })
        }
        _ => number_field(f, name).map_err(|e| e.prefixed("where: "))?,
    };
    let pointer = field.is_some_and(|x| x.kind == Kind::Pointer);
    let mut any_of = Vec::new();
    for (p, prefix) in &flt.patterns {
        match (number(p), prefix) {
            (Some(n), false) => any_of.push(n),
            _ if pointer => {
                // `%pS` prints a callback as `name+0x0/0x30`: a pointer to the start of a
                // function whose name is (or, with `*`, starts with) the pattern.
                let found = symbols(p, *prefix);
                if found.is_empty() || found.len() > MAX_SYMBOLS || found.contains(&0) {
                    return Err(PlanError::Unsupported(format!(
                        "where {name} = {p:?}: {} kernel symbols match with an address \
                         (/proc/kallsyms)",
                        found.len()
                    )));
                }
                any_of.extend(found);
            }
            _ => {
                return Err(PlanError::Unsupported(format!(
                    "where {name} = {p:?}{}: the BPF backend compares number fields as numbers",
                    if *prefix { "*" } else { "" }
                )))
            }
        }
    }
    Ok(Check::Num { source, any_of })
}

/// `12`, `-1`, `0x1f`, as the 64-bit pattern a sign-extended load gives.
fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    s.parse::<u64>()
        .ok()
        .or_else(|| s.parse::<i64>().ok().map(|n| n as u64))
}

#[cfg(test)]
mod model;
#[cfg(test)]
mod tests;
