//! The execution order of a run: at each point, repetitions interleave the variants
//! (A B A B …), never all of A then all of B, so slow drift of the machine (thermal,
//! background load, page cache) falls on every variant alike. Telemetry repetitions
//! (numbered apart, from 0) follow a point's headline ones, interleaved the same way.

use perflab_core::{Grid, RunSpec};
use perflab_store::{PlannedMeasurement, Role};

/// Plans every measurement of `spec` (resolved as `grid`) for the variants in `available`
/// (by name, in the spec's order).
pub fn plan(spec: &RunSpec, grid: &Grid, available: &[String]) -> Vec<PlannedMeasurement> {
    let variants: Vec<(usize, _)> = spec
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| available.contains(&v.name))
        .collect();
    let mut out = Vec::with_capacity(grid.points() * variants.len() * spec.repetitions as usize);
    for point in 0..grid.points() {
        let params: Vec<_> = variants
            .iter()
            .map(|(i, _)| grid.params(point, *i))
            .collect();
        let rounds = (0..spec.repetitions)
            .map(|rep| (Role::Headline, rep))
            .chain((0..spec.telemetry_reps).map(|rep| (Role::Telemetry, rep)));
        for (role, rep) in rounds {
            for ((_, v), p) in variants.iter().zip(&params) {
                out.push(PlannedMeasurement {
                    seq: out.len() as u32,
                    point: point as u32,
                    params: (*p).clone(),
                    variant: v.name.clone(),
                    rep,
                    role,
                });
            }
        }
    }
    out
}
