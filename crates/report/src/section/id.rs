//! The ids sections are selected by (`--section`) and keyed by in JSON: one enum, so a
//! view, a list of a command's sections and a test name the same section the same way,
//! and a misspelt id is a compile error rather than a section that is never printed.

use std::fmt;

/// A section's id. Its text ([`SectionId::as_str`]) is what `--section` takes and what
/// JSON is keyed by; it never changes once released (scripts read it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectionId {
    // Tables of a run and of a comparison (`show`, `compare`, the end of `run`).
    Summary,
    Threads,
    LockWait,
    /// A table of a run registered in `crate::tables::PER_RUN` (one line there), by its
    /// `TableId`'s text: the id names no type of `tables`, which names this one.
    Table(&'static str),
    Latency,
    Percentiles,
    Spans,
    Comparison,
    Scan,
    Distribution,
    Changed,
    Telemetry,
    // Parts of `report` and the lines views print around their tables.
    Environment,
    Runs,
    Quality,
    HowToRead,
    Report,
    Title,
    Run,
    SetupDifferences,
    // `doctor` and `list`.
    Checks,
    Studies,
    Workloads,
    Monitors,
    Parsers,
    Knobs,
    // `history`.
    Series,
    Events,
    History,
}

impl SectionId {
    /// The id as `--section` and JSON spell it.
    pub const fn as_str(self) -> &'static str {
        use SectionId::*;
        match self {
            Summary => "summary",
            Threads => "threads",
            LockWait => "lock-wait",
            Table(t) => t,
            Latency => "latency",
            Percentiles => "percentiles",
            Spans => "spans",
            Comparison => "comparison",
            Scan => "scan",
            Distribution => "distribution",
            Changed => "changed",
            Telemetry => "telemetry",
            Environment => "environment",
            Runs => "runs",
            Quality => "quality",
            HowToRead => "how-to-read",
            Report => "report",
            Title => "title",
            Run => "run",
            SetupDifferences => "setup_differences",
            Checks => "checks",
            Studies => "studies",
            Workloads => "workloads",
            Monitors => "monitors",
            Parsers => "parsers",
            Knobs => "knobs",
            Series => "series",
            Events => "events",
            History => "history",
        }
    }
}

impl fmt::Display for SectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The texts of `ids`, for the lists of ids a command's `--section` takes (which the
/// binary checks its flags against as text).
pub const fn names<const N: usize>(ids: [SectionId; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = ids[i].as_str();
        i += 1;
    }
    out
}
