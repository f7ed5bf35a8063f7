//! Every report table as blocks (see [`crate::doc`]), so that `perflab report` renders
//! them for the terminal, Markdown, mail and HTML from one description. The words and
//! figures are those of each table's own text rendering.

use crate::doc::{Block, Table};
use crate::fmt;
use crate::section::Section;
use crate::section::SectionId;
use crate::spans::ab::SpanComparison;
use crate::spans::seed::SeedSpanTable;
use crate::spans::SpanTable;
use crate::tables::compare::changed::RowChanges;
use crate::tables::compare::text::{
    cells, footnotes, header_lines, row_notes, unavailable_items, unmatched_items,
};
use crate::tables::compare::ComparisonTable;
use crate::tables::distribution::{BucketCount, Distribution};
use crate::tables::latency::{LatencyRow, LatencySection, LatencyTable};
use crate::tables::lock_wait::LockWaitTable;
use crate::tables::parallel::{ParallelTable, TITLE, UNITS, WHY};
use crate::tables::percentiles::PercentileTable;
use crate::tables::scan::text as scan_text;
use crate::tables::scan::ScanReport;
use crate::tables::summary::text as summary_text;
use crate::tables::summary::SummaryTable;

/// The title of the list of variants a run could not measure.
pub const UNAVAILABLE: &str = "Variants not measured on this machine";

/// A table from aligned-text lines whose first line is the header.
fn table(mut lines: Vec<Vec<String>>, left: Vec<usize>) -> Block {
    let head = if lines.is_empty() {
        Vec::new()
    } else {
        lines.remove(0)
    };
    Block::Table(Table::new(head, lines, left))
}

fn para_lines<S: AsRef<str>>(lines: &[S]) -> Block {
    Block::para(
        lines
            .iter()
            .map(|l| l.as_ref())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

impl ComparisonTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        let (lines, left) = cells(self);
        let mut out = vec![para_lines(&header_lines(self))];
        // A table of no row is a header alone; the header lines say why.
        if !self.rows.is_empty() {
            out.push(table(lines, left));
        }
        let notes = footnotes(self);
        if !notes.is_empty() {
            out.push(Block::note(notes.join("\n")));
        }
        out.push(Block::list("Not compared", unmatched_items(self)));
        out.push(Block::list(
            "Notes",
            self.notes.iter().cloned().chain(row_notes(self)),
        ));
        out.push(Block::list(
            UNAVAILABLE,
            unavailable_items(&self.unavailable),
        ));
        out
    }
}

impl ScanReport {
    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![para_lines(&scan_text::header(self))];
        for s in &self.sections {
            out.push(Block::caption(s.title.clone()));
            let (head, units, rows) = scan_text::cells(self, s);
            out.push(Block::Table(Table {
                head,
                units,
                rows,
                left: vec![scan_text::LEFT],
            }));
            out.push(Block::note(scan_text::summary_line(self, &s.summary)));
            out.push(Block::list("Not compared", scan_text::not_compared(s)));
            out.push(Block::list("Notes", &s.notes));
        }
        out.push(Block::list("Not in the scan", &self.outside));
        out.push(Block::list("Notes", &self.notes));
        out.push(Block::list(
            UNAVAILABLE,
            unavailable_items(&self.unavailable),
        ));
        out
    }
}

impl Distribution {
    /// The seed's `<= 1 pct difference : 35 instances` lines for the buckets that hold
    /// rows, regressions then improvements, each with how its rows read and which rows
    /// they are (`*` better/worse, `=` same, `?` undecided); the empty buckets are one
    /// line, not one each.
    pub fn to_blocks(&self) -> Vec<Block> {
        let line = |c: &BucketCount| {
            let parts: Vec<String> = [
                (c.significant, "moved"),
                (c.same, "same"),
                (c.undecided, "undecided"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            format!(
                "{} pct difference : {} instances ({}): {}",
                c.bucket.range_text(),
                c.count,
                parts.join(", "),
                self.marked(c)
            )
        };
        let mut counts = vec![format!(
            "{} (* better/worse, = same, ? undecided)",
            self.headline()
        )];
        let held: Vec<&BucketCount> = self
            .regressions
            .iter()
            .chain(&self.improvements)
            .filter(|c| c.count > 0)
            .collect();
        counts.extend(held.iter().map(|c| line(c)));
        let empty = self.regressions.len() + self.improvements.len() - held.len();
        if empty > 0 {
            counts.push(format!("the other {empty} buckets : 0 instances"));
        }
        let mut out = vec![Block::pre(counts.join("\n"))];
        if !self.unclassified.is_empty() {
            out.push(Block::para(format!(
                "Not classified (void: tested nothing; or a baseline median of 0, where a \
                 change in percent is undefined): {}",
                self.unclassified.join(" ")
            )));
        }
        out.push(Block::list("Not compared", &self.unmatched));
        out.push(Block::list(
            UNAVAILABLE,
            unavailable_items(&self.unavailable),
        ));
        out
    }
}

impl SummaryTable {
    /// The summary; `show_variant` adds the variant column (several variants).
    pub fn to_blocks(&self, show_variant: bool) -> Vec<Block> {
        let (lines, left) = summary_text::rows_cells(self, show_variant);
        let mut out = vec![
            Block::para(summary_text::header(self).trim_end().to_string()),
            table(lines, left),
        ];
        if let Some(legend) = summary_text::spread_legend(self) {
            out.push(Block::note(legend));
        }
        out.push(Block::list(
            "Per row",
            summary_text::row_note_items(self, show_variant),
        ));
        out.push(Block::list("Notes", &self.notes));
        out.push(Block::list(
            UNAVAILABLE,
            unavailable_items(&self.unavailable),
        ));
        out
    }
}

impl ParallelTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        vec![
            Block::para(if self.copy_engines {
                crate::tables::parallel::gpu_words::TITLE
            } else {
                TITLE
            }),
            table(self.cells(), vec![0, 1, 9]),
            Block::note(if self.copy_engines {
                crate::tables::parallel::gpu_words::UNITS
            } else {
                UNITS
            }),
            Block::list(WHY, self.reasons()),
        ]
    }
}

impl LatencyTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![Block::para(self.intro())];
        let mut approximate = false;
        for s in &self.sections {
            approximate |= s.rows.iter().any(|r| r.reps > 0 && r.approximate);
            out.extend(latency_section_blocks(s));
        }
        if approximate {
            out.push(Block::para(
                "* no histogram to pool: median of the repetitions' percentiles",
            ));
        }
        out.push(Block::list(
            UNAVAILABLE,
            self.unavailable
                .iter()
                .map(|(v, why)| format!("{v}: {why}")),
        ));
        out.push(Block::list(
            "Path notes",
            self.path_notes.iter().map(|(v, n)| format!("{v}: {n}")),
        ));
        out
    }

    /// What the figures are, of which run, with the parameters fixed throughout.
    fn intro(&self) -> String {
        let mut intro = format!("Round trips in µs (run {}", self.run);
        if !self.fixed.is_empty() {
            intro.push_str(&format!(", {}", self.fixed));
        }
        intro.push_str(
            "); reps = successful/planned; lost = requests without a reply; every column \
             is of all repetitions' round trips pooled, so a repetition with more round \
             trips weighs more: the comparisons' medians are per repetition (the median of \
             each repetition's figure) and differ from these where repetitions differ",
        );
        intro
    }
}

/// The latency table's columns: the seed's, in its order.
const LATENCY_HEAD: [&str; 14] = [
    "path",
    "load",
    "min",
    "avg",
    "max",
    "stddev",
    "p50",
    "p99",
    "p99.9",
    "reps",
    "lost",
    "NET_RX/s",
    "NET_TX/s",
    "load MiB/s",
];

/// One section of the latency table: its heading, the measured rows, then the rows
/// without a successful repetition as a list of failures.
fn latency_section_blocks(s: &LatencySection) -> Vec<Block> {
    let mut out = Vec::new();
    if !s.title.is_empty() {
        out.push(Block::heading(3, s.title.clone()));
    }
    let (measured, failed): (Vec<&LatencyRow>, Vec<&LatencyRow>) =
        s.rows.iter().partition(|r| r.reps > 0);
    let head = LATENCY_HEAD.map(String::from).to_vec();
    let rows = measured.into_iter().map(latency_cells).collect();
    out.push(Block::Table(Table::new(head, rows, vec![0, 1])));
    out.push(Block::list(
        "Failed",
        failed.into_iter().map(latency_failure),
    ));
    out
}

/// A measured row's cells; percentiles read from summaries rather than pooled
/// histograms are starred.
fn latency_cells(r: &LatencyRow) -> Vec<String> {
    let mark = if r.approximate { "*" } else { "" };
    let opt = |x: Option<f64>, d: usize| x.map_or("-".into(), |v| format!("{v:.d$}"));
    vec![
        r.path.clone(),
        r.load.clone(),
        fmt::value(r.min),
        fmt::value(r.avg),
        fmt::value(r.max),
        fmt::value(r.stddev),
        format!("{}{mark}", fmt::value(r.p50)),
        format!("{}{mark}", fmt::value(r.p99)),
        format!("{}{mark}", fmt::value(r.p999)),
        format!("{}/{}", r.reps, r.reps + r.failed),
        fmt::count(r.lost),
        opt(r.net_rx_per_s, 0),
        opt(r.net_tx_per_s, 0),
        opt(r.load_mib_s, 1),
    ]
}

/// A row without a successful repetition, as one line of the failures list.
fn latency_failure(r: &LatencyRow) -> String {
    format!(
        "{} {}: failed ({}): {}",
        r.path,
        r.load,
        r.failed,
        r.error.as_deref().unwrap_or("no measurement")
    )
}

/// The rows a report names with the telemetry that moved with them; the rest are counted.
const MOVED_NAMED: usize = 2;

/// The telemetry changes a report names per row; `compare --section changed` has all.
const CHANGES_NAMED: usize = 2;

/// What changed with each significant row of a comparison: the telemetry on the CPUs
/// involved that moved most between A and B.
#[derive(Clone, Debug, PartialEq)]
pub struct Changes(pub Vec<RowChanges>);

impl Changes {
    /// [`Changes::to_blocks`] for a report, one paragraph: the first [`MOVED_NAMED`] rows
    /// whose telemetry moved, each with its first [`CHANGES_NAMED`] changes, the other
    /// such rows counted, and the rows where nothing moved counted (they are the
    /// significant rows of the tables above less those named). Which rows' telemetry
    /// moved is noise, run to run: a mail's length should not be (issue 34 item 3);
    /// `compare`'s section `changed` and the JSON have every row.
    pub fn report_blocks(&self) -> Vec<Block> {
        let (moved, still): (Vec<&RowChanges>, Vec<&RowChanges>) =
            self.0.iter().partition(|c| !c.changes.is_empty());
        let mut parts: Vec<String> = moved
            .iter()
            .take(MOVED_NAMED)
            .map(|c| item(c, CHANGES_NAMED, ", "))
            .collect();
        if moved.len() > MOVED_NAMED {
            parts.push(format!(
                "{} more rows whose telemetry moved (compare's section `changed` lists each)",
                moved.len() - MOVED_NAMED
            ));
        }
        match (still.as_slice(), moved.is_empty()) {
            ([], _) => {}
            ([one], _) => parts.push(item(one, 0, ", ")),
            (_, true) => parts.push(format!(
                "on the CPUs of the {} significant rows, no telemetry row changed \
                 consistently",
                still.len()
            )),
            (_, false) => parts.push(format!(
                "on the CPUs of the other {} significant rows, none changed consistently",
                still.len()
            )),
        }
        if parts.is_empty() {
            return Vec::new();
        }
        if moved.is_empty() {
            return vec![Block::para(format!(
                "What changed with it: {}",
                parts.join("; ")
            ))];
        }
        vec![Block::para(format!(
            "What changed with it (the telemetry that moved most on the CPUs of each \
             significant row, medians): {}",
            parts.join("; ")
        ))]
    }

    /// One line per row: its change and the telemetry that moved with it.
    fn items(&self) -> impl Iterator<Item = String> + '_ {
        self.0.iter().map(|c| item(c, usize::MAX, "; "))
    }

    pub fn to_blocks(&self) -> Vec<Block> {
        if self.0.is_empty() {
            return Vec::new();
        }
        let items = self.items();
        vec![
            Block::heading(3, "What changed with it"),
            Block::para(
                "For each significant difference, the telemetry on the CPUs involved that \
                 changed most between A and B (medians over the repetitions):",
            ),
            Block::list("Significant rows", items),
        ]
    }
}

/// A row, its change, and the first `limit` telemetry changes that moved with it (`N
/// more` past them), joined by `sep`.
fn item(c: &RowChanges, limit: usize, sep: &str) -> String {
    let mut what: Vec<String> = c
        .changes
        .iter()
        .take(limit)
        .map(|x| format!("{} (p={})", x.text, perflab_stats::fmt_p(x.p_value)))
        .collect();
    if c.changes.len() > limit {
        what.push(format!("{} more", c.changes.len() - limit));
    }
    let what = if c.changes.is_empty() {
        "no telemetry row on these CPUs changed consistently".to_string()
    } else {
        what.join(sep)
    };
    let change = c
        .change_pct
        .map_or(String::new(), |x| format!("{} ", fmt::pct(x)));
    format!("{} ({change}{}): {what}", c.name(), c.verdict)
}

/// A table as a section: its id, its title, and its blocks and JSON as they are.
macro_rules! section {
    ($t:ty, $id:ident, |$s:ident| $title:expr, |$b:ident| $blocks:expr) => {
        impl Section for $t {
            fn id(&self) -> SectionId {
                SectionId::$id
            }
            fn title(&self) -> String {
                let $s = self;
                $title
            }
            fn blocks(&self) -> Vec<Block> {
                let $b = self;
                $blocks
            }
            fn json(&self) -> Option<serde_json::Value> {
                serde_json::to_value(self).ok()
            }
        }
    };
}

section!(SummaryTable, Summary, |t| format!("Run {}", t.run), |t| t
    .to_blocks(true));
section!(
    ComparisonTable,
    Comparison,
    |t| format!("{}: {} vs {}", t.metric, t.b_label, t.a_label),
    |t| t.to_blocks()
);
section!(
    ScanReport,
    Scan,
    |t| format!("{} by {}: {} vs {}", t.metric, t.axis, t.b_label, t.a_label),
    |t| t.to_blocks()
);
section!(
    Distribution,
    Distribution,
    |t| format!("Regression of {}", t.metric),
    |t| t.to_blocks()
);
section!(
    ParallelTable,
    Threads,
    |_t| "Threads: may the bandwidths be summed?".into(),
    |t| t.to_blocks()
);
section!(
    LockWaitTable,
    LockWait,
    |_t| "Descriptor-lock waits".into(),
    |t| t.to_blocks()
);
section!(
    LatencyTable,
    Latency,
    |t| format!("Round trips of run {}", t.run),
    |t| t.to_blocks()
);
section!(
    PercentileTable,
    Percentiles,
    |_t| "Latency percentiles".into(),
    |t| t.to_blocks()
);
section!(
    SpanTable,
    Spans,
    |t| format!("Trace spans of run {}", t.run),
    |t| t.to_blocks()
);
section!(
    SeedSpanTable,
    Spans,
    |t| format!("Where the time goes (run {})", t.run),
    |t| t.to_blocks()
);
section!(
    SpanComparison,
    Spans,
    |t| format!("Spans: {}", t.title),
    |t| t.to_blocks()
);

impl Section for Changes {
    fn id(&self) -> SectionId {
        SectionId::Changed
    }
    fn title(&self) -> String {
        "What changed with it".into()
    }
    fn blocks(&self) -> Vec<Block> {
        self.to_blocks()
    }
    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(&self.0).ok()
    }
}
