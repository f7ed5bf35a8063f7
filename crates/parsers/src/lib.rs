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

use perflab_core::{HistogramData, Metric};

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
}

/// A parser: its name as users type it, what it reads, and the function.
pub struct ParserInfo {
    pub name: &'static str,
    pub help: &'static str,
    pub parse: fn(&str) -> Result<Parsed, ParseError>,
}

static REGISTRY: [ParserInfo; 9] = [
    ParserInfo {
        name: "perf-stat",
        help: "perf stat output, `-x,` CSV or the default text (events, multiplexing \
               percentage, time elapsed); <not supported>/<not counted> events become notes",
        parse: perf_stat::parse,
    },
    ParserInfo {
        name: "sockperf",
        help: "sockperf ping-pong / under-load client output: average, stddev and \
               percentile latency in µs, message counts",
        parse: sockperf::parse,
    },
    ParserInfo {
        name: "fio",
        help: "fio --output-format=json: per direction bandwidth, IOPS, completion latency \
               percentiles; one row per job when there are several (--group_reporting \
               gives one result)",
        parse: fio::parse,
    },
    ParserInfo {
        name: "iperf3",
        help: "iperf3 -J client output: sender/receiver throughput, retransmits, UDP jitter \
               and loss; one row per stream with -P",
        parse: iperf3::parse,
    },
    ParserInfo {
        name: "cyclictest",
        help: "cyclictest summary lines (T: ... Min: Act: Avg: Max:) or --histogram output: \
               one row per thread, overall min/avg/max latency (µs unless run with -N)",
        parse: cyclictest::parse,
    },
    ParserInfo {
        name: "hyperfine",
        help: "hyperfine --export-json file: every run of each command as a repetition \
               (time_ms); one command also gives hyperfine's mean, stddev, median, min, \
               max (ms)",
        parse: hyperfine::parse,
    },
    ParserInfo {
        name: "perf-bench",
        help: "perf bench (default format) sched pipe/messaging: time per op, ops/s; \
               mem memcpy/memset: MiB/s (or cycles/byte with -c) per function",
        parse: perf_bench::parse,
    },
    ParserInfo {
        name: "dmatest",
        help: "kernel dmatest summary lines from dmesg or a /dev/kmsg dump: one row per \
               thread with tests, failures, IOPS and MiB/s; unreadable dmatest lines are \
               skipped with a note",
        parse: dmatest::parse,
    },
    ParserInfo {
        name: "seed-scan",
        help: "a Markdown-style size scan table (| buff kb | version A | version B |): \
               one row per size and column, bandwidth in MiB/s",
        parse: seed_scan::parse,
    },
];

/// `perf bench` output in the default format, for callers that know what they ran.
pub fn parse_perf_bench(text: &str) -> Result<Parsed, ParseError> {
    perf_bench::parse(text)
}

/// Every built-in parser.
pub fn registry() -> &'static [ParserInfo] {
    &REGISTRY
}

pub fn names() -> Vec<&'static str> {
    registry().iter().map(|p| p.name).collect()
}

pub fn by_name(name: &str) -> Option<&'static ParserInfo> {
    registry().iter().find(|p| p.name == name)
}
