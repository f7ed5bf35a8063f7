//! Repetitions until decided (`--until-decided`, issue 22): after the planned
//! repetitions, the comparison rows (each point, each variant against the baseline) that
//! are still undecided get more repetitions, in interleaved rounds, up to the next look of
//! the alpha-spending schedule ([`perflab_stats::decide::sequential`]), until each is
//! decided or the cap is reached. Pure, from the plan and the records so far, so a resume
//! continues where the run stopped and a report decides with the same schedule.
//!
//! Rows are judged as a report judges them: paired by repetition number, decided as one
//! family, each row's alpha share taken from the look its pairs reached. A row whose side
//! has no successful value (every measurement failed or ineffective) gets no more.

use std::collections::BTreeMap;

use perflab_core::adaptive_target::UntilDecided;
use perflab_core::record::{MeasurementRecord, PlannedMeasurement, Role};
use perflab_core::Better;
use perflab_stats::decide::sequential::Schedule;
use perflab_stats::{adjust_family, compare_paired, Comparison, Sample, StatsConfig, Verdict};

/// One compared row: a point, the baseline and the other variant, and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct DecidedRow {
    pub point: u32,
    pub variant: String,
    pub pairs: usize,
    pub verdict: Verdict,
    /// For an undecided row: about how many repetitions per side would decide it.
    pub reps_to_decide: Option<u64>,
}

/// Values of `metric` by repetition number, of the successful headline measurements.
fn by_rep(ms: &[MeasurementRecord], point: u32, variant: &str, metric: &str) -> BTreeMap<u32, f64> {
    ms.iter()
        .filter(|m| m.point == point && m.variant == variant && m.is_result())
        .filter_map(|m| {
            let v = m.output.metric(metric)?.value;
            v.is_finite().then_some((m.rep, v))
        })
        .collect()
}

/// The variants in plan order and the baseline (the spec's, else the first planned).
fn variants(plan: &[PlannedMeasurement], baseline: Option<&str>) -> (String, Vec<String>) {
    let mut order: Vec<String> = Vec::new();
    for p in plan.iter().filter(|p| p.role == Role::Headline) {
        if !order.contains(&p.variant) {
            order.push(p.variant.clone());
        }
    }
    let base = baseline
        .filter(|b| order.iter().any(|v| v == b))
        .map(str::to_string)
        .or_else(|| order.first().cloned())
        .unwrap_or_default();
    let others = order.into_iter().filter(|v| *v != base).collect();
    (base, others)
}

/// Every row decided as one family, with each row's share of alpha for its look.
pub fn judge(
    until: &UntilDecided,
    baseline: Option<&str>,
    better: Better,
    metric: &str,
    plan: &[PlannedMeasurement],
    ms: &[MeasurementRecord],
    cfg: &StatsConfig,
) -> Vec<DecidedRow> {
    let schedule = Schedule::new(until.planned as usize, until.cap as usize);
    let (base, others) = variants(plan, baseline);
    let mut points: Vec<u32> = plan.iter().map(|p| p.point).collect();
    points.sort_unstable();
    points.dedup();
    let mut rows: Vec<(u32, String, Comparison)> = Vec::new();
    for &point in &points {
        let a = by_rep(ms, point, &base, metric);
        for other in &others {
            let b = by_rep(ms, point, other, metric);
            let (va, vb): (Vec<f64>, Vec<f64>) =
                (a.values().copied().collect(), b.values().copied().collect());
            let (Ok(sa), Ok(sb)) = (Sample::new(va), Sample::new(vb)) else {
                continue;
            };
            let ia: Vec<u32> = a.keys().copied().collect();
            let ib: Vec<u32> = b.keys().copied().collect();
            let pairs: Vec<(usize, usize)> = ia
                .iter()
                .enumerate()
                .filter_map(|(i, r)| ib.iter().position(|x| x == r).map(|j| (i, j)))
                .collect();
            let mut c = compare_paired(&sa, &sb, &pairs, better, cfg);
            c.decision.weight = schedule.weight(pairs.len().max(sa.len().min(sb.len())));
            rows.push((point, other.clone(), c));
        }
    }
    adjust_family(rows.iter_mut().map(|r| &mut r.2), cfg);
    rows.into_iter()
        .map(|(point, variant, c)| DecidedRow {
            point,
            variant,
            pairs: c.decision.evidence.as_ref().map_or(0, |e| e.n),
            verdict: c.verdict,
            reps_to_decide: c.decision.reps_to_decide,
        })
        .collect()
}

/// The measurements to append for the next round, numbered after the plan's last seq:
/// every undecided row gets repetitions of its baseline and its variant, interleaved
/// (A B, A B, …), up to the schedule's next look, never beyond the cap; empty when every
/// row is decided or at the cap.
#[allow(clippy::too_many_arguments)]
pub fn next_round(
    until: &UntilDecided,
    baseline: Option<&str>,
    better: Better,
    metric: Option<&str>,
    plan: &[PlannedMeasurement],
    ms: &[MeasurementRecord],
    cfg: &StatsConfig,
) -> Vec<PlannedMeasurement> {
    let Some(metric) = metric else {
        return Vec::new();
    };
    let schedule = Schedule::new(until.planned as usize, until.cap as usize);
    let (base, _) = variants(plan, baseline);
    // What is planned per point and variant: how many, the last rep number, its params.
    let mut planned: BTreeMap<(u32, &str), (u32, u32, &PlannedMeasurement)> = BTreeMap::new();
    for p in plan.iter().filter(|p| p.role == Role::Headline) {
        let e = planned
            .entry((p.point, p.variant.as_str()))
            .or_insert((0, p.rep, p));
        e.0 += 1;
        if p.rep >= e.1 {
            e.1 = p.rep;
            e.2 = p;
        }
    }
    let mut next_seq = super::round::first_free_seq(plan);
    let mut out = Vec::new();
    for row in judge(until, baseline, better, metric, plan, ms, cfg) {
        if row.verdict != Verdict::Undecided {
            continue;
        }
        let (Some(&a), Some(&b)) = (
            planned.get(&(row.point, base.as_str())),
            planned.get(&(row.point, row.variant.as_str())),
        ) else {
            continue;
        };
        let have = a.0.max(b.0) as usize;
        let Some(look) = schedule.next(have) else {
            continue;
        };
        let add = (look.min(until.cap as usize) - have) as u32;
        for k in 1..=add {
            for (count, last_rep, last) in [a, b] {
                if count + k > until.cap {
                    continue;
                }
                out.push(PlannedMeasurement {
                    seq: next_seq,
                    point: row.point,
                    params: last.params.clone(),
                    variant: last.variant.clone(),
                    rep: last_rep + k,
                    role: Role::Headline,
                });
                next_seq = next_seq.saturating_add(1);
            }
        }
        // The baseline is shared by every variant at the point: planned once.
        planned.insert((row.point, base.as_str()), (a.0 + add, a.1 + add, a.2));
    }
    out
}

/// The until-decided line of a stored run (its spec, plan and measurements); `None` for
/// a run without `--until-decided` or without a judged metric.
pub fn report_line(
    spec: &perflab_core::RunSpec,
    plan: &[PlannedMeasurement],
    ms: &[MeasurementRecord],
) -> Option<String> {
    let until = spec.until_decided?;
    let primary = Some(spec.primary_metric.as_str()).filter(|p| !p.is_empty());
    let metric = super::judged_metric(primary, ms)?;
    let better = super::better_of(Some(&metric), ms);
    let rows = judge(
        &until,
        spec.compare.baseline.as_deref(),
        better,
        &metric,
        plan,
        ms,
        &StatsConfig::default(),
    );
    let roles = perflab_core::catalog::param_roles(&spec.workload, spec);
    Some(summary_line(
        &rows,
        until.cap,
        &super::point_labels(&roles, ms),
    ))
}

/// The run's last word on its rows: `until decided: 37 of 40 rows decided (2 WORSE, 1
/// better, 34 same); 3 undecided at the cap of 30: size=4 KiB (about 60 more), …`.
pub fn summary_line(rows: &[DecidedRow], cap: u32, labels: &BTreeMap<u32, String>) -> String {
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let undecided: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Undecided)
        .map(|r| {
            let label = labels
                .get(&r.point)
                .cloned()
                .unwrap_or(format!("point {}", r.point));
            match r.reps_to_decide {
                Some(n) => format!("{label} [{}] (about {n} repetitions per side)", r.variant),
                None => format!("{label} [{}] (not within practical repetitions)", r.variant),
            }
        })
        .collect();
    let mut line = format!(
        "until decided: {} of {} rows decided ({} WORSE, {} better, {} same)",
        rows.len() - undecided.len(),
        rows.len(),
        count(Verdict::Regressed),
        count(Verdict::Improved),
        count(Verdict::Same)
    );
    if !undecided.is_empty() {
        line.push_str(&format!(
            "; {} undecided at the cap of {cap}: {}",
            undecided.len(),
            undecided.join(", ")
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::record::MeasurementStatus;
    use perflab_core::{Metric, Params, Unit, WorkloadOutput};

    fn planned(point: u32, variant: &str, rep: u32, seq: u32) -> PlannedMeasurement {
        PlannedMeasurement {
            seq,
            point,
            params: Params::default(),
            variant: variant.into(),
            rep,
            role: Role::Headline,
        }
    }

    fn record(p: &PlannedMeasurement, value: f64) -> MeasurementRecord {
        MeasurementRecord {
            seq: p.seq,
            point: p.point,
            params: p.params.clone(),
            variant: p.variant.clone(),
            rep: p.rep,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: WorkloadOutput {
                metrics: vec![Metric::new("rate", value, Unit::PerSecond, Better::Higher)],
                ..Default::default()
            },
            telemetry: Vec::new(),
            role: Role::Headline,
            monitors: Vec::new(),
        }
    }

    /// Point 0: B clearly 5 % better (decided); point 1: +1.2 % in 1.5 % noise
    /// (undecided): only point 1 gets repetitions, A and B alternating, up to the next
    /// look (5 → 8), numbered after the plan.
    #[test]
    fn only_undecided_rows_get_repetitions_up_to_the_next_look() {
        let wobble = [-1.0, 0.6, 0.2, -0.4, 0.7];
        let mut plan = Vec::new();
        let mut ms = Vec::new();
        for point in 0..2u32 {
            for rep in 0..5u32 {
                for (v, f, noise) in [
                    ("a", 1.0, 0.002),
                    ("b", if point == 0 { 1.05 } else { 1.012 }, 0.002),
                ] {
                    let noise = if point == 1 { 0.015 } else { noise };
                    let p = planned(point, v, rep, plan.len() as u32);
                    let w = wobble[(rep as usize + usize::from(v == "b") * 2) % 5];
                    ms.push(record(&p, 1000.0 * f * (1.0 + noise * w)));
                    plan.push(p);
                }
            }
        }
        let until = UntilDecided {
            planned: 5,
            cap: 30,
        };
        let cfg = StatsConfig::default();
        let rows = judge(&until, Some("a"), Better::Higher, "rate", &plan, &ms, &cfg);
        assert_eq!(rows[0].verdict, Verdict::Improved);
        assert_eq!(rows[1].verdict, Verdict::Undecided);
        let round = next_round(
            &until,
            Some("a"),
            Better::Higher,
            Some("rate"),
            &plan,
            &ms,
            &cfg,
        );
        assert_eq!(round.len(), 6, "{round:?}");
        assert!(round.iter().all(|p| p.point == 1));
        let order: Vec<(&str, u32)> = round.iter().map(|p| (p.variant.as_str(), p.rep)).collect();
        assert_eq!(
            order,
            [("a", 5), ("b", 5), ("a", 6), ("b", 6), ("a", 7), ("b", 7)]
        );
        assert_eq!(round[0].seq, 20);
        // At the cap nothing more is planned.
        let capped = UntilDecided { planned: 5, cap: 5 };
        assert!(next_round(
            &capped,
            Some("a"),
            Better::Higher,
            Some("rate"),
            &plan,
            &ms,
            &cfg
        )
        .is_empty());
        let line = summary_line(&rows, 30, &BTreeMap::new());
        assert!(line.starts_with("until decided: 1 of 2 rows decided (0 WORSE, 1 better, 0 same); 1 undecided at the cap of 30: point 1 [b]"), "{line}");
    }

    /// A row whose variant's every measurement was ineffective has no values, so no row
    /// and no more repetitions.
    #[test]
    fn rows_without_values_get_nothing() {
        let mut plan = Vec::new();
        let mut ms = Vec::new();
        for rep in 0..5u32 {
            for v in ["a", "b"] {
                let p = planned(0, v, rep, plan.len() as u32);
                let mut r = record(&p, 1000.0 + f64::from(rep));
                if v == "b" {
                    r.status = MeasurementStatus::Ineffective("state entered".into());
                }
                ms.push(r);
                plan.push(p);
            }
        }
        let until = UntilDecided {
            planned: 5,
            cap: 30,
        };
        let round = next_round(
            &until,
            None,
            Better::Higher,
            Some("rate"),
            &plan,
            &ms,
            &StatsConfig::default(),
        );
        assert!(round.is_empty());
    }
}
