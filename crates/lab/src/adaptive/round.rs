//! The next round of adaptive repetitions: pure, from the plan and the records so far.
//!
//! A point that needs more gets one more repetition of *every* variant measured there, in
//! the order the plan runs them (A B at the point, then the next point), so comparisons
//! stay balanced and interleaved as in the planned phase. The cap counts planned
//! measurements, so no point and variant is ever planned beyond it, and every round
//! brings each point it touches one step closer to the cap: the rounds always end.

use std::collections::BTreeMap;

use perflab_core::record::{MeasurementRecord, PlannedMeasurement, Role};

use super::status::adaptive_status;
use perflab_core::adaptive_target::AdaptiveTarget;

/// What the plan already holds for one point and variant.
struct Planned<'a> {
    first_seq: u32,
    count: u32,
    max_rep: u32,
    last: &'a PlannedMeasurement,
}

/// The seq after the plan's last: where measurements an extra round appends start.
pub(crate) fn first_free_seq(plan: &[PlannedMeasurement]) -> u32 {
    plan.iter()
        .map(|p| p.seq.saturating_add(1))
        .max()
        .unwrap_or(0)
}

/// The measurements to append for the next round, numbered after the plan's last seq;
/// empty when every point has converged or reached the cap. `metric` is the judged
/// metric ([`super::judged_metric`]).
pub fn next_round(
    target: &AdaptiveTarget,
    metric: Option<&str>,
    plan: &[PlannedMeasurement],
    ms: &[MeasurementRecord],
) -> Vec<PlannedMeasurement> {
    let mut planned: BTreeMap<(u32, &str), Planned> = BTreeMap::new();
    // Telemetry repetitions are neither counted against the cap nor judged.
    for p in plan.iter().filter(|p| p.role == Role::Headline) {
        let e = planned
            .entry((p.point, p.variant.as_str()))
            .or_insert(Planned {
                first_seq: p.seq,
                count: 0,
                max_rep: p.rep,
                last: p,
            });
        e.count += 1;
        e.first_seq = e.first_seq.min(p.seq);
        e.max_rep = e.max_rep.max(p.rep);
        if p.seq >= e.last.seq {
            e.last = p;
        }
    }
    let below_cap = |point: u32, variant: &str| {
        planned
            .get(&(point, variant))
            .is_some_and(|p| p.count < target.max_reps)
    };
    let mut needy: Vec<u32> = adaptive_status(target, metric, ms)
        .into_iter()
        .filter(|s| !s.converged && below_cap(s.point, &s.variant))
        .map(|s| s.point)
        .collect();
    needy.dedup();

    let mut next_seq = first_free_seq(plan);
    let mut out = Vec::new();
    for point in needy {
        let mut variants: Vec<&Planned> = planned
            .range((point, "")..)
            .take_while(|((p, _), _)| *p == point)
            .map(|(_, v)| v)
            .filter(|v| v.count < target.max_reps)
            .collect();
        variants.sort_by_key(|v| v.first_seq);
        for v in variants {
            out.push(PlannedMeasurement {
                seq: next_seq,
                point,
                params: v.last.params.clone(),
                variant: v.last.variant.clone(),
                rep: v.max_rep.saturating_add(1),
                role: Role::Headline,
            });
            next_seq = next_seq.saturating_add(1);
        }
    }
    out
}
