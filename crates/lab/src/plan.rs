//! The execution order of a run: at each point, repetitions interleave the variants
//! (A B A B …), never all of A then all of B, so slow drift of the machine (thermal,
//! background load, page cache) falls on every variant alike. Telemetry repetitions
//! (numbered apart, from 0) follow a point's headline ones, interleaved the same way.

use perflab_core::Workload;
use perflab_store::{PlannedMeasurement, Role};

use crate::error::Result;
use crate::expand::ExpandedSpec;

/// Plans every measurement of `spec` for the variants in `available` (by name, in the
/// spec's order).
pub fn plan(
    spec: &ExpandedSpec,
    workload: &dyn Workload,
    available: &[String],
) -> Result<Vec<PlannedMeasurement>> {
    let variants: Vec<_> = spec
        .variants
        .iter()
        .filter(|v| available.contains(&v.name))
        .collect();
    let mut out =
        Vec::with_capacity(spec.points.len() * variants.len() * spec.repetitions as usize);
    for point in 0..spec.points.len() {
        let params: Vec<_> = variants
            .iter()
            .map(|v| spec.params_for(workload, point, v))
            .collect::<Result<_>>()?;
        let rounds = (0..spec.repetitions)
            .map(|rep| (Role::Headline, rep))
            .chain((0..spec.telemetry_reps).map(|rep| (Role::Telemetry, rep)));
        for (role, rep) in rounds {
            for (v, p) in variants.iter().zip(&params) {
                out.push(PlannedMeasurement {
                    seq: out.len() as u32,
                    point: point as u32,
                    params: p.clone(),
                    variant: v.name.clone(),
                    rep,
                    role,
                });
            }
        }
    }
    Ok(out)
}
