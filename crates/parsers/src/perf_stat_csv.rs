//! `perf stat -x,` lines: value,unit,event[,variance%],run-time,running%,metric,metric-unit.
//! Lines that are not counter lines (the command's own stderr) are skipped.

use crate::error::ParseError;
use crate::perf_stat_line::{is_event_name, is_unit, EventLine, Missing};
use crate::text::num;

pub(crate) fn read(text: &str) -> Result<Vec<EventLine>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(e) = event_line(i + 1, line.trim_end_matches('\r')) {
            out.push(e);
        }
    }
    Ok(out)
}

fn event_line(line_no: usize, line: &str) -> Option<EventLine> {
    let fields: Vec<&str> = line.split(',').collect();
    if fields.len() < 3 {
        return None;
    }
    let value = match fields[0].trim() {
        "<not supported>" => Err(Missing::NotSupported),
        "<not counted>" => Err(Missing::NotCounted),
        v => Ok(num(v)?),
    };
    let unit = fields[1].trim();
    let event = fields[2].trim();
    if !is_unit(unit) || !is_event_name(event) {
        return None;
    }
    // With -r a relative standard deviation comes first, and only it ends in '%'; then
    // the run time in ns and the running percentage.
    let rest = &fields[3..];
    let (rel_stddev_pct, rest) = match rest.first().and_then(|f| f.trim().strip_suffix('%')) {
        Some(pct) => (num(pct), &rest[1..]),
        None => (None, rest),
    };
    let running_pct = rest.get(1).and_then(|f| num(f));
    Some(EventLine {
        line: line_no,
        event: event.to_string(),
        unit: unit.to_string(),
        value,
        running_pct,
        rel_stddev_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_and_repeated_lines() {
        let e = event_line(1, "1.46,msec,task-clock,1463907,100.00,0.579,CPUs utilized").unwrap();
        assert_eq!(e.value, Ok(1.46));
        assert_eq!(e.unit, "msec");
        assert_eq!(e.running_pct, Some(100.0));
        assert_eq!(e.rel_stddev_pct, None);
        let e = event_line(2, "100,,page-faults,0.37%,769884,100.00,127.778,K/sec").unwrap();
        assert_eq!(e.rel_stddev_pct, Some(0.37));
        assert_eq!(e.running_pct, Some(100.0));
        let e = event_line(3, "<not counted>,,LLC-loads,0,0.00,,").unwrap();
        assert_eq!(e.value, Err(Missing::NotCounted));
    }

    #[test]
    fn other_lines_are_not_events() {
        assert!(event_line(1, "hello, world, again").is_none());
        assert!(event_line(1, "  \"bw\" : 65192,").is_none());
        assert!(event_line(1, "1,2,3").is_none());
    }
}
