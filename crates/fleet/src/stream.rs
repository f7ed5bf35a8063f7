//! What the agent on a host sends back over ssh: one JSON object per line. Every
//! (re)connection starts with the run's whole state so far, then what is committed after
//! it; the receiving side skips what it already has, which makes a reconnection after a
//! dropped connection lose and double nothing.

use std::io::{BufRead, Write};

use perflab_store::{MeasurementRecord, PlannedMeasurement, RunInfo};
use serde::{Deserialize, Serialize};

/// The stream format's version; an agent and a receiver of different versions refuse
/// each other by name instead of misreading.
pub const STREAM_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// First line of every connection.
    Hello {
        stream_version: u32,
        perflab_version: String,
        /// What the agent did: "started", "resumed" or "attached" (the run was already
        /// being measured, by the process an earlier connection started).
        action: String,
    },
    /// The run and its whole plan, sent when first seen and whenever the plan grows
    /// (adaptive repetitions append to it).
    Run {
        run: Box<RunInfo>,
        plan: Vec<PlannedMeasurement>,
    },
    /// One committed measurement (again if a failed one was retried and replaced).
    Measurement { record: Box<MeasurementRecord> },
    /// The run ended on the host: its status and the exit code of its `perflab run`.
    End {
        status: String,
        exit_code: Option<i32>,
        /// The last lines of the remote run's log when it failed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        log_tail: Vec<String>,
    },
    /// The agent could not start or follow the run; not worth retrying.
    Error { message: String },
}

/// Writes one event as a line and flushes it, so the receiver sees it at once.
pub fn write_event(w: &mut impl Write, e: &Event) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(e).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

/// The largest line the receiver accepts; a measurement with every histogram encoded is a
/// few hundred KiB at most.
pub const MAX_LINE: usize = 64 << 20;

/// Reads the next event; `Ok(None)` at the end of the stream. A line that is not an
/// event (a login banner, a shell's message) is an error naming its start.
pub fn read_event(r: &mut impl BufRead) -> Result<Option<Event>, String> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = std::io::Read::take(&mut *r, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading the stream: {e}"))?;
        if n == 0 {
            return Ok(None);
        }
        if line.len() > MAX_LINE {
            return Err(format!("a stream line is over {MAX_LINE} bytes"));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return serde_json::from_slice(&line).map(Some).map_err(|e| {
            let start: String = String::from_utf8_lossy(&line).chars().take(80).collect();
            format!("not a perflab stream line ({e}): {:?}", start.trim_end())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_round_trip_line_by_line() {
        let events = vec![
            Event::Hello {
                stream_version: STREAM_VERSION,
                perflab_version: "0.1.0".into(),
                action: "started".into(),
            },
            Event::End {
                status: "complete".into(),
                exit_code: Some(0),
                log_tail: vec![],
            },
        ];
        let mut buf = Vec::new();
        for e in &events {
            write_event(&mut buf, e).unwrap();
        }
        buf.extend_from_slice(b"\n");
        let mut r = &buf[..];
        assert_eq!(read_event(&mut r).unwrap(), Some(events[0].clone()));
        assert_eq!(read_event(&mut r).unwrap(), Some(events[1].clone()));
        assert_eq!(read_event(&mut r).unwrap(), None);
    }

    #[test]
    fn a_banner_is_named() {
        let mut r = &b"Welcome to the lab!\n"[..];
        let e = read_event(&mut r).unwrap_err();
        assert!(e.contains("\"Welcome to the lab!\""), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut r = &bytes[..];
            for _ in 0..4 {
                match read_event(&mut r) {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
        }
    }
}
