//! `perflab crosscheck gpu`: gpuxfer (through the lab runner) against the plain reference
//! loop ([`crate::gpu_reference`]), per direction, host memory kind and size, in
//! interleaved pairs; each row is the median of the per-pair ratios with its interval,
//! judged against ±tolerance ([`crate::gpu_pairs`] has the method and why). The two
//! differ in one way on purpose: gpuxfer records an event between copies (or groups of
//! short copies) for its histogram, the reference only around its loop; the ratio says
//! what that costs.

use std::io::Write;

use perflab_core::format_size;

use crate::error::{input, Error, Result};
use crate::gpu_pairs::{self, Estimate, Judgement};
use crate::gpu_reference::{self, RowError, Way};
use crate::lab_side::LabSide;
use crate::options::{tolerance, Options};
use crate::say;
use crate::tolerance::Verdicts;

const BACKINGS: &[&str] = &["4k", "thp", "2m", "pinned"];

/// One row's outcome, for the table and for tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub direction: &'static str,
    pub backing: &'static str,
    pub size: u64,
    /// Medians of each side's values, MiB/s, for scale.
    pub perflab_mib_s: f64,
    pub reference_mib_s: f64,
    pub estimate: Estimate,
    pub judgement: Judgement,
}

pub fn run(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let duration = perflab_core::parse_duration(&a.duration).map_err(input)?;
    let tol = tolerance(a, 3.0)?;
    let sizes = crate::options::copy_sizes(a)?;
    if let Err(e) = perflab_cuda::Driver::load() {
        return Err(input(format!("crosscheck gpu: {e}")));
    }
    say!(
        out,
        "gpuxfer (perflab) against a plain CUDA-events loop, {duration} s per measurement, in \
         interleaved pairs ({}-{} pinned/2m, {}-{} pageable); ratio = median of the per-pair \
         ratios, CI = its order-statistic interval (>= {:.0}%), judged against ±{tol}%",
        gpu_pairs::DIRECT.0,
        gpu_pairs::DIRECT.1,
        gpu_pairs::PAGEABLE.0,
        gpu_pairs::PAGEABLE.1,
        gpu_pairs::COVERAGE * 100.0
    );
    say!(
        out,
        "{:>4} {:>7} {:>10}  {:>10}  {:>10}  {:>6}  {:>15}  {:>5}  verdict",
        "dir",
        "host",
        "size",
        "perflab",
        "reference",
        "ratio",
        "CI",
        "pairs"
    );
    let mut lab = LabSide::new()?;
    let mut rows = Vec::new();
    for (way, dir) in [(Way::HtoD, "h2d"), (Way::DtoH, "d2h")] {
        for &backing in BACKINGS {
            for &size in &sizes {
                let head = format!("{dir:>4} {backing:>7} {:>10}", format_size(size));
                match row(&mut lab, (way, dir), backing, size, duration, tol) {
                    Ok(r) => {
                        verdicts.interval(
                            format!("{dir} {backing} {}", format_size(size)),
                            r.estimate.median,
                            r.estimate.ci,
                            tol,
                        );
                        say!(out, "{head}  {}", cells(&r));
                        rows.push(r);
                    }
                    // A host memory kind this machine cannot give (no hugetlb pool) is a
                    // row without a verdict, said plainly; anything else fails the check.
                    Err(RowError::NoHostMemory(e)) if backing == "2m" => {
                        say!(out, "{head}  not measured: {e}");
                        break;
                    }
                    Err(e) => {
                        return Err(Error::Failed(format!(
                            "crosscheck gpu: {dir} {backing}: {e}"
                        )))
                    }
                }
            }
        }
    }
    let count = |j| rows.iter().filter(|r| r.judgement == j).count();
    say!(
        out,
        "{} rows: {} within ±{tol}%, {} OUTSIDE, {} undecided",
        rows.len(),
        count(Judgement::Within),
        count(Judgement::Outside),
        count(Judgement::Undecided)
    );
    Ok(())
}

/// `  12345  12300  1.004  [0.991, 1.012]     12  within`.
pub fn cells(r: &Row) -> String {
    let e = &r.estimate;
    format!(
        "{:>10.0}  {:>10.0}  {:>6.3}  [{:.3}, {:.3}]  {:>5}  {}",
        r.perflab_mib_s,
        r.reference_mib_s,
        e.median,
        e.ci.0,
        e.ci.1,
        e.pairs,
        r.judgement.word()
    )
}

/// One row: pairs until decided (see [`gpu_pairs::decide`]).
pub fn row(
    lab: &mut LabSide,
    (way, dir): (Way, &'static str),
    backing: &'static str,
    size: u64,
    duration: f64,
    tol: f64,
) -> std::result::Result<Row, RowError> {
    let (estimate, judgement, pairs) = gpu_pairs::decide(gpu_pairs::plan(backing), tol, |k| {
        pair(lab, (way, dir), backing, size, duration, k)
    })?;
    let median = |pick: fn(&(f64, f64)) -> f64| {
        perflab_stats::median(pairs.iter().map(pick)).unwrap_or(f64::NAN)
    };
    Ok(Row {
        direction: dir,
        backing,
        size,
        perflab_mib_s: median(|p| p.0),
        reference_mib_s: median(|p| p.1),
        estimate,
        judgement,
    })
}

/// Pair `k`: (perflab, reference) MiB/s, the reference first on odd pairs so that order
/// effects (a warm cache, a driver's lazily mapped staging) fall on both sides alike.
fn pair(
    lab: &mut LabSide,
    (way, dir): (Way, &str),
    backing: &str,
    size: u64,
    duration: f64,
    k: usize,
) -> std::result::Result<(f64, f64), RowError> {
    let reference = || gpu_reference::mib_s(way, backing, size, duration);
    let perflab = |lab: &mut LabSide| {
        let params = [
            ("direction", dir.to_string()),
            ("backing", backing.to_string()),
            ("size", size.to_string()),
            ("duration", format!("{duration}")),
        ];
        let out = lab
            .measure("gpuxfer", &params)
            .map_err(|e| RowError::of_measurement(e.to_string()))?;
        out.metric("bandwidth_mib_s")
            .map(|m| m.value)
            .ok_or_else(|| RowError::Failed("gpuxfer recorded no bandwidth_mib_s".into()))
    };
    if k % 2 == 1 {
        let theirs = reference()?;
        Ok((perflab(lab)?, theirs))
    } else {
        let ours = perflab(lab)?;
        Ok((ours, reference()?))
    }
}
