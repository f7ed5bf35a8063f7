//! Parsers of the output of benchmark tools perflab wraps (`exec`) or imports: each a pure
//! function from text to metrics, tested on output captured from the real tool.

use perflab_core::{HistogramData, Metric};

/// What a parser found in one tool's output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<HistogramData>,
    /// Rows of a table that holds several measurements (e.g. a scan table: one row per
    /// buffer size): each row's parameters and metrics. Empty for single-result output.
    pub rows: Vec<ParsedRow>,
}

/// One row of a multi-measurement output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedRow {
    /// Parameters that identify the row, as text (`size` = `32768`).
    pub params: Vec<(String, String)>,
    /// A column label when the table has one column per side (e.g. a software version).
    pub series: Option<String>,
    pub metrics: Vec<Metric>,
}

/// Why output could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is not this tool's output (e.g. fio's JSON given to the iperf3 parser).
    #[error("this is not {tool} output: {why}")]
    NotThisTool { tool: &'static str, why: String },
    #[error("{tool} output, line {line}: {why}")]
    Bad {
        tool: &'static str,
        line: usize,
        why: String,
    },
}

/// A parser: its name as users type it, what it reads, and the function.
pub struct ParserInfo {
    pub name: &'static str,
    pub help: &'static str,
    pub parse: fn(&str) -> Result<Parsed, ParseError>,
}

/// Every built-in parser.
pub fn registry() -> &'static [ParserInfo] {
    &[]
}

pub fn names() -> Vec<&'static str> {
    registry().iter().map(|p| p.name).collect()
}

pub fn by_name(name: &str) -> Option<&'static ParserInfo> {
    registry().iter().find(|p| p.name == name)
}
