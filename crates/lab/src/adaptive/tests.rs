use std::collections::BTreeMap;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, PlannedMeasurement};
use perflab_core::{Better, Metric, ParamValue, Params, Unit, WorkloadOutput};
use proptest::prelude::*;

use super::*;

fn params(point: u32) -> Params {
    let mut p = BTreeMap::new();
    p.insert("size".to_string(), ParamValue::Int(4096 << point));
    Params(p)
}

/// `points` × `variants` × `reps`, interleaved as the planner does.
fn plan(points: u32, variants: &[&str], reps: u32) -> Vec<PlannedMeasurement> {
    let mut out = Vec::new();
    for point in 0..points {
        for rep in 0..reps {
            for v in variants {
                out.push(PlannedMeasurement {
                    seq: out.len() as u32,
                    point,
                    params: params(point),
                    variant: v.to_string(),
                    rep,
                    role: Default::default(),
                });
            }
        }
    }
    out
}

/// The record of `p` with `value` (`None`: failed).
fn rec(p: &PlannedMeasurement, value: Option<f64>) -> MeasurementRecord {
    MeasurementRecord {
        seq: p.seq,
        point: p.point,
        params: p.params.clone(),
        variant: p.variant.clone(),
        rep: p.rep,
        status: match value {
            Some(_) => MeasurementStatus::Ok,
            None => MeasurementStatus::Failed("broken".into()),
        },
        started_at: 0.0,
        elapsed_s: 0.0,
        output: WorkloadOutput {
            metrics: value
                .map(|v| vec![Metric::new("value", v, Unit::Count, Better::Higher)])
                .unwrap_or_default(),
            ..WorkloadOutput::default()
        },
        telemetry: Vec::new(),
        role: Default::default(),
        monitors: Vec::new(),
    }
}

fn target(pct: f64, cap: u32) -> AdaptiveTarget {
    AdaptiveTarget {
        target_ci_pct: pct,
        max_reps: cap,
    }
}

/// Records for the whole plan: point `noisy` spreads ±10%, every other point is exact.
fn records(plan: &[PlannedMeasurement], noisy: u32) -> Vec<MeasurementRecord> {
    plan.iter()
        .map(|p| {
            let v = if p.point == noisy {
                100.0 + [-10.0, 0.0, 10.0, -5.0, 5.0][p.rep as usize % 5]
            } else {
                100.0
            };
            rec(p, Some(v))
        })
        .collect()
}

#[test]
fn only_imprecise_points_get_a_balanced_round_numbered_after_the_plan() {
    let plan = plan(3, &["a", "b"], 3);
    let ms = records(&plan, 1);
    let round = next_round(&target(1.0, 30), Some("value"), &plan, &ms);
    // Point 1 only, one more rep of both variants, in the plan's variant order.
    let got: Vec<_> = round
        .iter()
        .map(|p| (p.seq, p.point, p.variant.as_str(), p.rep))
        .collect();
    assert_eq!(got, vec![(18, 1, "a", 3), (19, 1, "b", 3)]);
    assert_eq!(round[0].params, params(1));
    // A loose target: nothing more.
    assert!(next_round(&target(50.0, 30), Some("value"), &plan, &ms).is_empty());
}

#[test]
fn a_converged_variant_is_repeated_with_the_one_that_is_not() {
    let plan = plan(1, &["a", "b"], 3);
    let ms: Vec<_> = plan
        .iter()
        .map(|p| {
            let v = match (p.variant.as_str(), p.rep) {
                ("a", _) => 100.0,
                (_, r) => 90.0 + 10.0 * r as f64,
            };
            rec(p, Some(v))
        })
        .collect();
    let status = adaptive_status(&target(1.0, 30), Some("value"), &ms);
    assert!(status[0].converged && !status[1].converged, "{status:?}");
    let round = next_round(&target(1.0, 30), Some("value"), &plan, &ms);
    let variants: Vec<_> = round.iter().map(|p| p.variant.as_str()).collect();
    assert_eq!(variants, vec!["a", "b"]);
}

#[test]
fn the_cap_stops_a_point_and_failures_count_toward_it() {
    let plan = plan(2, &["a"], 4);
    // Point 0 always fails, point 1 is noisy: both would want more.
    let ms: Vec<_> = plan
        .iter()
        .map(|p| match p.point {
            0 => rec(p, None),
            _ => rec(p, Some(100.0 + 10.0 * (p.rep % 2) as f64)),
        })
        .collect();
    let status = adaptive_status(&target(1.0, 4), Some("value"), &ms);
    assert_eq!(status.len(), 2);
    assert_eq!((status[0].attempts, status[0].n), (4, 0));
    assert_eq!(status[0].half_width_pct, None);
    assert!(
        status.iter().all(|s| s.hit_cap && !s.converged),
        "{status:?}"
    );
    assert!(next_round(&target(1.0, 4), Some("value"), &plan, &ms).is_empty());
    // Below the cap, the failing point is repeated too, but only up to it.
    let round = next_round(&target(1.0, 5), Some("value"), &plan, &ms);
    assert_eq!(round.len(), 2);
    assert!(round.iter().all(|p| p.rep == 4));
}

#[test]
fn planned_but_unmeasured_repetitions_count_toward_the_cap() {
    let plan = plan(1, &["a"], 5);
    let ms: Vec<_> = records(&plan[..3], 0);
    // Five planned already: a cap of 5 allows nothing more.
    assert!(next_round(&target(0.001, 5), Some("value"), &plan, &ms).is_empty());
}

#[test]
fn one_value_is_not_converged_and_no_metric_converges_nothing() {
    let plan = plan(1, &["a"], 1);
    let ms = records(&plan, 9);
    let status = adaptive_status(&target(50.0, 30), Some("value"), &ms);
    assert!(!status[0].converged && status[0].half_width_pct.is_none());
    assert_eq!(
        next_round(&target(50.0, 30), Some("value"), &plan, &ms).len(),
        1
    );
    let status = adaptive_status(&target(50.0, 30), None, &ms);
    assert_eq!(status[0].n, 0);
}

#[test]
fn the_judged_metric_is_the_primary_one_else_the_first() {
    let plan = plan(1, &["a"], 2);
    let mut ms = records(&plan, 9);
    ms[0].status = MeasurementStatus::Failed("x".into());
    ms[1]
        .output
        .metrics
        .insert(0, Metric::new("other", 1.0, Unit::Count, Better::Higher));
    assert_eq!(judged_metric(Some("value"), &ms).as_deref(), Some("value"));
    assert_eq!(
        judged_metric(Some("missing"), &ms).as_deref(),
        Some("other")
    );
    assert_eq!(judged_metric(None, &ms[..1]), None);
}

#[test]
fn half_widths_are_percent_of_the_median() {
    let cfg = perflab_stats::StatsConfig::default();
    let (median, hw) = half_width_pct(&[100.0; 5], &cfg).unwrap();
    assert_eq!((median, hw), (100.0, 0.0));
    let (median, hw) = half_width_pct(&[90.0, 100.0, 110.0, 95.0, 105.0], &cfg).unwrap();
    assert_eq!(median, 100.0);
    // The bootstrap interval of five values lies within their range: at most ±10%.
    assert!(hw > 0.0 && hw <= 10.0, "{hw}");
    assert_eq!(
        half_width_pct(&[0.0, 0.0, 1.0], &cfg).map(|x| x.1),
        Some(f64::INFINITY)
    );
    assert_eq!(half_width_pct(&[1.0, f64::NAN], &cfg), None);
}

#[test]
fn the_summary_names_the_points_at_the_cap() {
    let plan = plan(3, &["a"], 4);
    let ms = records(&plan, 1);
    let t = target(1.0, 4);
    let status = adaptive_status(&t, Some("value"), &ms);
    // The size in the unit its role gives it, as the report's rows write it.
    let mut roles = perflab_core::ParamRoles::default();
    roles.insert("size", perflab_core::ParamRole::SizeAxis);
    let labels = point_labels(&roles, &ms);
    assert_eq!(labels[&1], "size=8 KiB");
    // A parameter without a role is as stored.
    assert_eq!(
        point_labels(&perflab_core::ParamRoles::default(), &ms)[&1],
        "size=8192"
    );
    let line = summary_line(&t, &status, &labels);
    assert!(
        line.starts_with(
            "target ±1%: 2 of 3 points converged; 1 hit the cap of 4 repetitions: size=8 KiB (±"
        ),
        "{line}"
    );
    let loose = target(50.0, 4);
    let status = adaptive_status(&loose, Some("value"), &ms);
    let line = summary_line(&loose, &status, &labels);
    assert_eq!(line, "target ±50%: 3 of 3 points converged");
}

#[test]
fn percentages_keep_two_significant_digits() {
    assert_eq!(fmt_pct(2.345), "2.3");
    assert_eq!(fmt_pct(1.0), "1");
    assert_eq!(fmt_pct(0.5), "0.5");
    assert_eq!(fmt_pct(0.0001), "0.0001");
    assert_eq!(fmt_pct(12.4), "12");
    assert_eq!(fmt_pct(f64::INFINITY), "inf");
}

#[test]
fn settings_are_checked_in_the_words_of_flags_or_files() {
    assert_eq!(check_settings(None, None, 3), Ok(()));
    assert_eq!(check_settings(Some(0.5), None, 3), Ok(()));
    assert_eq!(check_settings(Some(0.5), Some(3), 3), Ok(()));
    let e = check_settings(Some(0.0), None, 3).unwrap_err();
    assert!(e.for_flags().starts_with("--target-ci = 0:"), "{e:?}");
    assert!(check_settings(Some(f64::NAN), None, 3).is_err());
    assert!(check_settings(Some(f64::INFINITY), None, 3).is_err());
    let e = check_settings(None, Some(10), 3).unwrap_err();
    assert!(
        e.for_flags().contains("--max-reps needs --target-ci"),
        "{e:?}"
    );
    let e = check_settings(Some(1.0), Some(2), 3).unwrap_err();
    assert!(e.for_file().contains("max_reps = 2"), "{e:?}");
    // Without a cap, a study of many repetitions is not capped below its own plan.
    assert_eq!(target_of(Some(1.0), None, 50).map(|t| t.max_reps), Some(50));
    assert_eq!(target_of(Some(1.0), None, 3).map(|t| t.max_reps), Some(30));
}

proptest! {
    /// Simulated runs with arbitrary values and failures: every round stays within the
    /// cap and is balanced, and the rounds end within `cap` of them.
    #[test]
    fn rounds_respect_the_cap_and_always_end(
        points in 1u32..5,
        nvar in 1usize..3,
        reps in 1u32..4,
        extra in 0u32..6,
        pct in 0.0001f64..20.0,
        seed in any::<u64>(),
    ) {
        let names = ["a", "b"];
        let variants = &names[..nvar];
        let cap = reps + extra;
        let t = target(pct, cap);
        let mut plan = plan(points, variants, reps);
        let mut x = seed;
        let mut draw = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let value = |draw: &mut dyn FnMut() -> u64| match draw() % 10 {
            0 => None,
            k => Some(100.0 + (k as f64) * (draw() % 7) as f64),
        };
        let mut ms: Vec<_> = plan.iter().map(|p| rec(p, value(&mut draw))).collect();
        let mut rounds = 0;
        loop {
            let round = next_round(&t, Some("value"), &plan, &ms);
            if round.is_empty() {
                break;
            }
            rounds += 1;
            prop_assert!(rounds <= extra, "round {rounds} beyond cap {cap} from {reps}");
            let last = plan.iter().map(|p| p.seq).max().unwrap_or(0);
            for (i, p) in round.iter().enumerate() {
                prop_assert_eq!(p.seq, last + 1 + i as u32);
            }
            // Balanced: every point in the round gets every variant once.
            let mut per_point: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
            for p in &round {
                per_point.entry(p.point).or_default().push(&p.variant);
            }
            for v in per_point.values() {
                prop_assert_eq!(v.as_slice(), variants);
            }
            plan.extend(round.iter().cloned());
            ms.extend(round.iter().map(|p| rec(p, value(&mut draw))));
            let mut counts: BTreeMap<(u32, &str), u32> = BTreeMap::new();
            for p in &plan {
                *counts.entry((p.point, p.variant.as_str())).or_default() += 1;
            }
            prop_assert!(counts.values().all(|&c| c <= cap), "{counts:?}");
        }
        // At the end every point has converged or reached the cap.
        for s in adaptive_status(&t, Some("value"), &ms) {
            prop_assert!(s.converged || s.hit_cap, "{s:?}");
        }
    }
}
