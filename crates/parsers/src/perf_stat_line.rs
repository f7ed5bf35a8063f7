//! One `perf stat` event line, whichever format (CSV or text) it came from, and the
//! checks both readers make on its columns: shared by `perf_stat_csv`, `perf_stat_text`
//! and `perf_stat` (which decides what becomes a metric), in a file of its own so that
//! the readers and the parser do not import each other.

pub(crate) const TOOL: &str = "perf-stat";

/// Why perf printed no count for an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missing {
    /// The PMU or kernel lacks the event (a VM without a virtual PMU, a wrong CPU model).
    NotSupported,
    /// The event existed but never got a counter (multiplexed out, or the command ended first).
    NotCounted,
}

/// One event line, whichever format it came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EventLine {
    pub line: usize,
    pub event: String,
    pub unit: String,
    pub value: Result<f64, Missing>,
    /// Share of the run the event was on a counter; below 100 means perf scaled the count.
    pub running_pct: Option<f64>,
    /// With -r: the relative standard deviation over the runs.
    pub rel_stddev_pct: Option<f64>,
}

/// The summary lines of the text format (the CSV format has none).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Times {
    pub elapsed_s: Option<f64>,
    pub elapsed_stddev_s: Option<f64>,
    pub user_s: Option<f64>,
    pub sys_s: Option<f64>,
}

/// An event name as perf prints one: a letter first, no spaces.
pub(crate) fn is_event_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && !s.chars().any(char::is_whitespace)
}

/// A unit column entry: empty, or a word such as `msec` or `Joules`.
pub(crate) fn is_unit(s: &str) -> bool {
    !s.chars().any(|c| c.is_ascii_digit() || c.is_whitespace())
}
