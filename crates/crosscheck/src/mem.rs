//! Cross-check of `xfer engine=memcpy state=pinned backing=4k data=zero` against
//! `perf bench mem memcpy -f default`, size by size.
//!
//! What perf 6.1 measures (tools/perf/bench/mem-functions.c): it callocs the destination
//! and then the source, memsets the source (so it is not read from the shared zero page),
//! copies once to fault the destination in, then reads gettimeofday around `-l` calls of
//! glibc's memcpy (`default`) and prints size × loops / seconds in GB/sec of 2^30 bytes.
//! xfer's memcpy engine does the same work: glibc memcpy between two written, faulted-in
//! (and mlock'd) buffers, timed only around the copies, in MiB/s of 2^20 bytes; the
//! parser converts perf's figure to MiB/s.
//!
//! Three differences are removed on purpose:
//! - **Source content.** perf copies zeros (its memset); xfer copies a pattern unless
//!   `data=zero`. On the KVM guests here zeros copy faster: a C loop over 256M buffers,
//!   alternating the source between a pattern and zeros, ran 15.3k–16.0k MiB/s with the
//!   pattern and 15.8k–16.9k with zeros (5–7%). The crosscheck runs xfer with `data=zero`.
//! - **Relative alignment.** xfer's buffers start on page boundaries. perf's 64K buffers
//!   come from the malloc heap, 16 bytes apart in alignment (chunk headers), which makes
//!   glibc's memcpy about 9% slower here (a C loop over the same 64K: 43.2k MiB/s with
//!   calloc'd buffers, 47.4k with page-aligned ones). perf is therefore run with
//!   `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4096`, so every buffer is a fresh mmap'd
//!   chunk at the same offset in its page, like xfer's (buffers of 128K and more are
//!   mmap'd chunks anyway).
//! - **Page size.** perf 6.1 has no page-size option (later versions add `--page`), so
//!   the comparison is 4 KiB pages only: xfer `backing=4k`, and perf's mmap'd buffers on a
//!   machine whose THP mode is `madvise` or `never` (with `always` perf's buffers may get
//!   huge pages and the ratio says so).
//!
//! Neither side is pinned to a CPU. Each size is measured in back-to-back pairs, the order
//! alternating, until the median pair ratio's interval is decided against the tolerance
//! ([`crate::pairs`]): on this 2-vCPU guest one 1M run lands
//! at about 28.7k or 35k MiB/s depending on where its buffers fall in physical memory, for
//! both tools alike, and 16M (a 32 MiB working set against a 32 MiB L3 shared with other
//! guests) and 256M (DRAM) scatter by ±5–9% from pair to pair, more than the tools differ.
//!
//! # Results here
//!
//! AMD EPYC 2-vCPU KVM guest, kernel 6.18, perf 6.1.187, THP `madvise`, release build,
//! `cargo run --release -p perflab-crosscheck --example mem -- SECONDS`:
//!
//! | size | 1 s runs | 2 s runs | 15 pairs of 1 s, median pair ratio |
//! |---|---|---|---|
//! | 64K | 0.994 | 0.992 | — |
//! | 1M | 1.19 (modes split) | 0.987 | 0.990 |
//! | 16M | 1.021 | 0.955 | — |
//! | 256M | 1.011 | 1.050 | 1.010 |
//!
//! 64K is steady at 0.99 (xfer's loop goes through a trait object and two option checks
//! per copy, a few ns of 1.35 µs). A 5-pair median elsewhere lands within ±5% and pooled
//! pairs within ±1%: xfer measures what perf does, and single medians here are as noisy
//! as the machine.

use std::process::{Command, Stdio};

use perflab_core::format_size;

use crate::lab_side::{LabSide, LabSideError};
use crate::pairs::{self, Estimate, Judgement};
use crate::peer_tool::{self, PeerError};

/// perf's glibc buffers as fresh mmap'd chunks, page-aligned relative to each other.
const PERF_TUNABLES: &str = "glibc.malloc.mmap_threshold=4096";

/// One size measured by both tools. Rates are MiB (2^20 bytes) per second, medians over
/// the pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct MemCrossRow {
    pub size: u64,
    pub perflab_mib_s: f64,
    pub peer_mib_s: f64,
    /// The median of the pair ratios perflab / perf and its interval.
    pub estimate: Estimate,
    pub judgement: Judgement,
    /// (perflab, perf) MiB/s of each pair, in the order run.
    pub pairs: Vec<(f64, f64)>,
    /// perf's `-l` in the measured runs.
    pub peer_loops: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum MemCrossError {
    #[error(transparent)]
    Peer(#[from] PeerError),
    #[error("`{cmd}` printed no result for the default function")]
    NoDefault { cmd: String },
    #[error("perflab xfer memcpy at {}: {source}", format_size(*size))]
    Xfer {
        size: u64,
        #[source]
        source: LabSideError,
    },
}

/// Calibration runs of perf move about this many bytes.
const CALIBRATION_BYTES: u64 = 256 << 20;

/// Runs xfer memcpy (pinned, 4k, zero data; through the lab runner into `lab`) and `perf
/// bench mem memcpy -f default` at each size for about `duration_s` each, in interleaved
/// pairs until each size's ratio is decided against ±`pct` % or `plan`'s most are spent.
pub fn memcpy_vs_perf_bench(
    lab: &mut LabSide,
    sizes: &[u64],
    duration_s: f64,
    (plan, pct): ((usize, usize), f64),
) -> Result<Vec<MemCrossRow>, MemCrossError> {
    peer_tool::check_perf("perf", &["bench", "mem", "memcpy"], "--nr_loops")?;
    let mut rows = Vec::with_capacity(sizes.len());
    for (i, &size) in sizes.iter().enumerate() {
        let calib_loops = (CALIBRATION_BYTES / size.max(1)).max(1);
        let calib = run_peer(size, calib_loops)?;
        let loops = (duration_s * calib * (1u64 << 20) as f64 / size as f64)
            .clamp(1.0, i32::MAX as f64) as u64;
        let (estimate, judgement, pairs) = pairs::decide(plan, pct, |k| {
            if (i + k) % 2 == 1 {
                let peer = run_peer(size, loops)?;
                Ok::<_, MemCrossError>((run_perflab(lab, size, duration_s)?, peer))
            } else {
                let ours = run_perflab(lab, size, duration_s)?;
                Ok((ours, run_peer(size, loops)?))
            }
        })?;
        let side = |pick: fn(&(f64, f64)) -> f64| {
            perflab_stats::median(pairs.iter().map(pick)).unwrap_or(f64::NAN)
        };
        rows.push(MemCrossRow {
            size,
            perflab_mib_s: side(|p| p.0),
            peer_mib_s: side(|p| p.1),
            estimate,
            judgement,
            pairs,
            peer_loops: loops,
        });
    }
    Ok(rows)
}

/// xfer's memcpy rate in MiB/s, measured by the lab runner.
fn run_perflab(lab: &mut LabSide, size: u64, duration_s: f64) -> Result<f64, MemCrossError> {
    let wrap = |source: LabSideError| MemCrossError::Xfer { size, source };
    let params = [
        ("engine", "memcpy".to_string()),
        ("state", "pinned".to_string()),
        ("backing", "4k".to_string()),
        ("data", "zero".to_string()),
        ("size", size.to_string()),
        ("duration", format!("{duration_s}")),
    ];
    let out = lab.measure("xfer", &params).map_err(wrap)?;
    out.metric("bandwidth_mib_s")
        .map(|m| m.value)
        .ok_or_else(|| wrap(LabSideError::Failed("no bandwidth_mib_s metric".into())))
}

/// perf's memcpy rate in MiB/s.
fn run_peer(size: u64, loops: u64) -> Result<f64, MemCrossError> {
    let size_arg = format!("{size}B");
    let loops_arg = loops.to_string();
    let args = [
        "bench", "mem", "memcpy", "-s", &size_arg, "-l", &loops_arg, "-f", "default",
    ];
    let cmd = format!("GLIBC_TUNABLES={PERF_TUNABLES} perf {}", args.join(" "));
    let out = Command::new("perf")
        .args(args)
        .env("GLIBC_TUNABLES", PERF_TUNABLES)
        .stdin(Stdio::null())
        .output();
    let out = peer_tool::succeeded(&cmd, "", out)?;
    // With `-f default` perf prints one function, so its bandwidth is a top-level metric.
    peer_tool::parse_perf_bench(&cmd, &out.stdout)?
        .metric("bandwidth_mib_s")
        .map(|m| m.value)
        .ok_or(MemCrossError::NoDefault { cmd })
}
