//! What a parser found in one tool's output: single-result figures, or one row per
//! measurement (see the crate documentation for which).

use perflab_core::{HistogramData, Metric, TelemetryRow};

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
    /// The tool's own figures over a group of [`Parsed::rows`] (hyperfine's mean, stddev,
    /// user and system time of one command's runs): kept beside the rows, since some of
    /// them (user and system time) exist nowhere else.
    pub summaries: Vec<ParsedSummary>,
    /// Telemetry of single-result output, in the keys of the perflab monitor that reads
    /// the same thing: perf stat's counts as the `counters` monitor's rows (source
    /// `counters`, key the event name, the whole run: no CPU), so an imported perf stat
    /// has the counter tables of a run perflab measured.
    pub telemetry: Vec<TelemetryRow>,
    /// The roles of the parameters the rows carry (a scan table's size is the size axis):
    /// the imported run stores them, and the report finds parameters by them.
    pub param_roles: perflab_core::ParamRoles,
}

/// The tool's summary of the rows with these `params` and `series`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedSummary {
    pub params: Vec<(String, String)>,
    pub series: Option<String>,
    pub metrics: Vec<Metric>,
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
    /// Telemetry of this row alone (one of several perf stat outputs: its counts as the
    /// counters monitor's rows), as [`Parsed::telemetry`] is of single-result output.
    pub telemetry: Vec<TelemetryRow>,
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
