//! Notes and reasons as values, not sentences. A crate that explains something to the
//! reader (a monitor that cannot count an event, the parallelism judge that will not let
//! bandwidths be summed) says it as a [`Note`] or a [`Reason`]: what kind of remark, about
//! what, with which figures, how serious. The words are written here, once, from the
//! values; a crate that shows the remark renders it, and never reads another crate's
//! English back (a reworded sentence would silently break it).
//!
//! Stored runs keep their notes as text; a note stored before it had a kind is read as
//! [`Note::untyped`] and renders as its text.

use serde::{Deserialize, Serialize};

/// How much a remark matters to the reader of a result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Context: what was done, where it came from.
    #[default]
    Info,
    /// The numbers hold, within a limit the reader should know (a counter not counted).
    Caveat,
    /// The numbers may not mean what they seem (summing bandwidths that did not overlap).
    Warning,
}

/// One figure a remark rests on, by name (`parallelism`, `overlap`), so a table can show
/// it in its own units without reading it out of a sentence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
}

/// What kind of remark a note is: the closed set a renderer matches on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoteKind {
    /// A note stored before notes had kinds, or one nobody needs to recognise.
    Text,
    /// Events a monitor asked for that this machine cannot count, and why.
    Unsupported { events: Vec<String>, why: String },
    /// A monitor counts user space only (the kernel's part is not counted), and why.
    UserOnly { why: String },
    /// A span the kernel cannot trace (it lacks the tracepoints `missing`) is skipped.
    SpanSkipped { missing: Vec<String>, span: String },
    /// The guest ran under TCG, software emulation, because `why`.
    GuestEmulated { why: String },
    /// How a network workload used its path (`path` the path kind, `setup` the protocol,
    /// size and load, as the workload says them).
    NetPath { path: String, setup: String },
    /// Why summing per-worker bandwidths is not valid.
    NotSummable(Reason),
}

/// A remark a person should see next to the numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub kind: NoteKind,
    /// What it is about: a monitor (`counters`), a knob, a point.
    pub subject: String,
    pub figures: Vec<Figure>,
    pub severity: Severity,
}

impl Note {
    /// A note that is only its text (every note stored before notes had kinds).
    pub fn untyped(text: impl Into<String>) -> Self {
        Self {
            kind: NoteKind::Text,
            subject: text.into(),
            figures: Vec::new(),
            severity: Severity::Info,
        }
    }

    /// Events `subject` (a monitor) cannot count here, for one reason.
    pub fn unsupported(subject: &str, events: Vec<String>, why: &str) -> Self {
        Self {
            kind: NoteKind::Unsupported {
                events,
                why: why.to_string(),
            },
            subject: subject.to_string(),
            figures: Vec::new(),
            severity: Severity::Caveat,
        }
    }

    /// `subject` (a monitor) counts user space only.
    pub fn user_only(subject: &str, why: &str) -> Self {
        Self {
            kind: NoteKind::UserOnly {
                why: why.to_string(),
            },
            subject: subject.to_string(),
            figures: Vec::new(),
            severity: Severity::Caveat,
        }
    }

    /// `subject` (the trace monitor) skips `span`: this kernel lacks `missing`.
    pub fn span_skipped(subject: &str, missing: Vec<String>, span: &str) -> Self {
        Self {
            kind: NoteKind::SpanSkipped {
                missing,
                span: span.to_string(),
            },
            subject: subject.to_string(),
            figures: Vec::new(),
            severity: Severity::Caveat,
        }
    }

    /// The guest a path boots runs under TCG (no KVM), because `why`.
    pub fn guest_emulated(why: &str) -> Self {
        Self {
            kind: NoteKind::GuestEmulated {
                why: why.to_string(),
            },
            subject: GUEST.to_string(),
            figures: Vec::new(),
            severity: Severity::Warning,
        }
    }

    /// What a network workload sent over `path`: `setup` is its protocol, size and load.
    pub fn net_path(path: &str, setup: &str) -> Self {
        Self {
            kind: NoteKind::NetPath {
                path: path.to_string(),
                setup: setup.to_string(),
            },
            subject: path.to_string(),
            figures: Vec::new(),
            severity: Severity::Info,
        }
    }

    /// The note in words, as every crate shows it (and as a run stores it).
    pub fn text(&self) -> String {
        match &self.kind {
            NoteKind::Text => self.subject.clone(),
            NoteKind::Unsupported { events, why } => {
                format!("{}: {} unsupported: {why}", self.subject, events.join(", "))
            }
            NoteKind::UserOnly { why } => format!("{}: user space only: {why}", self.subject),
            NoteKind::SpanSkipped { missing, span } => format!(
                "{}: this kernel has no {}: span {span} is skipped",
                self.subject,
                missing.join(", ")
            ),
            NoteKind::NetPath { path, setup } => format!("path {path}: {setup}"),
            NoteKind::GuestEmulated { why } => format!(
                "{TCG} (software emulation, because {why}): its latencies are those of an \
                 emulated CPU, many times a real VM's, and are NOT representative of KVM; \
                 compare TCG results only with each other"
            ),
            NoteKind::NotSummable(r) => r.text(Workers::Threads),
        }
    }

    /// A note as a run stores it (its text), read back as a value: the kinds worded by
    /// [`Note::text`] are read here, beside their wording, so a reworded kind fails this
    /// crate's round-trip test instead of silently going unrecognised elsewhere. Any
    /// other text (an old note, one without a kind) is [`Note::untyped`].
    pub fn from_stored(text: &str) -> Self {
        // Older runs (and short test fixtures) end the sentence at the reason.
        if let Some(rest) = text.strip_prefix(TCG) {
            let why = rest
                .strip_prefix(" (software emulation, because ")
                .and_then(|r| r.split_once("): ").map(|(w, _)| w).or(r.strip_suffix(')')))
                .unwrap_or("");
            return Note::guest_emulated(why);
        }
        if let Some((path, setup)) = text
            .strip_prefix("path ")
            .and_then(|r| r.split_once(": "))
            .filter(|(p, _)| !p.is_empty() && !p.contains(char::is_whitespace))
        {
            return Note::net_path(path, setup);
        }
        let typed = text.split_once(": ").and_then(|(subject, rest)| {
            // A subject is one name (`counters`, `counters-cpu`), never a phrase.
            if subject.is_empty() || subject.contains(char::is_whitespace) {
                return None;
            }
            if let Some(why) = rest.strip_prefix("user space only: ") {
                return Some(Note::user_only(subject, why));
            }
            if let Some(r) = rest.strip_prefix("this kernel has no ") {
                let (missing, span) = r.rsplit_once(": span ")?;
                let span = span.strip_suffix(" is skipped")?;
                let missing = missing.split(", ").map(str::to_string).collect();
                return Some(Note::span_skipped(subject, missing, span));
            }
            let (events, why) = rest.split_once(" unsupported: ")?;
            let events = events.split(", ").map(str::to_string).collect();
            Some(Note::unsupported(subject, events, why))
        });
        typed.unwrap_or_else(|| Note::untyped(text))
    }

    /// What a typed note is about (a monitor's source); `None` for an untyped note.
    pub fn about(&self) -> Option<&str> {
        match self.kind {
            NoteKind::Text => None,
            _ => Some(&self.subject),
        }
    }
}

/// The subject of the notes about a booted guest.
const GUEST: &str = "guest";
/// How a note about an emulated guest begins.
const TCG: &str = "the guest runs under TCG";

/// What did the work whose bandwidths a parallelism verdict would sum: CPU threads, or a
/// GPU's copy engines, where a "thread" is one direction's chain of copies on its stream
/// and its busy time the time its bytes take at that direction's solo bandwidth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workers {
    #[default]
    Threads,
    CopyEngines,
}

impl Workers {
    /// One worker and several, as a reason names them (`thread`, `directions`).
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Workers::Threads => ("thread", "threads"),
            Workers::CopyEngines => ("direction", "directions"),
        }
    }
}

/// Why summing per-worker bandwidths is not valid (or why a worker was left out): the
/// parallelism judge's findings with their figures. Durations in ns, shares 0..1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Reason {
    /// A worker's record ends before it starts.
    EndsBeforeStart {
        worker: String,
    },
    NothingToJudge,
    /// Every worker starts and ends at one instant.
    EmptyWindow,
    /// A worker's interval is empty; its bandwidth is left out of the sum.
    EmptyInterval {
        worker: String,
    },
    /// `late` started `gap_ns` after `ended` ended.
    NeverTogether {
        late: String,
        gap_ns: u64,
        ended: String,
    },
    /// All workers ran together for `share` of the window only.
    TogetherOnly {
        share: f64,
    },
    /// `late` started `lag_ns` (`share` of the window) after `first`.
    StartedLate {
        late: String,
        lag_ns: u64,
        share: f64,
        first: String,
    },
    /// `last` ran on for `tail_ns` (`share` of the window) after `ended` ended.
    RanOn {
        last: String,
        tail_ns: u64,
        share: f64,
        ended: String,
    },
    /// `workers` of them shared CPU `cpu` for `share` of the window.
    SharedCpu {
        workers: usize,
        cpu: u32,
        pinned: bool,
        share: f64,
    },
    /// `workers` of them ran on `cpus` CPUs.
    FewCpus {
        workers: usize,
        cpus: usize,
    },
    /// Effective parallelism `value` of `of` workers.
    Parallelism {
        value: f64,
        of: usize,
    },
    /// The summed per-worker bandwidth against the aggregate, MiB/s.
    SumRatio {
        summed_mib_s: f64,
        aggregate_mib_s: f64,
    },
}

impl Reason {
    /// The reason in words, the workers named as `workers` are.
    pub fn text(&self, workers: Workers) -> String {
        let (one, many) = workers.words();
        match self {
            Reason::EndsBeforeStart { worker } => {
                format!("{one} {worker} left out: it ends before it starts")
            }
            Reason::NothingToJudge => format!("no {one} records to judge"),
            Reason::EmptyWindow => {
                format!("the {many}' window is empty (all start and end at once)")
            }
            Reason::EmptyInterval { worker } => format!(
                "{one} {worker} has an empty interval; its bandwidth is left out of the sum"
            ),
            Reason::NeverTogether {
                late,
                gap_ns,
                ended,
            } => format!(
                "{one} {late} started {} after {one} {ended} ended: they never ran together",
                duration_text(*gap_ns)
            ),
            Reason::TogetherOnly { share } => together_only_text(workers, *share),
            Reason::StartedLate {
                late,
                lag_ns,
                share,
                first,
            } => format!(
                "{one} {late} started {} ({} of the window) after {one} {first}",
                duration_text(*lag_ns),
                percent(*share)
            ),
            Reason::RanOn {
                last,
                tail_ns,
                share,
                ended,
            } => format!(
                "{one} {last} ran on for {} ({} of the window) after {one} {ended} ended",
                duration_text(*tail_ns),
                percent(*share)
            ),
            Reason::SharedCpu {
                workers: n,
                cpu,
                pinned,
                share,
            } => shared_cpu_text(many, *n, *cpu, *pinned, *share),
            Reason::FewCpus { workers: n, cpus } => {
                format!(
                    "{n} {many} ran on {cpus} CPU{}",
                    if *cpus == 1 { "" } else { "s" }
                )
            }
            Reason::Parallelism { value, of } => parallelism_text(workers, *value, *of),
            Reason::SumRatio {
                summed_mib_s,
                aggregate_mib_s,
            } => format!(
                "the summed per-{one} bandwidth is {:.2}× the aggregate ({summed_mib_s:.0} \
                 against {aggregate_mib_s:.0} MiB/s)",
                summed_mib_s / aggregate_mib_s
            ),
        }
    }
}

// The arms below differ by worker kind or by more than one phrase, so each is
// its own step to keep `Reason::text` a readable table of one line per reason.

/// [`Reason::TogetherOnly`] in words: threads and copy engines say it differently.
fn together_only_text(workers: Workers, share: f64) -> String {
    match workers {
        Workers::Threads => format!(
            "all threads ran together for only {} of the window",
            percent(share)
        ),
        Workers::CopyEngines => format!(
            "both directions copied together for only {} of the window",
            percent(share)
        ),
    }
}

/// [`Reason::SharedCpu`] in words, saying whether the sharing was by pinning or
/// only seen in the CPU samples.
fn shared_cpu_text(many: &str, n: usize, cpu: u32, pinned: bool, share: f64) -> String {
    let how = if pinned {
        format!("{n} {many} pinned to CPU {cpu} shared it")
    } else {
        format!("{n} {many} shared CPU {cpu} (by their CPU samples)")
    };
    format!("{how} for {} of the window", percent(share))
}

/// [`Reason::Parallelism`] in words, with the likely cause for the worker kind.
fn parallelism_text(workers: Workers, value: f64, of: usize) -> String {
    let each = percent(value / of.max(1) as f64);
    match workers {
        Workers::Threads => format!(
            "effective parallelism {value:.2} of {of} threads: on average each \
             was on a CPU for {each} of the window (off it the rest: preempted by \
             other tasks, or waiting)"
        ),
        Workers::CopyEngines => format!(
            "effective parallelism {value:.2} of {of} copy engines: at their solo \
             bandwidths the directions' bytes fill {each} of the shared window each \
             on average (the engines took turns, or shared the link or the staging)"
        ),
    }
}

/// `850 ns`, `12.4 µs`, `41 ms`, `1.25 s`: three significant figures at most.
pub fn duration_text(ns: u64) -> String {
    let n = ns as f64;
    let (v, unit) = if ns < 1_000 {
        return format!("{ns} ns");
    } else if ns < 1_000_000 {
        (n / 1e3, "µs")
    } else if ns < 1_000_000_000 {
        (n / 1e6, "ms")
    } else {
        (n / 1e9, "s")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// A fraction as a whole percentage, never claiming 100% or 0% for what is not.
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if (p > 99.0 && p < 100.0) || (p > 0.0 && p < 1.0) {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy-engine words come from the same value as the threads' words: one reason,
    /// two vocabularies, the same figures.
    #[test]
    fn one_reason_reads_in_either_vocabulary_with_the_same_figures() {
        let r = Reason::Parallelism { value: 1.02, of: 2 };
        let threads = r.text(Workers::Threads);
        let engines = r.text(Workers::CopyEngines);
        assert!(
            threads.starts_with("effective parallelism 1.02 of 2 threads"),
            "{threads}"
        );
        assert!(
            engines.starts_with("effective parallelism 1.02 of 2 copy engines"),
            "{engines}"
        );
        assert!(
            threads.contains("51%") && engines.contains("51%"),
            "{threads} / {engines}"
        );
        assert!(
            !engines.contains("CPU") && !engines.contains("thread"),
            "{engines}"
        );
        let late = Reason::NeverTogether {
            late: "d2h".into(),
            gap_ns: 41_000_000,
            ended: "h2d".into(),
        };
        assert_eq!(
            late.text(Workers::CopyEngines),
            "direction d2h started 41.0 ms after direction h2d ended: they never ran together"
        );
    }

    #[test]
    fn an_untyped_note_is_its_text_and_a_typed_one_is_worded_here() {
        assert_eq!(Note::untyped("as stored").text(), "as stored");
        let n = Note::unsupported(
            "counters",
            vec!["cycles".into(), "instructions".into()],
            "no PMU",
        );
        assert_eq!(
            n.text(),
            "counters: cycles, instructions unsupported: no PMU"
        );
        assert_eq!(n.severity, Severity::Caveat);
    }

    /// Every kind a note is stored as reads back as the same value.
    #[test]
    fn stored_notes_read_back_as_the_values_they_were() {
        for n in [
            Note::unsupported(
                "counters",
                vec!["cycles".into(), "ref-cycles".into()],
                "ENOENT: no PMU",
            ),
            Note::unsupported(
                "counters-cpu",
                vec!["LLC-load-misses".into()],
                "not supported",
            ),
            Note::user_only("counters", "perf_event_paranoid is 2"),
            Note::span_skipped(
                "trace",
                vec!["kvm:kvm_set_irq".into(), "kvm:kvm_msi_set_irq".into()],
                "netrx.vhost_irq",
            ),
            Note::guest_emulated("/dev/kvm is missing"),
            Note::net_path("host:127.0.0.1", "udp 64 B, closed loop"),
        ] {
            assert_eq!(Note::from_stored(&n.text()), n, "{}", n.text());
            assert!(n.about().is_some());
        }
        for old in [
            "summing per-thread bandwidths is valid: 2 threads: aggregate 1 MiB/s",
            "path with space: not a path note",
            "no colon at all",
        ] {
            let n = Note::from_stored(old);
            assert_eq!((n.text().as_str(), n.about()), (old, None));
        }
    }

    /// A TCG note as runs stored it before its tail was added reads as the same kind.
    #[test]
    fn a_short_tcg_note_is_still_an_emulated_guest() {
        let n = Note::from_stored(
            "the guest runs under TCG (software emulation, because /dev/kvm is missing)",
        );
        assert_eq!(n, Note::guest_emulated("/dev/kvm is missing"));
    }

    #[test]
    fn durations_and_shares_read_naturally() {
        assert_eq!(duration_text(850), "850 ns");
        assert_eq!(duration_text(12_400), "12.4 µs");
        assert_eq!(duration_text(1_250_000_000), "1.25 s");
        assert_eq!(percent(0.995), "99.5%");
        assert_eq!(percent(0.004), "0.4%");
    }
}
