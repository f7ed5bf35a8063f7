//! Parser of `perf bench sched pipe` output in its default format:
//!
//! ```text
//! # Running 'sched/pipe' benchmark:
//! # Executed 200000 pipe operations between two threads
//!
//!      Total time: 1.278 [sec]
//!
//!        6.391795 usecs/op
//!          156450 ops/sec
//! ```
//!
//! In tools/perf/bench/sched-pipe.c each of the `loops` operations is one write and one
//! read on each side, i.e. one round trip, so ops/sec is round trips per second.

use std::io::BufRead;

use perflab_sys::lines::LossyLines;

/// One run of `perf bench sched pipe`.
#[derive(Clone, Debug, PartialEq)]
pub struct PerfPipeResult {
    /// From the `# Executed N pipe operations` line, when present.
    pub loops: Option<u64>,
    /// `Some(true)` for `-T` (threads), `Some(false)` for processes.
    pub threaded: Option<bool>,
    /// Whole run, seconds (printed with millisecond resolution).
    pub total_s: f64,
    pub usecs_per_op: f64,
    /// As printed: truncated to an integer by perf.
    pub ops_per_sec: f64,
}

impl PerfPipeResult {
    /// Round trips per second, from usecs/op (printed with six decimals, finer than the
    /// integer ops/sec).
    pub fn round_trips_per_sec(&self) -> f64 {
        if self.usecs_per_op > 0.0 {
            1e6 / self.usecs_per_op
        } else {
            self.ops_per_sec
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PerfParseError {
    #[error("line {line}: {reason}")]
    Bad { line: usize, reason: String },
    #[error("no {0:?} line (is this `perf bench sched pipe` output in the default format?)")]
    Missing(&'static str),
    #[error("cannot read the output: {0}")]
    Read(String),
}

fn number(text: &str, line: usize, what: &str) -> Result<f64, PerfParseError> {
    let v: f64 = text.trim().parse().map_err(|_| PerfParseError::Bad {
        line,
        reason: format!("{what} {text:?} is not a number"),
    })?;
    if !v.is_finite() || v < 0.0 {
        return Err(PerfParseError::Bad {
            line,
            reason: format!("{what} {text:?} is out of range"),
        });
    }
    Ok(v)
}

/// Parses the default-format output of `perf bench sched pipe [-T]`. Unrelated lines
/// (headers, blank lines, warnings) are skipped.
pub fn parse_perf_bench_sched_pipe(reader: impl BufRead) -> Result<PerfPipeResult, PerfParseError> {
    let mut loops = None;
    let mut threaded = None;
    let mut total_s = None;
    let mut usecs = None;
    let mut ops = None;
    let mut lines = LossyLines::new(reader);
    while let Some((lineno, text)) = lines
        .next_line()
        .map_err(|e| PerfParseError::Read(e.source.to_string()))?
    {
        let line = text.trim();
        if let Some(rest) = line.strip_prefix("# Executed ") {
            let mut words = rest.split_whitespace();
            let count = words.next().unwrap_or("");
            loops = Some(count.parse::<u64>().map_err(|_| PerfParseError::Bad {
                line: lineno,
                reason: format!("loop count {count:?} is not a number"),
            })?);
            threaded = match words.last() {
                Some("threads") => Some(true),
                Some("processes") => Some(false),
                _ => None,
            };
        } else if let Some(rest) = line.strip_prefix("Total time:") {
            let v = rest.trim().trim_end_matches("[sec]");
            total_s = Some(number(v, lineno, "total time")?);
        } else if let Some(v) = line.strip_suffix("usecs/op") {
            usecs = Some(number(v, lineno, "usecs/op")?);
        } else if let Some(v) = line.strip_suffix("ops/sec") {
            ops = Some(number(v, lineno, "ops/sec")?);
        }
    }
    Ok(PerfPipeResult {
        loops,
        threaded,
        total_s: total_s.ok_or(PerfParseError::Missing("Total time"))?,
        usecs_per_op: usecs.ok_or(PerfParseError::Missing("usecs/op"))?,
        ops_per_sec: ops.ok_or(PerfParseError::Missing("ops/sec"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn parses_captured_threaded_output() {
        let r =
            parse_perf_bench_sched_pipe(&data("perf-6.1-sched-pipe-threads-cpu0.txt")[..]).unwrap();
        assert_eq!(r.loops, Some(200_000));
        assert_eq!(r.threaded, Some(true));
        assert_eq!(r.total_s, 1.278);
        assert_eq!(r.usecs_per_op, 6.391795);
        assert_eq!(r.ops_per_sec, 156_450.0);
        // ops/sec is loops over total time: one op is one round trip.
        let derived = r.round_trips_per_sec();
        assert!((derived - r.ops_per_sec).abs() < 1.0, "{derived}");
    }

    #[test]
    fn parses_captured_two_cpu_output() {
        let r = parse_perf_bench_sched_pipe(&data("perf-6.1-sched-pipe-threads-cpu01.txt")[..])
            .unwrap();
        assert_eq!((r.loops, r.threaded), (Some(200_000), Some(true)));
        assert_eq!((r.total_s, r.usecs_per_op), (1.317, 6.586415));
        assert_eq!(r.ops_per_sec, 151_827.0);
    }

    #[test]
    fn parses_captured_process_output() {
        let r =
            parse_perf_bench_sched_pipe(&data("perf-6.1-sched-pipe-processes.txt")[..]).unwrap();
        assert_eq!(r.loops, Some(100_000));
        assert_eq!(r.threaded, Some(false));
        assert_eq!(r.ops_per_sec, 151_459.0);
    }

    #[test]
    fn rejects_simple_format_and_garbage() {
        let e =
            parse_perf_bench_sched_pipe(&data("perf-6.1-sched-pipe-simple.txt")[..]).unwrap_err();
        assert_eq!(e, PerfParseError::Missing("Total time"));
        assert!(parse_perf_bench_sched_pipe(&b""[..]).is_err());
        assert!(parse_perf_bench_sched_pipe(&b"\xff\xfe garbage\n"[..]).is_err());
        let bad = b"Total time: 1.0 [sec]\n  abc usecs/op\n 5 ops/sec\n";
        assert!(matches!(
            parse_perf_bench_sched_pipe(&bad[..]),
            Err(PerfParseError::Bad { line: 2, .. })
        ));
        let neg = b"Total time: 1.0 [sec]\n  -1 usecs/op\n 5 ops/sec\n";
        assert!(parse_perf_bench_sched_pipe(&neg[..]).is_err());
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(s in "\\PC*") {
            let _ = parse_perf_bench_sched_pipe(s.as_bytes());
        }

        #[test]
        fn never_panics_on_near_miss_lines(
            lines in proptest::collection::vec(
                prop_oneof![
                    "# Executed [0-9a-z ]{0,12}",
                    "Total time:[0-9. \\[\\]sec-]{0,12}",
                    "[0-9.e+-]{0,12} usecs/op",
                    "[0-9.e+-]{0,12} ops/sec",
                ],
                0..8,
            )
        ) {
            let _ = parse_perf_bench_sched_pipe(lines.join("\n").as_bytes());
        }
    }
}
