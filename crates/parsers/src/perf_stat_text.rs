//! The default `perf stat` text:
//!
//! ```text
//!  Performance counter stats for './run_intr.sh 512 30':
//!
//!     77,313,298,506      L1-dcache-loads                                   (79.98%)
//!          8,279,458      L1-dcache-load-misses  #  0.01% of all L1-dcache accesses  (80.03%)
//!               0.92 msec task-clock             #  0.652 CPUs utilized   ( +-  2.50% )
//!    <not supported>      cycles
//!
//!       30.212055434 seconds time elapsed
//!       0.002149000 seconds user
//! ```
//!
//! Only lines after the header are read: what comes before is the command's own output.

use crate::error::ParseError;
use crate::perf_stat_line::{is_event_name, is_unit, EventLine, Missing, Times, TOOL};
use crate::text::{bad, grouped_num, num, shown};

const HEADER: &str = "Performance counter stats for";

/// The 1-based line of every header: one per `perf stat` output in the text (runs
/// appended to one file, or several `-r` blocks).
pub(crate) fn header_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(HEADER))
        .map(|(i, _)| i + 1)
        .collect()
}

/// What the header on 1-based line `header` says perf measured: `ls /` of ` Performance
/// counter stats for 'ls /' (3 runs):`.
pub(crate) fn command(text: &str, header: usize) -> String {
    let line = text.lines().nth(header - 1).unwrap_or_default();
    let rest = line.split_once(HEADER).map_or("", |(_, r)| r).trim();
    let rest = rest.strip_suffix(':').unwrap_or(rest).trim_end();
    let rest = match rest.rsplit_once(" (") {
        Some((cmd, runs)) if runs.ends_with("runs)") => cmd,
        _ => rest,
    };
    rest.trim().trim_matches('\'').to_string()
}

/// The event lines and times after the header on 1-based line `header`, up to the line
/// before 1-based line `end` (the next header; `usize::MAX`: the end of the text).
pub(crate) fn read(
    text: &str,
    header: usize,
    end: usize,
) -> Result<(Vec<EventLine>, Times), ParseError> {
    let mut events = Vec::new();
    let mut times = Times::default();
    let lines = end.saturating_sub(header + 1);
    for (i, raw) in text.lines().enumerate().skip(header).take(lines) {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_suffix("seconds time elapsed") {
            let (v, sd) = elapsed(rest).ok_or_else(|| bad(TOOL, line_no, bad_number(raw)))?;
            times.elapsed_s = Some(v);
            times.elapsed_stddev_s = sd;
            continue;
        }
        if let Some(idx) = line.find("seconds time elapsed") {
            let (v, sd) =
                elapsed(&line[..idx]).ok_or_else(|| bad(TOOL, line_no, bad_number(raw)))?;
            times.elapsed_s = Some(v);
            times.elapsed_stddev_s = sd;
            continue;
        }
        if let Some(rest) = line.strip_suffix("seconds user") {
            times.user_s = Some(seconds(rest).ok_or_else(|| bad(TOOL, line_no, bad_number(raw)))?);
            continue;
        }
        if let Some(rest) = line.strip_suffix("seconds sys") {
            times.sys_s = Some(seconds(rest).ok_or_else(|| bad(TOOL, line_no, bad_number(raw)))?);
            continue;
        }
        if let Some(e) = event_line(line_no, line)? {
            events.push(e);
        }
    }
    Ok((events, times))
}

fn bad_number(raw: &str) -> String {
    format!(
        "cannot read the number in {} (a locale with a decimal comma? run perf with LC_ALL=C)",
        shown(raw)
    )
}

fn seconds(s: &str) -> Option<f64> {
    grouped_num(s)
}

/// `0.0012274 +- 0.0000302 ` or `30.212055434 `.
fn elapsed(s: &str) -> Option<(f64, Option<f64>)> {
    match s.split_once("+-") {
        Some((v, sd)) => Some((grouped_num(v)?, Some(grouped_num(sd)?))),
        None => Some((grouped_num(s)?, None)),
    }
}

fn event_line(line_no: usize, line: &str) -> Result<Option<EventLine>, ParseError> {
    let (value, rest) = if let Some(rest) = line.strip_prefix("<not supported>") {
        (Err(Missing::NotSupported), rest)
    } else if let Some(rest) = line.strip_prefix("<not counted>") {
        (Err(Missing::NotCounted), rest)
    } else {
        let (first, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        if !first.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(None);
        }
        match grouped_num(first) {
            Some(v) => (Ok(v), rest),
            // A number perf printed that cannot be read must not be skipped silently.
            None => return Err(bad(TOOL, line_no, bad_number(line))),
        }
    };
    // The shadow metric after '#' is perf's own derived figure; the bracketed running and
    // variance percentages come at the end, after it or after padding.
    let (running_pct, rel_stddev_pct) = brackets(rest);
    let head = rest.split(['#', '(']).next().unwrap_or("");
    let words: Vec<&str> = head.split_whitespace().collect();
    let (unit, event) = match words.as_slice() {
        [event] => ("", *event),
        [unit, event] => (*unit, *event),
        _ => ("", ""),
    };
    if !is_unit(unit) || !is_event_name(event) {
        // After the header every line that starts with a number is perf's; one that does
        // not read as `value [unit] event` is a layout this parser does not know (interval
        // timestamps, per-socket columns, digits grouped by spaces), and guessing would
        // drop or misname counters.
        return Err(bad(
            TOOL,
            line_no,
            format!(
                "not a `value [unit] event` counter line: {} (interval, per-CPU and \
                 non-C-locale output are not read; run perf with LC_ALL=C)",
                shown(line)
            ),
        ));
    }
    Ok(Some(EventLine {
        line: line_no,
        event: event.to_string(),
        unit: unit.to_string(),
        value,
        running_pct,
        rel_stddev_pct,
    }))
}

/// `(80.03%)` → running percentage; `( +-  2.50% )` → relative stddev.
fn brackets(rest: &str) -> (Option<f64>, Option<f64>) {
    let mut running = None;
    let mut stddev = None;
    for part in rest.split('(').skip(1) {
        let Some((inside, _)) = part.split_once(')') else {
            continue;
        };
        let Some(pct) = inside.trim().strip_suffix('%') else {
            continue;
        };
        match pct.trim().strip_prefix("+-") {
            Some(sd) => stddev = num(sd),
            None => running = num(pct),
        }
    }
    (running, stddev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lines_with_and_without_brackets() {
        let e = event_line(
            5,
            "8,279,458      L1-dcache-load-misses            #    0.01% of all L1-dcache accesses  (80.03%)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(e.event, "L1-dcache-load-misses");
        assert_eq!(e.value, Ok(8_279_458.0));
        assert_eq!(e.running_pct, Some(80.03));
        let e = event_line(
            6,
            "0.78 msec task-clock                       #    0.636 CPUs utilized            ( +-  2.50% )",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (e.unit.as_str(), e.rel_stddev_pct, e.running_pct),
            ("msec", Some(2.5), None)
        );
        let e = event_line(7, "<not supported>      cycles")
            .unwrap()
            .unwrap();
        assert_eq!(e.value, Err(Missing::NotSupported));
    }

    #[test]
    fn decimal_comma_is_an_error_not_a_wrong_number() {
        let e = event_line(9, "1,46 msec task-clock").unwrap_err();
        assert!(e.to_string().contains("LC_ALL=C"), "{e}");
    }

    #[test]
    fn prose_is_not_an_event_and_unknown_layouts_are_refused() {
        assert_eq!(
            event_line(1, "DMA memfill bandwidth: 4.944 Gbps").unwrap(),
            None
        );
        assert!(event_line(1, "3 apples are red").is_err());
        // perf stat -I: a timestamp, then the count.
        assert!(event_line(1, "1.001234567          1,234      cycles").is_err());
        // A locale that groups digits with spaces.
        assert!(event_line(1, "976 160 248      cache-references").is_err());
    }
}
