//! The kernel's dmatest results as dmesg shows them. Each test thread ends with one line
//! (drivers/dma/dmatest.c, `pr_info("%s: summary %u tests, %u failures %llu.%02llu iops
//! %llu KB/s (%d)\n", ...)` behind the `dmatest: ` pr_fmt prefix; kernels before 5.0 print
//! the iops without decimals):
//!
//! ```text
//! [  123.456789] dmatest: dma0chan0-copy0: summary 1000 tests, 0 failures 3522.29 iops 28178 KB/s (0)
//! ```
//!
//! Lines of concurrent threads interleave and other kernel messages come between them.
//! KB/s is the kernel's `len >> 10` per second, so KiB/s.
//!
//! No sum over threads is given: whether per-thread bandwidths add up depends on whether
//! the threads ran at the same time, which the summary lines do not tell.

use perflab_core::{Better, Metric, Unit};

use crate::text::{bad, metric, not_this, num, shown};
use crate::{ParseError, Parsed, ParsedRow};

const TOOL: &str = "dmatest";

#[derive(Clone, Debug, PartialEq)]
struct Summary {
    thread: String,
    tests: f64,
    failures: f64,
    iops: f64,
    kib_s: f64,
    status: i64,
}

impl Summary {
    fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("tests", self.tests, Unit::Count, Better::Neither),
            metric("failures", self.failures, Unit::Count, Better::Lower),
            metric("iops", self.iops, Unit::PerSecond, Better::Higher),
            metric(
                "bandwidth_mib_s",
                self.kib_s / 1024.0,
                Unit::MibPerSecond,
                Better::Higher,
            ),
        ]
    }
}

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut found: Vec<Summary> = Vec::new();
    let mut out = Parsed::default();
    let mut any_dmatest = false;
    for (i, raw) in text.lines().enumerate() {
        let Some(at) = raw.find("dmatest: ") else {
            continue;
        };
        any_dmatest = true;
        let msg = &raw[at + "dmatest: ".len()..];
        let Some((thread, tail)) = msg.split_once(": ") else {
            continue;
        };
        let Some(rest) = tail.strip_prefix("summary") else {
            let cut = tail.trim_end();
            if !cut.is_empty() && "summary".starts_with(cut) {
                return Err(bad(
                    TOOL,
                    i + 1,
                    format!("truncated summary line {}", shown(raw)),
                ));
            }
            continue;
        };
        let s = summary(thread, rest).map_err(|why| {
            bad(
                TOOL,
                i + 1,
                format!("{why} in the summary line {}", shown(raw)),
            )
        })?;
        if s.status != 0 {
            out.notes.push(format!(
                "dmatest thread {} ended with status {}",
                s.thread, s.status
            ));
        }
        if let Some(old) = found.iter_mut().find(|o| o.thread == s.thread) {
            out.notes.push(format!(
                "dmatest thread {} has several summaries (several runs in one log?); the last is kept",
                s.thread
            ));
            *old = s;
        } else {
            found.push(s);
        }
    }
    if found.is_empty() {
        return Err(if any_dmatest {
            bad(
                TOOL,
                text.lines().count(),
                "dmatest lines but no \"<thread>: summary\" line: the test has not finished",
            )
        } else {
            not_this(TOOL, "no \"dmatest: \" lines")
        });
    }
    if found.len() == 1 {
        out.metrics = found[0].metrics();
        return Ok(out);
    }
    let tests = found.iter().map(|s| s.tests).sum();
    let failures = found.iter().map(|s| s.failures).sum();
    out.metrics = vec![
        metric("threads", found.len() as f64, Unit::Count, Better::Neither),
        metric("tests", tests, Unit::Count, Better::Neither),
        metric("failures", failures, Unit::Count, Better::Lower),
    ];
    out.rows = found
        .iter()
        .map(|s| ParsedRow {
            params: vec![("thread".to_string(), s.thread.clone())],
            series: None,
            metrics: s.metrics(),
        })
        .collect();
    Ok(out)
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
            None => Err(format!("the line ends before {word:?} (truncated?)")),
        }
    };
    let number = |i: usize, what: &str| -> Result<f64, String> {
        let w = words
            .get(i)
            .ok_or_else(|| format!("the line ends before the {what} (truncated?)"))?;
        num(w.trim_end_matches(',')).ok_or_else(|| format!("{w:?} is not a number of {what}"))
    };
    let tests = number(0, "tests")?;
    expect(1, "tests,")?;
    let failures = number(2, "failures")?;
    expect(3, "failures")?;
    let iops = number(4, "iops")?;
    expect(5, "iops")?;
    let kib_s = number(6, "KB/s")?;
    expect(7, "KB/s")?;
    let status = words
        .get(8)
        .and_then(|w| w.strip_prefix('(')?.strip_suffix(')')?.parse::<i64>().ok())
        .ok_or_else(|| "no \"(status)\" at the end (truncated?)".to_string())?;
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
            (1000.0, 0.0, 3522.29, 28178.0, 0)
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
}
