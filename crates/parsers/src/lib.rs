//! Parsers of the output of benchmark tools perflab wraps (`exec`) or imports: each a pure
//! function from text to metrics, tested on output captured from the real tool.
//!
//! Shape of a result: output that holds one measurement puts its figures in
//! [`Parsed::metrics`] and leaves `rows` empty. Output that holds several (fio jobs,
//! hyperfine commands, cyclictest threads, the rows of a scan table) gives one
//! [`ParsedRow`] each, and `metrics` then carries only figures that summarise all of them,
//! where such a figure means something (cyclictest's overall maximum latency does; a sum
//! of fio jobs' bandwidths would only if the jobs ran at the same time, which the output
//! does not say).

use perflab_core::{Descriptor, HistogramData, Metric, Registered, Registry};

mod cyclictest;
mod cyclictest_histogram;
mod cyclictest_thread;
mod dmatest;
pub mod dmatest_log;
mod fio;
mod hyperfine;
mod iperf3;
mod json;
mod perf_bench;
mod perf_stat;
mod perf_stat_csv;
mod perf_stat_line;
mod perf_stat_text;
mod plausible;
mod seed_scan;
mod sockperf;
mod text;

/// What a parser found in one tool's output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<HistogramData>,
    /// Rows of a table that holds several measurements (e.g. a scan table: one row per
    /// buffer size): each row's parameters and metrics. Empty for single-result output.
    pub rows: Vec<ParsedRow>,
    /// Remarks a person should see next to the numbers: events the tool could not count,
    /// jobs that reported errors, anything left out and why.
    pub notes: Vec<String>,
}

impl Parsed {
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }
}

/// One row of a multi-measurement output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedRow {
    /// Parameters that identify the row, as text (`size` = `32768`).
    pub params: Vec<(String, String)>,
    /// A column label when the table has one column per side (e.g. a software version).
    pub series: Option<String>,
    pub metrics: Vec<Metric>,
    /// Histograms of this row alone (a cyclictest thread's latencies), stored with its
    /// measurement; [`Parsed::histograms`] holds those of single-result output.
    pub histograms: Vec<HistogramData>,
}

impl ParsedRow {
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
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
    /// The output reads, but holds a figure that cannot be (a negative rate, a `nan`).
    #[error("{place}, {why}")]
    Impossible {
        tool: &'static str,
        place: String,
        why: String,
    },
}

/// A parser in the registry: its descriptor (declared in its own file) and the function.
/// It reads as its descriptor (`p.name`, `p.help`).
pub struct ParserInfo {
    pub descriptor: &'static Descriptor,
    pub parse: fn(&str) -> Result<Parsed, ParseError>,
}

impl ParserInfo {
    /// Parses `text` and refuses a result holding a figure its unit says cannot be: the
    /// way every caller that keeps the figures (import, exec) reads a tool's output.
    pub fn read(&self, text: &str) -> Result<Parsed, ParseError> {
        let parsed = (self.parse)(text)?;
        plausible::check(self.descriptor.name, &parsed)?;
        Ok(parsed)
    }
}

impl Registered for ParserInfo {
    fn descriptor(&self) -> &'static Descriptor {
        self.descriptor
    }
}

impl std::ops::Deref for ParserInfo {
    type Target = Descriptor;

    fn deref(&self) -> &Descriptor {
        self.descriptor
    }
}

// One line per parser, in the order `perflab list` shows them.
#[rustfmt::skip]
static REGISTRY: Registry<ParserInfo> = Registry::new(&[
    ParserInfo { descriptor: &perf_stat::DESCRIPTOR, parse: perf_stat::parse },
    ParserInfo { descriptor: &sockperf::DESCRIPTOR, parse: sockperf::parse },
    ParserInfo { descriptor: &fio::DESCRIPTOR, parse: fio::parse },
    ParserInfo { descriptor: &iperf3::DESCRIPTOR, parse: iperf3::parse },
    ParserInfo { descriptor: &cyclictest::DESCRIPTOR, parse: cyclictest::parse },
    ParserInfo { descriptor: &hyperfine::DESCRIPTOR, parse: hyperfine::parse },
    ParserInfo { descriptor: &perf_bench::DESCRIPTOR, parse: perf_bench::parse },
    ParserInfo { descriptor: &dmatest::DESCRIPTOR, parse: dmatest::parse },
    ParserInfo { descriptor: &seed_scan::DESCRIPTOR, parse: seed_scan::parse },
]);

/// `perf bench` output in the default format, for callers that know what they ran.
pub fn parse_perf_bench(text: &str) -> Result<Parsed, ParseError> {
    perf_bench::parse(text)
}

/// Every built-in parser.
pub fn registry() -> &'static [ParserInfo] {
    REGISTRY.entries()
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.names()
}

pub fn by_name(name: &str) -> Option<&'static ParserInfo> {
    REGISTRY.get(name)
}
