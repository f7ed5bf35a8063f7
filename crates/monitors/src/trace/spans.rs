//! Span sets as data: "from event X to event Y, matched by key K", declared in TOML.
//!
//! ```toml
//! name = "wakeup"
//! description = "scheduler wake-up latency"
//! cpus = "workload"   # optional: only events on the CPUs the workload runs on
//!
//! [[span]]
//! name = "sched"                       # [a-z0-9_]+, unique in the set
//! label = "woken → running"            # what a person reads
//! from = { events = ["sched:sched_waking"], key = "field:pid" }
//! to = { events = ["sched:sched_switch"], key = "field:next_pid" }
//! # optional:
//! cancel = { events = ["irq:irq_handler_exit"], key = "cpu" }  # drops an open start
//! after = "other"   # start only at an event that ended span `other` (declared earlier)
//! when = { fact = "net.path", prefix = "vm-" }                 # only on such variants
//! split = { events = ["power:cpu_idle"], field = "state", key = "cpu",
//!           where = { state = "0|1|2" }, names = "cpuidle" }
//! per_round_trip = 2  # a span keyed by CPU: its matches per round trip of the workload
//! ```
//!
//! `split` tags each duration with a value remembered at the span's key: the last `field`
//! of the split's events (those its `where` passes) whose `key` equals the end's key, up
//! to the end event itself (a split event that is also the end tags the *next* span). The
//! span then leaves, besides its whole histogram, one per value, named `SPAN@VALUE`
//! (`ipi_idle_exit@1`); a duration whose key has no value yet is in the whole one only.
//! `after` constrains where a span starts; `split` says what the CPU or task was doing
//! when it ended, e.g. which idle state a CPU left. Values must be numbers below
//! [`MAX_SPLIT`] (the in-kernel backend keeps a histogram per value); `names = "cpuidle"`
//! names them by the CPU's cpuidle states (`POLL`, `C1E`) where the machine has them.
//!
//! A side's `key` is `cpu`, `pid` (the task that logged the event), `field:NAME` (a field
//! of the event, e.g. `field:skbaddr`) or `global` (one key for everything). A side may
//! filter its events with `where = { vec = "3", next_comm = "vhost*" }`: a value ending
//! in `*` is a prefix, `a|b` is either. The built-in sets are files of this format, embedded.

use std::collections::BTreeMap;

use perflab_core::span_outline::{SpanOutline, SpanSetOutline};
use serde::Deserialize;

/// A span's condition: declared in core, where the report reads it too.
pub use perflab_core::span_outline::When;

/// The built-in sets, by name: (name, TOML text).
pub const BUILT_IN: &[(&str, &str)] = &[
    ("netrx", include_str!("sets/netrx.toml")),
    ("wakeup", include_str!("sets/wakeup.toml")),
    ("lock", include_str!("sets/lock.toml")),
    ("idlewake", include_str!("sets/idlewake.toml")),
];

/// The built-in set that fits a workload, if any.
pub fn set_for_workload(workload: &str) -> Option<&'static str> {
    match workload {
        "netrr" => Some("netrx"),
        "ctxsw" => Some("wakeup"),
        "idle-ipi" => Some("idlewake"),
        "xfer" | "dmatest" | "parallel" => Some("lock"),
        _ => None,
    }
}

/// The built-in set for a measurement: [`set_for_workload`], except that ctxsw under a
/// variant that sets the idle states (the cpuidle knob's `cpuidle.mode` fact: the
/// idle-ipi study) gets `idlewake`, seed 004's wake-up in parts per idle state, rather
/// than `wakeup`. Every variant of idle-ipi sets them (`all` too), so its variants are
/// traced alike.
pub fn set_for(workload: &str, facts: &BTreeMap<String, String>) -> Option<&'static str> {
    match workload {
        "ctxsw" if facts.contains_key(CPUIDLE_FACT) => Some("idlewake"),
        _ => set_for_workload(workload),
    }
}

/// The cpuidle knob's fact.
pub const CPUIDLE_FACT: &str = perflab_knobs::cpuidle::FACT;

/// A parsed, checked span set.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanSet {
    pub name: String,
    pub description: String,
    pub spans: Vec<Span>,
    /// `cpus = "workload"`: every side also needs `cpu` (the event's field of that name,
    /// else the CPU that logged it) to be one the workload runs on, e.g. idle-ipi's CPU
    /// pair, so a wake-up elsewhere on the machine is not one of the pair's.
    pub workload_cpus: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub name: String,
    pub label: String,
    pub from: Side,
    pub to: Side,
    pub cancel: Option<Side>,
    /// The start must be an event that ended this span (an index of the set, earlier).
    pub after: Option<usize>,
    pub when: Option<When>,
    pub split: Option<Split>,
    /// Matches per round trip of the workload that the study's own work makes, for a
    /// span keyed by CPU ([`Span::keyed_by_cpu`]): the rest were someone else's events on
    /// those CPUs, and the report refuses a figure from too many of them. Declared
    /// `per_round_trip = 2`; 1 where the file says nothing.
    pub per_round_trip: f64,
}

/// Values a split may take, 0 to `MAX_SPLIT - 1`: the kernel's CPUIDLE_STATE_MAX, so
/// every idle state has its own.
pub const MAX_SPLIT: u64 = 10;

/// What tags a span's durations: the last value of `field` seen on `side`'s events, by key.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    pub side: Side,
    pub field: String,
    pub names: SplitNames,
}

/// How a split value is named in the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitNames {
    /// As the number it is (`3`).
    Number,
    /// By the cpuidle state of that index (`cpu0/cpuidle/stateN/name`).
    Cpuidle,
}

/// One end of a span: which events, how they are keyed, which of them count.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// `(system, event)` pairs.
    pub events: Vec<(String, String)>,
    pub key: Key,
    pub filters: Vec<Filter>,
    /// The events used instead where this kernel lacks one of `events` (a tracepoint
    /// newer kernels added, and the older, costlier one it replaces); empty: none.
    pub fallback: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    Cpu,
    Pid,
    Field(String),
    Global,
}

impl Key {
    /// The CPU that logged the event, or a field holding a CPU number (`cpu`,
    /// `target_cpu`).
    pub fn names_a_cpu(&self) -> bool {
        match self {
            Key::Cpu => true,
            Key::Field(f) => f == "cpu" || f.ends_with("_cpu"),
            Key::Pid | Key::Global => false,
        }
    }
}

/// A field filter: the field must equal one of `patterns` (`(text, is_prefix)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    pub field: String,
    pub patterns: Vec<(String, bool)>,
}

impl Filter {
    pub fn accepts(&self, value: &str) -> bool {
        self.patterns.iter().any(|(p, prefix)| {
            if *prefix {
                value.starts_with(p.as_str())
            } else {
                value == p
            }
        })
    }
}

impl SpanSet {
    /// The names, labels and conditions of the spans, for the report.
    pub fn outline(&self) -> SpanSetOutline {
        SpanSetOutline {
            name: self.name.clone(),
            spans: self
                .spans
                .iter()
                .map(|s| SpanOutline {
                    name: s.name.clone(),
                    label: s.label.clone(),
                    when: s.when.clone(),
                })
                .collect(),
        }
    }
}

impl Span {
    /// Whether the span starts and ends by CPU (`cpu`, or a field naming one:
    /// `ipi_send_cpu`'s `cpu`, `sched_waking`'s `target_cpu`): any event on that CPU,
    /// whoever's, closes it, so its matches need counting against the workload's round
    /// trips.
    pub fn keyed_by_cpu(&self) -> bool {
        [&self.from, &self.to].iter().all(|s| s.key.names_a_cpu())
    }

    /// Whether the span's matches include other work's events on its CPUs: it is keyed
    /// by CPU, or starts only where such a span ended (`after`: netrx's `sched` follows
    /// every wake-up `wake` ended, the benchmark's or not). `spans` is the set the span
    /// is in, whose indices `after` holds; `after` names an earlier span, so the chain
    /// ends.
    pub fn counts_cpu_events(&self, spans: &[Span]) -> bool {
        self.keyed_by_cpu()
            || self
                .after
                .and_then(|i| spans.get(i))
                .is_some_and(|a| a.counts_cpu_events(spans))
    }

    /// Every side the span declares: from, to, then cancel and split where it has them.
    pub fn sides(&self) -> impl Iterator<Item = &Side> {
        let split = self.split.as_ref().map(|s| &s.side);
        [
            Some(&self.from),
            Some(&self.to),
            self.cancel.as_ref(),
            split,
        ]
        .into_iter()
        .flatten()
    }

    /// [`Span::sides`], to change them.
    pub fn sides_mut(&mut self) -> impl Iterator<Item = &mut Side> {
        let split = self.split.as_mut().map(|s| &mut s.side);
        [
            Some(&mut self.from),
            Some(&mut self.to),
            self.cancel.as_mut(),
            split,
        ]
        .into_iter()
        .flatten()
    }

    /// The span as this kernel traces it: each side that declares a `fallback` and names
    /// an event `has` says the kernel lacks uses its fallback events instead.
    pub fn with_fallbacks(mut self, has: &dyn Fn(&str, &str) -> bool) -> Self {
        for side in self.sides_mut() {
            if !side.fallback.is_empty() && side.events.iter().any(|(s, e)| !has(s, e)) {
                side.events = std::mem::take(&mut side.fallback);
            }
        }
        self
    }

    /// Every `(system, event)` the span needs, each once.
    pub fn events(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for side in self.sides() {
            for e in &side.events {
                if !out.contains(e) {
                    out.push(e.clone());
                }
            }
        }
        out
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    cpus: Option<String>,
    #[serde(default)]
    span: Vec<RawSpan>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpan {
    name: String,
    label: String,
    from: RawSide,
    to: RawSide,
    cancel: Option<RawSide>,
    after: Option<String>,
    when: Option<When>,
    split: Option<RawSplit>,
    per_round_trip: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSplit {
    events: Vec<String>,
    key: String,
    field: String,
    #[serde(default, rename = "where")]
    filters: BTreeMap<String, String>,
    #[serde(default)]
    names: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSide {
    events: Vec<String>,
    key: String,
    #[serde(default, rename = "where")]
    filters: BTreeMap<String, String>,
    #[serde(default)]
    fallback: Vec<String>,
}

/// Parses and checks a span set; the error is one line naming the problem (`origin` is
/// the file or `built-in set NAME`).
pub fn parse_set(text: &str, origin: &str) -> Result<SpanSet, String> {
    let raw: RawSet = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| {
                format!(
                    " (line {})",
                    text[..s.start.min(text.len())].lines().count().max(1)
                )
            })
            .unwrap_or_default();
        format!("{origin}: {}{line}", e.message().replace('\n', " ").trim())
    })?;
    let bad = |what: String| format!("{origin}: {what}");
    if !is_ident(&raw.name) {
        return Err(bad(format!(
            "set name {:?} is not made of a-z, 0-9 and _",
            raw.name
        )));
    }
    if raw.span.is_empty() {
        return Err(bad(format!("set {:?} declares no [[span]]", raw.name)));
    }
    let mut spans: Vec<Span> = Vec::new();
    for s in raw.span {
        let at = |what: String| bad(format!("span {:?}: {what}", s.name));
        if !is_ident(&s.name) {
            return Err(at("the name is not made of a-z, 0-9 and _".into()));
        }
        if spans.iter().any(|o| o.name == s.name) {
            return Err(at("declared twice".into()));
        }
        if s.label.trim().is_empty() {
            return Err(at("empty label".into()));
        }
        let after =
            match &s.after {
                None => None,
                Some(a) => Some(spans.iter().position(|o| &o.name == a).ok_or_else(|| {
                    at(format!("after = {a:?} names no span declared before it"))
                })?),
            };
        let side = |r: RawSide, which: &str| side(r).map_err(|e| at(format!("{which}: {e}")));
        let per_round_trip = s.per_round_trip.unwrap_or(1.0);
        if !(per_round_trip.is_finite() && per_round_trip > 0.0) {
            return Err(at(format!(
                "per_round_trip = {per_round_trip} is not a count above 0"
            )));
        }
        spans.push(Span {
            per_round_trip,
            from: side(s.from, "from")?,
            to: side(s.to, "to")?,
            cancel: s.cancel.map(|c| side(c, "cancel")).transpose()?,
            split: s.split.map(split).transpose().map_err(&at)?,
            name: s.name,
            label: s.label,
            after,
            when: s.when,
        });
    }
    let workload_cpus = match raw.cpus.as_deref() {
        None | Some("all") => false,
        Some("workload") => true,
        Some(o) => {
            return Err(bad(format!(
                "cpus = {o:?} is unknown (expected workload or all)"
            )))
        }
    };
    Ok(SpanSet {
        name: raw.name,
        description: raw.description,
        spans,
        workload_cpus,
    })
}

/// `SYSTEM:EVENT` names as pairs.
fn event_names(list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|e| match e.split_once(':') {
            Some((sys, ev)) if is_event_ident(sys) && is_event_ident(ev) => {
                Ok((sys.to_string(), ev.to_string()))
            }
            _ => Err(format!(
                "event {e:?} is not SYSTEM:EVENT (e.g. sched:sched_switch)"
            )),
        })
        .collect()
}

fn side(r: RawSide) -> Result<Side, String> {
    if r.events.is_empty() {
        return Err("no events".into());
    }
    let events = event_names(&r.events)?;
    let fallback = event_names(&r.fallback).map_err(|e| format!("fallback: {e}"))?;
    let key = parse_key(&r.key)?;
    let filters = r
        .filters
        .into_iter()
        .map(|(field, v)| Filter {
            field,
            patterns: v
                .split('|')
                .map(|p| match p.strip_suffix('*') {
                    Some(p) => (p.to_string(), true),
                    None => (p.to_string(), false),
                })
                .collect(),
        })
        .collect();
    Ok(Side {
        events,
        key,
        filters,
        fallback,
    })
}

fn split(r: RawSplit) -> Result<Split, String> {
    if !is_event_ident(&r.field) {
        return Err(format!("split: field {:?} is not a field name", r.field));
    }
    let names = match r.names.as_deref() {
        None | Some("number") => SplitNames::Number,
        Some("cpuidle") => SplitNames::Cpuidle,
        Some(o) => {
            return Err(format!(
                "split: names = {o:?} is unknown (expected cpuidle or number)"
            ))
        }
    };
    let side = side(RawSide {
        events: r.events,
        key: r.key,
        filters: r.filters,
        fallback: Vec::new(),
    })
    .map_err(|e| format!("split: {e}"))?;
    Ok(Split {
        side,
        field: r.field,
        names,
    })
}

/// The spans restricted to events on `cpus` (a set's `cpus = "workload"`): a `cpu` filter
/// on every side, split side included. No CPUs (a workload that cannot say) restricts
/// nothing.
pub fn on_cpus(spans: Vec<Span>, cpus: &[u32]) -> Vec<Span> {
    if cpus.is_empty() {
        return spans;
    }
    let filter = Filter {
        field: "cpu".into(),
        patterns: cpus.iter().map(|c| (c.to_string(), false)).collect(),
    };
    spans
        .into_iter()
        .map(|mut s| {
            for side in s.sides_mut() {
                side.filters.retain(|f| f.field != "cpu");
                side.filters.push(filter.clone());
            }
            s
        })
        .collect()
}

/// The name of a split span's histogram for `value`: `ipi_idle_exit@1`.
pub fn split_name(span: &str, value: u64) -> String {
    format!("{span}@{value}")
}

fn parse_key(k: &str) -> Result<Key, String> {
    match k {
        "cpu" => Ok(Key::Cpu),
        "pid" => Ok(Key::Pid),
        "global" => Ok(Key::Global),
        _ => match k.strip_prefix("field:") {
            Some(f) if is_event_ident(f) => Ok(Key::Field(f.to_string())),
            _ => Err(format!(
                "unknown key kind {k:?} (expected cpu, pid, field:NAME or global)"
            )),
        },
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn is_event_ident(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A built-in set by name, parsed.
pub fn built_in(name: &str) -> Option<SpanSet> {
    BUILT_IN.iter().find(|(n, _)| *n == name).map(|(n, text)| {
        parse_set(text, &format!("built-in span set {n}"))
            .unwrap_or_else(|e| panic!("a built-in span set does not parse: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_sets_parse_and_match_their_names() {
        for (name, _) in BUILT_IN {
            let set = built_in(name).unwrap();
            assert_eq!(&set.name, name);
            assert!(!set.spans.is_empty());
        }
        let netrx = built_in("netrx").unwrap();
        let names: Vec<&str> = netrx.spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(&names[..4], ["irq", "raise", "wake", "sched"]);
        assert_eq!(set_for_workload("netrr"), Some("netrx"));
        assert_eq!(set_for_workload("idle-ipi"), Some("idlewake"));
        assert_eq!(set_for_workload("parallel"), Some("lock"));
        assert_eq!(set_for_workload("null"), None);
        let idle = BTreeMap::from([(CPUIDLE_FACT.to_string(), "all".to_string())]);
        assert_eq!(set_for("ctxsw", &idle), Some("idlewake"));
        assert_eq!(set_for("ctxsw", &BTreeMap::new()), Some("wakeup"));
        assert_eq!(set_for("netrr", &idle), Some("netrx"));
        // idlewake's idle-exit parts and residency are split by idle state, and the
        // split's event is one the span needs.
        let idle = built_in("idlewake").unwrap();
        let split: Vec<&str> = idle
            .spans
            .iter()
            .filter(|s| s.split.is_some())
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(split, ["ipi_idle_exit", "idle_exit_run", "residency"]);
        let s = idle.spans[2].split.as_ref().unwrap();
        assert_eq!((s.field.as_str(), s.names), ("state", SplitNames::Cpuidle));
        assert_eq!(s.side.key, Key::Cpu);
        assert!(idle.spans[2]
            .events()
            .contains(&("power".into(), "cpu_idle".into())));
        // idlewake is the CPU pair's; the other sets see the whole machine.
        assert!(idle.workload_cpus);
        assert!(!built_in("wakeup").unwrap().workload_cpus);
    }

    const GOOD: &str = r#"
name = "t"
[[span]]
name = "s"
label = "S"
from = { events = ["sched:sched_waking"], key = "field:pid" }
to = { events = ["sched:sched_switch"], key = "field:next_pid", where = { next_comm = "vhost*", prev_state = "S|D" } }
"#;

    #[test]
    fn a_good_file() {
        let set = parse_set(GOOD, "f.toml").unwrap();
        let s = &set.spans[0];
        assert_eq!(s.from.key, Key::Field("pid".into()));
        assert_eq!(
            s.to.filters,
            [
                Filter {
                    field: "next_comm".into(),
                    patterns: vec![("vhost".into(), true)]
                },
                Filter {
                    field: "prev_state".into(),
                    patterns: vec![("S".into(), false), ("D".into(), false)]
                },
            ]
        );
        assert_eq!(
            s.events(),
            [
                ("sched".into(), "sched_waking".into()),
                ("sched".into(), "sched_switch".into())
            ]
        );
    }

    #[test]
    fn a_side_falls_back_where_the_kernel_lacks_its_events() {
        let text = GOOD.replace(
            "to = { events = [\"sched:sched_switch\"], key = \"field:next_pid\",",
            "to = { events = [\"sock:sock_recv_length\"], fallback = \
             [\"syscalls:sys_exit_recvfrom\", \"syscalls:sys_exit_recvmsg\"], key = \"pid\",",
        );
        let span = parse_set(&text, "f.toml").unwrap().spans.remove(0);
        let ev = |s: &str, e: &str| (s.to_string(), e.to_string());
        assert_eq!(span.to.events, [ev("sock", "sock_recv_length")]);
        // A kernel with the new tracepoint keeps it; one without uses the fallback.
        let newer = span.clone().with_fallbacks(&|_, _| true);
        assert_eq!(newer.to.events, [ev("sock", "sock_recv_length")]);
        let older = span.with_fallbacks(&|s, _| s != "sock");
        assert_eq!(
            older.to.events,
            [
                ev("syscalls", "sys_exit_recvfrom"),
                ev("syscalls", "sys_exit_recvmsg")
            ]
        );
        // A side without a fallback keeps its events (the span is then skipped).
        assert_eq!(older.from.events, [ev("sched", "sched_waking")]);
        let bad = GOOD.replace(
            "key = \"field:pid\"",
            "key = \"field:pid\", fallback = [\"x\"]",
        );
        let e = parse_set(&bad, "f.toml").unwrap_err();
        assert!(
            e.contains("from: fallback: event \"x\" is not SYSTEM:EVENT"),
            "{e}"
        );
    }

    #[test]
    fn bad_files_give_one_line_naming_the_problem() {
        let cases: &[(&str, &str)] = &[
            ("name = \"t\"\n[[span]\n", "f.toml: "),
            ("name = \"t\"\n", "declares no [[span]]"),
            ("name = \"t\"\nspan = []\n", "declares no [[span]]"),
            (
                &GOOD.replace("field:pid", "thread"),
                "unknown key kind \"thread\"",
            ),
            (
                &GOOD.replace("sched:sched_waking", "sched_waking"),
                "is not SYSTEM:EVENT",
            ),
            (
                &GOOD.replace("label = \"S\"", "label = \" \""),
                "empty label",
            ),
            (
                &GOOD.replace("label = \"S\"", "label = \"S\"\nafter = \"s\""),
                "after = \"s\" names no span declared before it",
            ),
            (
                &GOOD.replace("label = \"S\"", "label = \"S\"\ncolour = 1"),
                "unknown field `colour`",
            ),
            (
                &GOOD.replace("name = \"s\"", "name = \"S-1\""),
                "not made of",
            ),
            (
                &format!("{GOOD}[[span]]{}", GOOD.split_once("[[span]]").unwrap().1),
                "declared twice",
            ),
            (
                &GOOD.replace("[\"sched:sched_waking\"]", "[]"),
                "from: no events",
            ),
            (
                &GOOD.replace("name = \"t\"", "name = \"t\"\ncpus = \"pair\""),
                "cpus = \"pair\" is unknown",
            ),
            (
                &format!("{GOOD}split = {{ events = [\"power:cpu_idle\"], key = \"cpu\" }}\n"),
                "missing field `field`",
            ),
            (
                &format!("{GOOD}split = {{ events = [\"power:cpu_idle\"], key = \"cpu\", field = \"state\", names = \"acpi\" }}\n"),
                "span \"s\": split: names = \"acpi\" is unknown",
            ),
            (
                &format!("{GOOD}split = {{ events = [\"cpu_idle\"], key = \"cpu\", field = \"state\" }}\n"),
                "span \"s\": split: event \"cpu_idle\" is not SYSTEM:EVENT",
            ),
        ];
        for (text, want) in cases {
            let e = parse_set(text, "f.toml").unwrap_err();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
            assert!(e.starts_with("f.toml: "), "{e}");
            assert!(!e.contains('\n'), "{e:?}");
        }
    }
}
