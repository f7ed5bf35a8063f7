//! Parser of `perf bench mem memcpy` / `memset` output:
//!
//! ```text
//! # Running 'mem/memcpy' benchmark:
//! # function 'default' (Default memcpy() provided by glibc)
//! # Copying 1MB bytes ...
//!
//!       33.951331 GB/sec
//! ```
//!
//! One block per function (`-f all` prints them all). In tools/perf/bench/mem-functions.c
//! the rate is `size * nr_loops / seconds` from gettimeofday around the loop, printed by
//! `print_bps` with `K = 1024`: `GB/sec` is 2^30 bytes per second, `MB/sec` 2^20,
//! `KB/sec` 2^10 (printed with a stray `d`, `"%14lfd KB/sec"`), `bytes/sec` 1. With
//! `--format=simple` the block is the function line and bare bytes per second.

use std::io::BufRead;

use perflab_sys::lines::LossyLines;

use crate::perf_output::PerfParseError;

/// One function's result.
#[derive(Clone, Debug, PartialEq)]
pub struct PerfMemRun {
    /// `default`, `x86-64-movsb`, …
    pub function: String,
    /// The size as given to `-s`, from the `# Copying … bytes` line (default format).
    pub size_text: Option<String>,
    pub bytes_per_sec: f64,
}

impl PerfMemRun {
    /// The rate in MiB (2^20 bytes) per second, xfer's unit.
    pub fn mib_per_sec(&self) -> f64 {
        self.bytes_per_sec / (1u64 << 20) as f64
    }
}

fn bad(line: usize, reason: impl Into<String>) -> PerfParseError {
    PerfParseError::Bad {
        line,
        reason: reason.into(),
    }
}

/// Parses a rate line: `33.951331 GB/sec`, `512.000000d KB/sec`, or a bare number of
/// bytes per second (simple format). `None`: not a rate line.
fn rate(line: &str, lineno: usize) -> Option<Result<f64, PerfParseError>> {
    let (num, scale) = if let Some(n) = line.strip_suffix("GB/sec") {
        (n, (1u64 << 30) as f64)
    } else if let Some(n) = line.strip_suffix("MB/sec") {
        (n, (1u64 << 20) as f64)
    } else if let Some(n) = line.strip_suffix("KB/sec") {
        (n.trim_end().trim_end_matches('d'), 1024.0)
    } else if let Some(n) = line.strip_suffix("bytes/sec") {
        (n, 1.0)
    } else if line.ends_with("cycles/byte") {
        return Some(Err(bad(
            lineno,
            "cycles/byte (-c) output: this parser reads the gettimeofday rate",
        )));
    } else if line.starts_with(|c: char| c.is_ascii_digit()) {
        (line, 1.0)
    } else {
        return None;
    };
    let num = num.trim();
    Some(match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * scale),
        Ok(_) => Err(bad(
            lineno,
            format!(
                "rate {num:?}: perf timed no measurable interval (gettimeofday has 1 µs \
                 resolution; raise -l)"
            ),
        )),
        Err(_) => Err(bad(lineno, format!("rate {num:?} is not a number"))),
    })
}

/// Parses every function block. Fails on a block without a rate, a rate outside a block,
/// perf's own error lines, and on output with no block at all.
pub fn parse_perf_bench_mem(reader: impl BufRead) -> Result<Vec<PerfMemRun>, PerfParseError> {
    let mut out: Vec<PerfMemRun> = Vec::new();
    let mut open = false;
    let mut lines = LossyLines::new(reader);
    while let Some((lineno, text)) = lines
        .next_line()
        .map_err(|e| PerfParseError::Read(e.source.to_string()))?
    {
        let line = text.trim();
        if let Some(rest) = line.strip_prefix("# function '") {
            if open {
                return Err(bad(lineno, "a function block without a rate line"));
            }
            let name = rest.split('\'').next().unwrap_or("");
            if name.is_empty() {
                return Err(bad(lineno, "empty function name"));
            }
            out.push(PerfMemRun {
                function: name.to_string(),
                size_text: None,
                bytes_per_sec: 0.0,
            });
            open = true;
        } else if let Some(rest) = line.strip_prefix("# Copying ") {
            let size = rest.trim_end_matches("bytes ...").trim();
            if let Some(r) = out.last_mut().filter(|_| open) {
                r.size_text = Some(size.to_string());
            }
        } else if line.starts_with("Unknown function")
            || line.starts_with("# Memory allocation failed")
            || line.starts_with("Invalid size")
            || line.starts_with("Failed to open")
        {
            return Err(bad(lineno, format!("perf says: {line}")));
        } else if let Some(r) = rate(line, lineno) {
            let v = r?;
            match out.last_mut().filter(|_| open) {
                Some(run) => {
                    run.bytes_per_sec = v;
                    open = false;
                }
                None => return Err(bad(lineno, "a rate outside any function block")),
            }
        }
    }
    if open {
        return Err(PerfParseError::Missing("GB/sec"));
    }
    if out.is_empty() {
        return Err(PerfParseError::Missing("# function"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn one(name: &str) -> PerfMemRun {
        let mut runs = parse_perf_bench_mem(&data(name)[..]).unwrap();
        assert_eq!(runs.len(), 1, "{runs:?}");
        runs.remove(0)
    }

    #[test]
    fn gb_per_sec_is_binary() {
        let r = one("perf-6.1-mem-memcpy-1MB.txt");
        assert_eq!(r.function, "default");
        assert_eq!(r.size_text.as_deref(), Some("1MB"));
        assert_eq!(r.bytes_per_sec, 33.951331 * 1073741824.0);
        assert!((r.mib_per_sec() - 33.951331 * 1024.0).abs() < 1e-6);
        let r = one("perf-6.1-mem-memcpy-65536B.txt");
        assert_eq!(r.size_text.as_deref(), Some("65536B"));
        assert!((r.mib_per_sec() - 46.133208 * 1024.0).abs() < 1e-6);
    }

    #[test]
    fn all_functions_are_listed_in_order() {
        let runs = parse_perf_bench_mem(&data("perf-6.1-mem-memcpy-16MB-all.txt")[..]).unwrap();
        let names: Vec<&str> = runs.iter().map(|r| r.function.as_str()).collect();
        assert_eq!(
            names,
            ["default", "x86-64-unrolled", "x86-64-movsq", "x86-64-movsb"]
        );
        assert_eq!(runs[3].bytes_per_sec, 12.045174 * 1073741824.0);
    }

    #[test]
    fn simple_format_is_bytes_per_second() {
        let r = one("perf-6.1-mem-memcpy-simple.txt");
        assert_eq!(r.bytes_per_sec, 24972040962.133842);
        assert_eq!(r.size_text, None);
    }

    #[test]
    fn smaller_units_follow_print_bps() {
        // Constructed in print_bps's formats (perf prints these only below 1 GiB/s).
        let text = "# function 'default' (d)\n  512.000000d KB/sec\n\
                    # function 'x' (d)\n  3.500000 MB/sec\n\
                    # function 'y' (d)\n  100.000000 bytes/sec\n";
        let runs = parse_perf_bench_mem(text.as_bytes()).unwrap();
        assert_eq!(runs[0].bytes_per_sec, 512.0 * 1024.0);
        assert_eq!(runs[1].bytes_per_sec, 3.5 * 1048576.0);
        assert_eq!(runs[2].bytes_per_sec, 100.0);
    }

    #[test]
    fn refuses_infinite_errors_and_partial_output() {
        let e = parse_perf_bench_mem(&data("perf-6.1-mem-memcpy-4KB-inf.txt")[..]).unwrap_err();
        assert!(e.to_string().contains("raise -l"), "{e}");
        let e = parse_perf_bench_mem(&data("perf-6.1-mem-memcpy-unknown.txt")[..]).unwrap_err();
        assert!(e.to_string().contains("Unknown function: nosuch"), "{e}");
        let e = parse_perf_bench_mem(&data("perf-6.1-mem-memcpy-cycles.txt")[..]).unwrap_err();
        assert!(e.to_string().contains("cycles counter"), "{e}");
        assert_eq!(
            parse_perf_bench_mem(&b""[..]).unwrap_err(),
            PerfParseError::Missing("# function")
        );
        assert_eq!(
            parse_perf_bench_mem(&b"# function 'default' (x)\n"[..]).unwrap_err(),
            PerfParseError::Missing("GB/sec")
        );
        assert!(parse_perf_bench_mem(&b"  1.0 GB/sec\n"[..]).is_err());
        assert!(parse_perf_bench_mem(&b"# function 'a' (x)\n -1.0 GB/sec\n"[..]).is_err());
        assert!(parse_perf_bench_mem(&b"# function 'a' (x)\n 1.2.3 GB/sec\n"[..]).is_err());
    }

    proptest! {
        #[test]
        fn never_panics_on_any_text(s in "\\PC*") {
            let _ = parse_perf_bench_mem(s.as_bytes());
        }

        #[test]
        fn never_panics_on_near_miss_lines(
            lines in proptest::collection::vec(
                prop_oneof![
                    "# function '[a-z0-9-]{0,8}'? ?\\(.{0,8}\\)?",
                    "# Copying [0-9A-Za-z]{0,6} bytes ...",
                    "[0-9.einf+-]{0,12}d? ?(GB|MB|KB|bytes)/sec",
                    "[0-9.e+-]{0,12}",
                ],
                0..8,
            )
        ) {
            if let Ok(runs) = parse_perf_bench_mem(lines.join("\n").as_bytes()) {
                prop_assert!(runs.iter().all(|r| r.bytes_per_sec.is_finite() && r.bytes_per_sec > 0.0));
            }
        }
    }
}
