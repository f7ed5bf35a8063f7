//! What leaving points out of a run for lack of a resource shares, whatever the resource
//! (memory for buffers in `fit`, the locked-memory limit in `memlock`): each point's need,
//! the largest over its variants, and the leaving out itself, recorded in the spec's
//! skipped points so the run says which were left out and why.

use std::collections::BTreeMap;

use perflab_core::{Grid, ParamError, Params, RunSpec, SkippedPoint};

/// Each grid point's need: the largest `need` of its variants' parameters.
pub(crate) fn needs(
    grid: &Grid,
    need: impl Fn(&Params) -> Result<u64, ParamError>,
) -> Result<Vec<u64>, ParamError> {
    (0..grid.points())
        .map(|point| {
            grid.point(point)
                .iter()
                .try_fold(0, |most, p| Ok(most.max(need(p)?)))
        })
        .collect()
}

/// A point as a person would write it: `k=v k=v`.
pub(crate) fn describe(point: &BTreeMap<String, String>) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Leaves out of `spec` and `grid` every point `why` (given its index) has a reason for,
/// recording each in the spec's skipped points; returns each point left out, described,
/// with its reason, in order.
pub(crate) fn skip(
    spec: &mut RunSpec,
    grid: &mut Grid,
    why: impl Fn(usize) -> Option<String>,
) -> Vec<(String, String)> {
    let mut kept = Vec::new();
    let mut keep = Vec::with_capacity(spec.points.len());
    let mut skipped = Vec::new();
    for (i, point) in spec.points.drain(..).enumerate() {
        match why(i) {
            Some(reason) => {
                skipped.push((describe(&point), reason.clone()));
                spec.skipped.push(SkippedPoint { point, reason });
                keep.push(false);
            }
            None => {
                kept.push(point);
                keep.push(true);
            }
        }
    }
    spec.points = kept;
    grid.retain_points(&keep);
    skipped
}
