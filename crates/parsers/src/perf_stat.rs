//! `perf stat`: counter values per event, in either of its output formats. The event
//! lines are read by perf_stat_csv / perf_stat_text; what becomes a metric is decided here,
//! once for both.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use std::collections::HashSet;

use perflab_core::{Better, Metric, TelemetryRow, Unit};

/// The source of the counters monitor's rows, whose keys are perf's event names too.
const COUNTERS_SOURCE: &str = "counters";

use crate::error::ParseError;
use crate::parsed::Parsed;
use crate::perf_stat_line::{EventLine, Missing, Times, TOOL};
use crate::text::{bad, metric, not_this, snake};
use crate::{perf_stat_csv, perf_stat_runs, perf_stat_text};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "perf-stat",
    help: "perf stat output, `-x,` CSV or the default text (events, multiplexing \
           percentage, time elapsed); <not supported>/<not counted> events become notes; \
           several outputs in one file (runs appended, `-r` blocks) are repetitions",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let headers = perf_stat_text::header_lines(text);
    if !headers.is_empty() {
        let mut runs = Vec::new();
        for (i, &header) in headers.iter().enumerate() {
            let end = headers.get(i + 1).copied().unwrap_or(usize::MAX);
            let (events, times) = perf_stat_text::read(text, header, end)?;
            if events.is_empty() && times.elapsed_s.is_none() {
                return Err(bad(TOOL, header, "no counter lines after the header"));
            }
            runs.push((perf_stat_text::command(text, header), build(events, times)?));
        }
        return Ok(perf_stat_runs::join(runs));
    }
    let events = perf_stat_csv::read(text)?;
    if events.is_empty() {
        return Err(not_this(
            TOOL,
            "no \"Performance counter stats\" header and no `-x,` CSV counter lines",
        ));
    }
    let mut runs = Vec::new();
    for events in perf_stat_runs::split_csv(events)? {
        runs.push((String::new(), build(events, Times::default())?));
    }
    Ok(perf_stat_runs::join(runs))
}

/// Metric name and unit of an event from perf's unit column.
fn name_and_unit(event: &str, unit: &str) -> (String, Unit) {
    let base = snake(event);
    let (suffix, unit) = match unit {
        "msec" => ("ms".to_string(), Unit::Milliseconds),
        "ns" | "nsec" => ("ns".to_string(), Unit::Nanoseconds),
        "" => (String::new(), Unit::Count),
        other => (snake(other), Unit::Count),
    };
    if suffix.is_empty() || base.ends_with(&format!("_{suffix}")) {
        (base, unit)
    } else {
        (format!("{base}_{suffix}"), unit)
    }
}

/// An event's value, and how long it was counted and how much it varied where perf says.
/// The time on a counter is a share of the run: outside 0 to 100 the line is refused.
fn push_event(
    metrics: &mut Vec<Metric>,
    e: &EventLine,
    name: &str,
    unit: Unit,
    value: f64,
) -> Result<(), ParseError> {
    metrics.push(metric(name, value, unit, Better::Neither));
    if let Some(p) = e.running_pct {
        let running = format!("{}_running_pct", snake(&e.event));
        let p = crate::plausible::share(TOOL, e.line, &running, p)?;
        if p < 100.0 {
            metrics.push(metric(running, p, Unit::Percent, Better::Neither));
        }
    }
    if let Some(p) = e.rel_stddev_pct {
        metrics.push(metric(
            format!("{}_rel_stddev_pct", snake(&e.event)),
            p,
            Unit::Percent,
            Better::Lower,
        ));
    }
    Ok(())
}

fn build(events: Vec<EventLine>, times: Times) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut not_supported = Vec::new();
    let mut not_counted = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for e in events {
        if !seen.insert(e.event.clone()) {
            return Err(bad(
                TOOL,
                e.line,
                format!(
                    "event {} appears twice; per-CPU, per-cgroup or interval output \
                     (-A, --per-core, -G, -I) is not supported",
                    e.event
                ),
            ));
        }
        let (name, unit) = name_and_unit(&e.event, &e.unit);
        if name.is_empty() {
            return Err(bad(
                TOOL,
                e.line,
                format!("event name {:?} has no letters", e.event),
            ));
        }
        let value = match e.value {
            Ok(v) => v,
            Err(Missing::NotSupported) => {
                not_supported.push(e.event);
                continue;
            }
            Err(Missing::NotCounted) => {
                not_counted.push(e.event);
                continue;
            }
        };
        push_event(&mut out.metrics, &e, &name, unit, value)?;
        out.telemetry.push(TelemetryRow::new(
            COUNTERS_SOURCE,
            e.event.clone(),
            e.event.clone(),
            None,
            value,
            unit,
        ));
    }
    let seconds = [
        ("time_elapsed_s", times.elapsed_s),
        ("time_elapsed_stddev_s", times.elapsed_stddev_s),
        ("user_time_s", times.user_s),
        ("sys_time_s", times.sys_s),
    ];
    for (name, v) in seconds {
        if let Some(v) = v {
            out.metrics
                .push(metric(name, v, Unit::Seconds, Better::Lower));
        }
    }
    if !not_supported.is_empty() {
        out.notes.push(format!(
            "perf stat: <not supported> on this machine, left out (not zero): {}",
            not_supported.join(", ")
        ));
    }
    if !not_counted.is_empty() {
        out.notes.push(format!(
            "perf stat: <not counted> (never got a hardware counter), left out (not zero): {}",
            not_counted.join(", ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_column_names_the_metric() {
        assert_eq!(
            name_and_unit("task-clock", "msec"),
            ("task_clock_ms".into(), Unit::Milliseconds)
        );
        assert_eq!(name_and_unit("cycles", ""), ("cycles".into(), Unit::Count));
        assert_eq!(
            name_and_unit("duration_time", "ns"),
            ("duration_time_ns".into(), Unit::Nanoseconds)
        );
        assert_eq!(
            name_and_unit("power/energy-pkg/", "Joules"),
            ("power_energy_pkg_joules".into(), Unit::Count)
        );
    }
}
