//! Several `perf stat` outputs in one file: runs appended to one log (`perf stat ... 2>>
//! log` in a loop) or several `-r N` blocks. Each is one repetition (a row), so an import
//! has a spread to compare; outputs of different commands (their headers say which) are
//! the variants, as hyperfine's commands are. One output stays single-result, as before.

use std::collections::BTreeSet;

use crate::error::ParseError;
use crate::parsed::{Parsed, ParsedRow};
use crate::perf_stat_line::{EventLine, TOOL};
use crate::text::bad;

/// One output per `(command, what it gave)`; the command is empty for CSV, which has no
/// header to name it.
pub(crate) fn join(mut runs: Vec<(String, Parsed)>) -> Parsed {
    if runs.len() == 1 {
        return runs.pop().map(|(_, p)| p).unwrap_or_default();
    }
    let commands: BTreeSet<&str> = runs.iter().map(|(c, _)| c.as_str()).collect();
    let by_command = commands.len() > 1;
    let mut out = Parsed::default();
    out.notes.push(match by_command {
        false => format!(
            "perf stat: {} outputs in one file, read as {} repetitions",
            runs.len(),
            runs.len()
        ),
        true => format!(
            "perf stat: {} outputs of {} commands in one file: each command a variant, its \
             outputs its repetitions",
            runs.len(),
            commands.len()
        ),
    });
    for (command, p) in runs {
        for note in p.notes {
            if !out.notes.contains(&note) {
                out.notes.push(note);
            }
        }
        out.rows.push(ParsedRow {
            params: Vec::new(),
            series: by_command.then_some(command),
            metrics: p.metrics,
            histograms: p.histograms,
            telemetry: p.telemetry,
        });
    }
    out
}

/// The event lines of a CSV file, one list per run: a run ends where an event it already
/// has comes again. Every run must list the first one's events in its order; anything
/// else (interval, per-CPU or per-cgroup output, a run cut short) is refused at the first
/// line that departs from it.
pub(crate) fn split_csv(events: Vec<EventLine>) -> Result<Vec<Vec<EventLine>>, ParseError> {
    let mut runs: Vec<Vec<EventLine>> = vec![Vec::new()];
    for e in events {
        let current = runs.last_mut().expect("one run at least");
        if current.iter().any(|c| c.event == e.event) {
            runs.push(vec![e]);
        } else {
            current.push(e);
        }
    }
    let first: Vec<String> = runs[0].iter().map(|e| e.event.clone()).collect();
    for run in &runs[1..] {
        let departs = run
            .iter()
            .zip(&first)
            .find(|(e, f)| e.event != **f)
            .map(|(e, _)| e)
            .or_else(|| match run.len() == first.len() {
                true => None,
                false => run.get(first.len()).or(run.last()),
            });
        if let Some(e) = departs {
            return Err(bad(
                TOOL,
                e.line,
                format!(
                    "event {} appears twice, and not as a run of the same events again \
                     ({}); per-CPU, per-cgroup or interval output (-A, --per-core, -G, -I) \
                     is not supported",
                    e.event,
                    first.join(", ")
                ),
            ));
        }
    }
    Ok(runs)
}
