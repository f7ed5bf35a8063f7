//! `sockperf ping-pong` / `under-load` client output. The summary is coloured with ANSI
//! escapes even when piped, and every line carries a `sockperf: ` prefix:
//!
//! ```text
//! sockperf: ========= Printing statistics for Server No: 0
//! sockperf: [Valid Duration] RunTime=1.550 sec; SentMessages=80792; ReceivedMessages=80792
//! sockperf: ====> avg-latency=9.580 (std-dev=5.159)
//! sockperf: # dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0
//! sockperf: Total 80792 observations; each percentile contains 807.92 observations
//! sockperf: ---> <MAX> observation =  693.366
//! sockperf: ---> percentile 99.999 =  665.544
//! ```
//!
//! With --full-rtt the figures are round trips (`avg-rtt`), not half round trips, so the
//! metrics are named `rtt_*` rather than `latency_*`: the two must never be compared.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};

use crate::error::ParseError;
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this, num, percentile_name, shown, strip_ansi, word_after};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "sockperf",
    help: "sockperf ping-pong / under-load client output: average, stddev and \
           percentile latency in µs, message counts",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "sockperf";

struct Section {
    server: String,
    kind: &'static str,
    metrics: Vec<Metric>,
    has_summary: bool,
}

impl Section {
    fn new(server: &str) -> Self {
        Self {
            server: server.to_string(),
            kind: "latency",
            metrics: Vec::new(),
            has_summary: false,
        }
    }

    fn us(&mut self, what: &str, v: f64) {
        let name = format!("{}_{what}_us", self.kind);
        self.metrics
            .push(metric(name, v, Unit::Microseconds, Better::Lower));
    }
}

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let clean = strip_ansi(text);
    if !clean
        .lines()
        .any(|l| l.trim_start().starts_with("sockperf"))
    {
        return Err(not_this(TOOL, "no line starts with \"sockperf\""));
    }
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in clean.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        let Some(line) = line.strip_prefix("sockperf:") else {
            continue;
        };
        let line = line.trim();
        let err = |why: &str| bad(TOOL, line_no, format!("{why} in {}", shown(raw)));
        if let Some(rest) = line.split_once("Printing statistics for Server No:") {
            sections.push(Section::new(rest.1.trim()));
            continue;
        }
        let is_stat = line.starts_with("[Valid Duration]")
            || line.starts_with("====>")
            || line.starts_with("# dropped messages")
            || line.starts_with("Total ")
            || line.starts_with("--->");
        if !is_stat {
            continue;
        }
        if sections.is_empty() {
            sections.push(Section::new("0"));
        }
        let Some(s) = sections.last_mut() else {
            continue;
        };
        read_stat(s, line, &err)?;
    }
    into_parsed(sections, clean.lines().count())
}

/// One statistics line of the current server's section.
fn read_stat(
    s: &mut Section,
    line: &str,
    err: &dyn Fn(&str) -> ParseError,
) -> Result<(), ParseError> {
    if line.starts_with("[Valid Duration]") {
        for (key, name, unit) in [
            ("RunTime=", "valid_run_time_s", Unit::Seconds),
            ("SentMessages=", "sent_messages", Unit::Count),
            ("ReceivedMessages=", "received_messages", Unit::Count),
        ] {
            let v = value_after(line, key).ok_or_else(|| err(&format!("no number after {key}")))?;
            s.metrics.push(metric(name, v, unit, Better::Neither));
        }
    } else if let Some(rest) = line.strip_prefix("====>") {
        let (kind, avg) = rest
            .trim()
            .strip_prefix("avg-")
            .and_then(|r| r.split_once('='))
            .ok_or_else(|| err("no avg-<kind>=<value>"))?;
        s.kind = if kind.trim() == "rtt" {
            "rtt"
        } else {
            "latency"
        };
        let avg = avg
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()
            .and_then(num)
            .ok_or_else(|| err("no average"))?;
        s.us("avg", avg);
        s.has_summary = true;
        if let Some(sd) = value_after(line, "std-dev=") {
            s.us("stddev", sd);
        }
    } else if line.starts_with("# dropped messages") {
        for (key, name) in [
            ("# dropped messages =", "dropped_messages"),
            ("# duplicated messages =", "duplicated_messages"),
            ("# out-of-order messages =", "out_of_order_messages"),
        ] {
            let v = value_after(line, key).ok_or_else(|| err(&format!("no number after {key}")))?;
            s.metrics.push(metric(name, v, Unit::Count, Better::Lower));
        }
    } else if let Some(rest) = line.strip_prefix("Total ") {
        if let Some(n) = rest.split_whitespace().next().and_then(num) {
            s.metrics
                .push(metric("observations", n, Unit::Count, Better::Neither));
        }
    } else if let Some(rest) = line.strip_prefix("--->") {
        let (label, value) = rest.split_once('=').ok_or_else(|| err("no '='"))?;
        let v = num(value).ok_or_else(|| err("no number after '='"))?;
        let label = label.trim();
        if label.starts_with("<MAX>") {
            s.us("max", v);
        } else if label.starts_with("<MIN>") {
            s.us("min", v);
        } else if let Some(p) = label.strip_prefix("percentile") {
            let p = percentile_name(p).ok_or_else(|| err("no percentile"))?;
            s.us(&p, v);
        } else {
            return Err(err("unknown observation label"));
        }
    }
    Ok(())
}

/// The sections with a summary: one as plain metrics, several as one row per server.
fn into_parsed(sections: Vec<Section>, line_count: usize) -> Result<Parsed, ParseError> {
    let sections: Vec<Section> = sections.into_iter().filter(|s| s.has_summary).collect();
    let mut out = Parsed::default();
    match sections.len() {
        0 => {
            return Err(bad(
                TOOL,
                line_count,
                "no latency summary (\"====> avg-latency=\"): only ping-pong and under-load \
                 client output is read, and a run that was cut short has none",
            ))
        }
        1 => {
            if let Some(s) = sections.into_iter().next() {
                out.metrics = s.metrics;
            }
        }
        _ => {
            out.rows = sections
                .into_iter()
                .map(|s| ParsedRow {
                    histograms: Vec::new(),
                    telemetry: Vec::new(),
                    params: vec![("server".to_string(), s.server)],
                    series: None,
                    metrics: s.metrics,
                })
                .collect()
        }
    }
    Ok(out)
}

/// The number right after `key`, ending at whitespace, ';' or ')'.
fn value_after(line: &str, key: &str) -> Option<f64> {
    let w = word_after(line, key)?;
    num(w.trim_end_matches([';', ')', ',']))
}
