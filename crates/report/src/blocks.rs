//! Every report table as blocks (see [`crate::doc`]), so that `perflab report` renders
//! them for the terminal, Markdown, mail and HTML from one description. The words and
//! figures are those of each table's own text rendering.

use crate::compare::ComparisonTable;
use crate::counters::CounterTable;
use crate::distribution::Distribution;
use crate::doc::{Block, Table};
use crate::fmt;
use crate::latency_table::LatencyTable;
use crate::parallel::{ParallelTable, TITLE, UNITS, WHY};
use crate::scan::ScanReport;
use crate::scan_render;
use crate::summary::SummaryTable;
use crate::summary_text;
use crate::table_text::{
    cells, footnotes, header_lines, row_notes, unavailable_items, unmatched_items,
};

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
        let mut out = vec![para_lines(&header_lines(self)), table(lines, left)];
        let notes = footnotes(self);
        if !notes.is_empty() {
            out.push(para_lines(&notes));
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
        let mut out = vec![para_lines(&scan_render::header(self))];
        for s in &self.sections {
            out.push(Block::heading(3, s.title.clone()));
            let (head, units, rows) = scan_render::cells(self, s);
            out.push(Block::Table(Table {
                head,
                units,
                rows,
                left: vec![scan_render::LEFT],
            }));
            out.push(Block::para(scan_render::summary_line(self, &s.summary)));
            out.push(Block::list("Not compared", scan_render::not_compared(s)));
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
    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![Block::para(format!(
            "{}; * = significant, adjusted p < {}",
            self.headline(),
            self.alpha
        ))];
        let rows = self.bucket_rows();
        let head = ["regression %", "instances", "significant", "rows"]
            .map(String::from)
            .to_vec();
        out.push(Block::Table(Table::new(head, rows, vec![0, 3])));
        if !self.unclassified.is_empty() {
            out.push(Block::para(format!(
                "Not classified (baseline median 0, change in percent undefined): {}",
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
            out.push(Block::para(legend));
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
            Block::para(TITLE),
            table(self.cells(), vec![0, 1, 9]),
            Block::para(UNITS),
            Block::list(WHY, self.reasons()),
        ]
    }
}

impl CounterTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        vec![
            Block::para(self.title()),
            table(self.cells(), vec![0, 1]),
            Block::list("Notes", &self.notes),
        ]
    }
}

impl LatencyTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        let mut intro = format!("Round trips in µs (run {}", self.run);
        if !self.fixed.is_empty() {
            intro.push_str(&format!(", {}", self.fixed));
        }
        intro.push_str("); reps = successful/planned; lost = requests without a reply");
        let mut out = vec![Block::para(intro)];
        let mut approximate = false;
        for s in &self.sections {
            if !s.title.is_empty() {
                out.push(Block::heading(3, s.title.clone()));
            }
            let head = [
                "path",
                "load",
                "p50",
                "p99",
                "p99.9",
                "max",
                "reps",
                "lost",
                "NET_RX/s",
                "load MiB/s",
            ]
            .map(String::from)
            .to_vec();
            let mut rows = Vec::new();
            let mut failures = Vec::new();
            for r in &s.rows {
                if r.reps == 0 {
                    failures.push(format!(
                        "{} {}: failed ({}): {}",
                        r.path,
                        r.load,
                        r.failed,
                        r.error.as_deref().unwrap_or("no measurement")
                    ));
                    continue;
                }
                approximate |= r.approximate;
                let mark = if r.approximate { "*" } else { "" };
                let opt = |x: Option<f64>, d: usize| x.map_or("-".into(), |v| format!("{v:.d$}"));
                rows.push(vec![
                    r.path.clone(),
                    r.load.clone(),
                    format!("{}{mark}", fmt::value(r.p50)),
                    format!("{}{mark}", fmt::value(r.p99)),
                    format!("{}{mark}", fmt::value(r.p999)),
                    fmt::value(r.max),
                    format!("{}/{}", r.reps, r.reps + r.failed),
                    fmt::count(r.lost),
                    opt(r.net_rx_per_s, 0),
                    opt(r.load_mib_s, 1),
                ]);
            }
            out.push(Block::Table(Table::new(head, rows, vec![0, 1])));
            out.push(Block::list("Failed", failures));
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
}
