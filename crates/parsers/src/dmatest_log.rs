//! dmatest's lines in the kernel log, read from `/dev/kmsg` records
//! (`6,1234,181503345,-;dmatest: …`) or from `dmesg` text (`[  181.503345] dmatest: …`).
//!
//! Each test thread ends with one summary (drivers/dma/dmatest.c, behind the
//! `dmatest: ` pr_fmt prefix; kernels before 5.0 print the iops without decimals):
//!
//! ```text
//! dmatest: dma0chan0-copy0: summary 1000 tests, 0 failures 3522.29 iops 28178 KB/s (0)
//! ```
//!
//! Lines of concurrent threads interleave with each other and with other kernel messages.
//! A summary line that cannot be read (cut short by the log buffer, garbled) is skipped
//! with the reason; the scan never fails and never panics. Its timestamp is the
//! thread's end: the kernel's log clock (local_clock, in µs), one clock for all threads.
//!
//! Both the dmatest workload (reading `/dev/kmsg` after its run) and the `dmatest` parser
//! (dmesg text given to `perflab import` or `exec`) read the log through [`scan`].

use std::fmt;
use std::io::{BufRead, ErrorKind};

/// One thread's summary.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The kernel thread's name, e.g. `dma0chan0-copy0`.
    pub thread: String,
    pub tests: u64,
    pub failures: u64,
    pub iops: f64,
    /// The kernel's `KB/s`: `len >> 10` per second, so KiB/s.
    pub kib_s: f64,
    pub status: i64,
    /// Log timestamp in µs, when the line had one.
    pub ts_us: Option<u64>,
}

impl Summary {
    /// The thread's runtime as dmatest measured it (tests / iops), in ns.
    pub fn runtime_ns(&self) -> Option<u64> {
        (self.iops > 0.0 && self.tests > 0)
            .then(|| (self.tests as f64 / self.iops * 1e9).round() as u64)
    }
}

/// What one pass over the log found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    pub summaries: Vec<Summary>,
    /// `(channel, threads)` from "Started N threads using CHAN".
    pub started: Vec<(String, u32)>,
    /// Lines that looked like dmatest's but could not be read, and summaries replaced
    /// by a later one of the same thread, each with the reason.
    pub skipped: Vec<Skipped>,
    /// Failure results ("result #N: 'data error' …"), kept for the notes (at most 20).
    pub results: Vec<String>,
    /// Highest kmsg sequence number seen.
    pub last_seq: Option<u64>,
    /// Lines that carry the `dmatest: ` prefix (after `after_seq`), read or not: tells
    /// dmatest's log without a summary from some other text.
    pub dmatest_lines: usize,
}

/// A dmatest line the scan could not use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// 1-based line number in what was scanned.
    pub line: usize,
    /// What was wrong and what became of the line, naming the line's text.
    pub why: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "log line {}: {}", self.line, self.why)
    }
}

/// A log line split into its record header and message.
#[derive(Debug, PartialEq)]
struct Record<'a> {
    seq: Option<u64>,
    ts_us: Option<u64>,
    msg: &'a str,
}

fn record(line: &str) -> Record<'_> {
    // /dev/kmsg: "prio,seq,ts_usec,flags[,…];message".
    if let Some((head, msg)) = line.split_once(';') {
        let f: Vec<&str> = head.split(',').collect();
        if f.len() >= 4 && f[..3].iter().all(|x| x.parse::<u64>().is_ok()) {
            return Record {
                seq: f[1].parse().ok(),
                ts_us: f[2].parse().ok(),
                msg,
            };
        }
    }
    // dmesg: "[  181.503345] message".
    if let Some(rest) = line.trim_start().strip_prefix('[') {
        if let Some((ts, msg)) = rest.split_once(']') {
            if let Some(ts_us) = seconds_us(ts.trim()) {
                return Record {
                    seq: None,
                    ts_us: Some(ts_us),
                    msg: msg.strip_prefix(' ').unwrap_or(msg),
                };
            }
        }
    }
    Record {
        seq: None,
        ts_us: None,
        msg: line,
    }
}

/// `181.503345` (dmesg's seconds) in µs. dmesg prints six decimals, but a shorter fraction
/// (`1.5`, hand-edited or another printer's) is tenths, not µs.
fn seconds_us(ts: &str) -> Option<u64> {
    let (s, frac) = ts.split_once('.')?;
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(s) || !digits(frac) || frac.len() > 9 {
        return None;
    }
    let mut us: u64 = frac.get(..frac.len().min(6))?.parse().ok()?;
    for _ in frac.len()..6 {
        us *= 10;
    }
    s.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000)?
        .checked_add(us)
}

/// kmsg continuation lines (` KEY=value`, the record's dictionary) belong to the record
/// before; a message's own newlines are escaped in kmsg, so only these start with a
/// space and a KEY=. An indented dmatest line pasted from elsewhere is not one.
fn continuation(line: &str) -> bool {
    line.starts_with(' ')
        && line.trim_start().split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// Scans a log for dmatest lines; with `after_seq`, kmsg records up to that sequence
/// number (an earlier run's) are left out.
pub fn scan(mut reader: impl BufRead, after_seq: Option<u64>) -> Scan {
    let mut out = Scan::default();
    let mut buf = Vec::new();
    let mut n = 0usize;
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            // /dev/kmsg says EPIPE when records were overwritten under us: go on.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => continue,
            // EAGAIN: a non-blocking /dev/kmsg has nothing more.
            Err(_) => break,
        }
        n += 1;
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if continuation(line) {
            continue;
        }
        let r = record(line);
        if let Some(s) = r.seq {
            out.last_seq = Some(out.last_seq.map_or(s, |l| l.max(s)));
            if after_seq.is_some_and(|a| s <= a) {
                continue;
            }
        }
        line_of(n, &r, &mut out);
    }
    out
}

fn line_of(n: usize, r: &Record<'_>, out: &mut Scan) {
    let Some(at) = r.msg.find("dmatest: ") else {
        return;
    };
    out.dmatest_lines += 1;
    let msg = &r.msg[at + "dmatest: ".len()..];
    if let Some(rest) = msg.strip_prefix("Started ") {
        if let Some((count, chan)) = rest.split_once(" threads using ") {
            if let Ok(c) = count.trim().parse() {
                out.started.push((chan.trim().to_string(), c));
            }
        }
        return;
    }
    let Some((thread, tail)) = msg.split_once(": ") else {
        return;
    };
    let shown = || {
        let mut s: String = r.msg.chars().take(160).collect();
        if s.len() < r.msg.len() {
            s.push('…');
        }
        format!("{s:?}")
    };
    if tail.starts_with("result ") {
        if out.results.len() < 20 {
            out.results.push(format!("{}: {tail}", thread.trim()));
        }
        return;
    }
    let Some(rest) = tail.strip_prefix("summary") else {
        let cut = tail.trim_end();
        if !cut.is_empty() && "summary".starts_with(cut) {
            out.skipped.push(Skipped {
                line: n,
                why: format!("truncated summary line {}: skipped", shown()),
            });
        }
        return;
    };
    match summary(thread, rest) {
        Ok(mut s) => {
            s.ts_us = r.ts_us;
            match out.summaries.iter_mut().find(|o| o.thread == s.thread) {
                Some(old) => {
                    out.skipped.push(Skipped {
                        line: n,
                        why: format!(
                            "a second summary of thread {} (an earlier run's?); the later \
                             one is kept",
                            s.thread
                        ),
                    });
                    *old = s;
                }
                None => out.summaries.push(s),
            }
        }
        Err(why) => out.skipped.push(Skipped {
            line: n,
            why: format!("{why} in the summary line {}: skipped", shown()),
        }),
    }
}

/// ` 1000 tests, 0 failures 3522.29 iops 28178 KB/s (0)` after `<thread>: summary`.
fn summary(thread: &str, rest: &str) -> Result<Summary, String> {
    let thread = thread.trim();
    if thread.is_empty() || thread.contains(char::is_whitespace) {
        return Err(format!(
            "thread name {thread:?} is not a kernel thread name"
        ));
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let expect = |i: usize, word: &str| -> Result<(), String> {
        match words.get(i) {
            Some(w) if *w == word => Ok(()),
            Some(w) => Err(format!("{w:?} where {word:?} belongs")),
            None => Err(format!("the line ends before {word:?} (truncated)")),
        }
    };
    let word = |i: usize, what: &str| -> Result<&str, String> {
        words
            .get(i)
            .copied()
            .ok_or_else(|| format!("the line ends before the {what} (truncated)"))
    };
    let whole = |i: usize, what: &str| -> Result<u64, String> {
        let w = word(i, what)?;
        w.parse()
            .map_err(|_| format!("{w:?} is not a whole number of {what}"))
    };
    let real = |i: usize, what: &str| -> Result<f64, String> {
        let w = word(i, what)?;
        w.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("{w:?} is not a number of {what}"))
    };
    let tests = whole(0, "tests")?;
    expect(1, "tests,")?;
    let failures = whole(2, "failures")?;
    expect(3, "failures")?;
    let iops = real(4, "iops")?;
    expect(5, "iops")?;
    let kib_s = real(6, "KB/s")?;
    expect(7, "KB/s")?;
    let status = words
        .get(8)
        .and_then(|w| w.strip_prefix('(')?.strip_suffix(')')?.parse::<i64>().ok())
        .ok_or_else(|| "no \"(status)\" at the end (truncated)".to_string())?;
    if let Some(extra) = words.get(9) {
        return Err(format!("unexpected {extra:?} after the status"));
    }
    Ok(Summary {
        thread: thread.to_string(),
        tests,
        failures,
        iops,
        kib_s,
        status,
        ts_us: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_old_and_new_iops_formats() {
        let s = summary(
            "dma0chan0-copy0",
            " 1000 tests, 0 failures 3522.29 iops 28178 KB/s (0)",
        )
        .unwrap();
        assert_eq!(
            (s.tests, s.failures, s.iops, s.kib_s, s.status),
            (1000, 0, 3522.29, 28178.0, 0)
        );
        let s = summary(
            "dma0chan1-copy0",
            " 5 tests, 2 failures 3522 iops 28178 KB/s (-12)",
        )
        .unwrap();
        assert_eq!((s.iops, s.status), (3522.0, -12));
    }

    #[test]
    fn truncated_lines_say_where_they_end() {
        let e = summary("t", " 1000 tests, 0 fail").unwrap_err();
        assert!(e.contains("\"fail\" where \"failures\" belongs"), "{e}");
        let e = summary("t", " 1000 tests, 0 failures 3522.29 iops 28178 KB/s").unwrap_err();
        assert!(e.contains("truncated"), "{e}");
    }

    #[test]
    fn records_split_into_header_and_message() {
        let r = record("6,1234,181503345,-;dmatest: x");
        assert_eq!(
            (r.seq, r.ts_us, r.msg),
            (Some(1234), Some(181_503_345), "dmatest: x")
        );
        let r = record("[  181.503345] dmatest: x");
        assert_eq!(
            (r.seq, r.ts_us, r.msg),
            (None, Some(181_503_345), "dmatest: x")
        );
        let r = record("[18446744073709.551616] m");
        assert_eq!(r.ts_us, None, "overflow is no timestamp");
        assert!(continuation(" SUBSYSTEM=dma"));
        assert!(!continuation("  dmatest: t: summary"));
    }
}
