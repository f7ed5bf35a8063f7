//! `perflab crosscheck gpu`: gpuxfer (through the lab runner) against the plain reference
//! loop ([`crate::gpu_reference`]), per direction, host memory kind and size, in
//! alternating pairs, medians side by side. The two differ in one way on purpose:
//! gpuxfer records an event between copies (or groups of short copies) for its
//! histogram, the reference only around its loop; the ratio says what that costs.

use std::io::Write;

use perflab_core::format_size;

use crate::error::{input, Error, Result};
use crate::gpu_reference::{self, Way};
use crate::lab_side::LabSide;
use crate::options::{tolerance, Options};
use crate::say;
use crate::tolerance::Verdicts;

/// Alternating pairs per row.
pub const PAIRS: usize = 3;
const BACKINGS: &[&str] = &["4k", "thp", "2m", "pinned"];

pub fn run(a: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let duration = perflab_core::parse_duration(&a.duration).map_err(input)?;
    let tol = tolerance(a, 3.0)?;
    let sizes = crate::options::copy_sizes(a)?;
    if let Err(e) = perflab_cuda::Driver::load() {
        return Err(input(format!("crosscheck gpu: {e}")));
    }
    say!(
        out,
        "gpuxfer (perflab) against a plain CUDA-events loop, {duration} s per measurement, \
         medians of {PAIRS} alternating pairs, MiB/s"
    );
    say!(
        out,
        "{:>4} {:>7} {:>10}  {:>14}  {:>14}  {:>7}",
        "dir",
        "host",
        "size",
        "perflab",
        "reference",
        "ratio"
    );
    let mut lab = LabSide::new()?;
    let mut ratios = Vec::new();
    for (way, dir) in [(Way::HtoD, "h2d"), (Way::DtoH, "d2h")] {
        for &backing in BACKINGS {
            for (i, &size) in sizes.iter().enumerate() {
                let row = format!("{dir:>4} {backing:>7} {:>10}", format_size(size));
                match pairs(&mut lab, way, dir, backing, size, duration, i) {
                    Ok((ours, theirs)) => {
                        let ratio = ours / theirs;
                        ratios.push(ratio);
                        verdicts.ratio(
                            format!("{dir} {backing} {}", format_size(size)),
                            ratio,
                            tol,
                        );
                        say!(out, "{row}  {ours:>14.0}  {theirs:>14.0}  {ratio:>7.3}");
                    }
                    // A host memory kind this machine cannot give (no hugetlb pool) is a
                    // row without a verdict, said plainly; anything else fails the check.
                    Err(e) if backing == "2m" && e.contains("hugetlb") => {
                        say!(out, "{row}  not measured: {e}");
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
    let worst = ratios.iter().map(|r| (r - 1.0).abs()).fold(0.0, f64::max);
    say!(
        out,
        "largest deviation {:.1}% (tolerance ±{tol}%)",
        worst * 100.0
    );
    Ok(())
}

/// Medians of [`PAIRS`] alternating (perflab, reference) measurements.
fn pairs(
    lab: &mut LabSide,
    way: Way,
    dir: &str,
    backing: &str,
    size: u64,
    duration: f64,
    row: usize,
) -> std::result::Result<(f64, f64), String> {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for k in 0..PAIRS {
        let reference = || gpu_reference::mib_s(way, backing, size, duration);
        let perflab = |lab: &mut LabSide| {
            let params = [
                ("direction", dir.to_string()),
                ("backing", backing.to_string()),
                ("size", size.to_string()),
                ("duration", format!("{duration}")),
            ];
            let out = lab.measure("gpuxfer", &params).map_err(|e| e.to_string())?;
            out.metric("bandwidth_mib_s")
                .map(|m| m.value)
                .ok_or_else(|| "gpuxfer recorded no bandwidth_mib_s".to_string())
        };
        // The reference goes first on every other pair, so order effects cancel.
        if (row + k) % 2 == 1 {
            theirs.push(reference()?);
            ours.push(perflab(lab)?);
        } else {
            ours.push(perflab(lab)?);
            theirs.push(reference()?);
        }
    }
    Ok((median(ours), median(theirs)))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
