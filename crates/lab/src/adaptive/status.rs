//! How far each point of an adaptive run is from its target: pure, no I/O, so the runner
//! and a report compute the same answer from the same records.
//!
//! The width judged is that of the median's percentile-bootstrap 95% interval
//! ([`perflab_stats::Summary`], Efron 1979) with the default statistics settings, as a
//! half-width in percent of the median: (hi − lo) / 2 / |median| × 100. It is the same
//! interval the report prints next to each median, so "converged to ±1%" means what a
//! reader of the table sees.
//!
//! This file depends only on perflab-core and perflab-stats, so it can move into
//! perflab-stats if a report wants it without depending on the runner.

use std::collections::BTreeMap;

use perflab_core::adaptive_target::AdaptiveTarget;
use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::ParamRoles;
use perflab_stats::{Sample, StatsConfig, Summary};
use serde::Serialize;

/// One point and variant of an adaptive run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointStatus {
    pub point: u32,
    pub variant: String,
    /// Recorded measurements, successful or failed: what the cap counts, so a point that
    /// keeps failing cannot repeat forever.
    pub attempts: u32,
    /// Successful measurements that report the judged metric.
    pub n: usize,
    pub median: Option<f64>,
    /// `None` while fewer than two values exist: one value has no spread to judge.
    pub half_width_pct: Option<f64>,
    pub converged: bool,
    /// Not converged, and the cap is reached: no more repetitions will be planned.
    pub hit_cap: bool,
}

/// The metric adaptive repetitions judge: the spec's primary metric where a successful
/// measurement reports it, else the first metric of the first successful measurement
/// (the rule the report uses to pick its default metric).
pub fn judged_metric(primary: Option<&str>, ms: &[MeasurementRecord]) -> Option<String> {
    let ok = || ms.iter().filter(|m| m.is_result());
    if let Some(p) = primary {
        if ok().any(|m| m.output.metric(p).is_some()) {
            return Some(p.to_string());
        }
    }
    ok().find_map(|m| m.output.metrics.first())
        .map(|m| m.name.clone())
}

/// The median and the half-width of its interval in percent of the median; `None` for
/// fewer than two finite values. A zero median gives an infinite width unless the
/// interval is a single value: no relative precision exists around zero.
pub fn half_width_pct(values: &[f64], cfg: &StatsConfig) -> Option<(f64, f64)> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.len() < 2 {
        return None;
    }
    let sample = Sample::new(finite).ok()?;
    let s = Summary::new(&sample, cfg);
    let (lo, hi) = s.median_ci;
    let width = (hi - lo) / 2.0;
    let pct = if width == 0.0 {
        0.0
    } else if s.median == 0.0 {
        f64::INFINITY
    } else {
        width / s.median.abs() * 100.0
    };
    Some((s.median, pct))
}

/// Every point and variant with a recorded measurement, in the run's order (by point,
/// then by the variant's first measurement there), judged on `metric` (`None`: no
/// successful measurement reported anything, so nothing has converged).
pub fn adaptive_status(
    target: &AdaptiveTarget,
    metric: Option<&str>,
    ms: &[MeasurementRecord],
) -> Vec<PointStatus> {
    let mut groups: BTreeMap<(u32, u32), (String, u32, Vec<f64>)> = BTreeMap::new();
    let mut first_seq: BTreeMap<(u32, &str), u32> = BTreeMap::new();
    // Telemetry repetitions are not results: they neither converge a point nor count
    // against its cap.
    let ms: Vec<&MeasurementRecord> = ms.iter().filter(|m| m.is_headline()).collect();
    for m in &ms {
        let e = first_seq
            .entry((m.point, m.variant.as_str()))
            .or_insert(m.seq);
        *e = (*e).min(m.seq);
    }
    for m in &ms {
        let order = first_seq[&(m.point, m.variant.as_str())];
        let g = groups
            .entry((m.point, order))
            .or_insert_with(|| (m.variant.clone(), 0, Vec::new()));
        g.1 += 1;
        if m.status == MeasurementStatus::Ok {
            if let Some(v) = metric.and_then(|name| m.output.metric(name)) {
                g.2.push(v.value);
            }
        }
    }
    let cfg = StatsConfig::default();
    groups
        .into_iter()
        .map(|((point, _), (variant, attempts, values))| {
            let judged = half_width_pct(&values, &cfg);
            let converged = judged.is_some_and(|(_, hw)| hw <= target.target_ci_pct);
            PointStatus {
                point,
                variant,
                attempts,
                n: values.len(),
                median: judged.map(|(m, _)| m),
                half_width_pct: judged.map(|(_, hw)| hw),
                converged,
                hit_cap: !converged && attempts >= target.max_reps,
            }
        })
        .collect()
}

/// Labels of points for people: the parameters whose values differ between points, each
/// in the unit `roles` (the run's) give it (`size=4 KiB`, as the report's rows), or
/// `point N` when there is only one point or nothing differs.
pub fn point_labels(roles: &ParamRoles, ms: &[MeasurementRecord]) -> BTreeMap<u32, String> {
    let mut first: BTreeMap<u32, &MeasurementRecord> = BTreeMap::new();
    for m in ms {
        first
            .entry(m.point)
            .and_modify(|f| {
                if m.seq < f.seq {
                    *f = m
                }
            })
            .or_insert(m);
    }
    let reps: Vec<&MeasurementRecord> = first.values().copied().collect();
    let varying: Vec<&String> = reps
        .first()
        .map(|r| {
            r.params
                .0
                .iter()
                .filter(|(k, v)| reps.iter().any(|o| o.params.0.get(*k) != Some(*v)))
                .map(|(k, _)| k)
                .collect()
        })
        .unwrap_or_default();
    first
        .iter()
        .map(|(&point, r)| {
            let parts: Vec<String> = varying
                .iter()
                // In its unit (`size=4 KiB`, `irq_period=50 µs`), as the report's rows and
                // the progress lines say it.
                .filter_map(|k| r.params.0.get(*k).map(|v| roles.named_value(k, v)))
                .collect();
            let label = if parts.is_empty() {
                format!("point {point}")
            } else {
                parts.join(" ")
            };
            (point, label)
        })
        .collect()
}

/// The end-of-run lines: how many points converged, and which hit the cap with their
/// widest interval, e.g. "target ±1%: 10 of 12 points converged; 2 hit the cap of 30
/// repetitions: size=4 KiB (±2.3%), size=8 KiB (±1.7%)". A point counts as converged when
/// every variant measured there did.
pub fn summary_line(
    target: &AdaptiveTarget,
    status: &[PointStatus],
    labels: &BTreeMap<u32, String>,
) -> String {
    let mut by_point: BTreeMap<u32, Vec<&PointStatus>> = BTreeMap::new();
    for s in status {
        by_point.entry(s.point).or_default().push(s);
    }
    let variants = status
        .iter()
        .map(|s| s.variant.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let converged = by_point
        .values()
        .filter(|v| v.iter().all(|s| s.converged))
        .count();
    let capped: Vec<String> = by_point
        .iter()
        .filter_map(|(point, v)| {
            // The widest variant that stopped at the cap speaks for the point.
            let worst = v.iter().filter(|s| s.hit_cap).max_by(|a, b| {
                width_key(a.half_width_pct).total_cmp(&width_key(b.half_width_pct))
            })?;
            let label = labels
                .get(point)
                .cloned()
                .unwrap_or_else(|| format!("point {point}"));
            let width = match worst.half_width_pct {
                Some(hw) => format!("±{}%", fmt_pct(hw)),
                None => format!("{} values", worst.n),
            };
            Some(if variants > 1 {
                format!("{label} [{}] ({width})", worst.variant)
            } else {
                format!("{label} ({width})")
            })
        })
        .collect();
    let mut line = format!(
        "target ±{}%: {converged} of {} points converged",
        fmt_pct(target.target_ci_pct),
        by_point.len()
    );
    if !capped.is_empty() {
        line.push_str(&format!(
            "; {} hit the cap of {} repetitions: {}",
            capped.len(),
            target.max_reps,
            capped.join(", ")
        ));
    }
    line
}

fn width_key(hw: Option<f64>) -> f64 {
    hw.unwrap_or(f64::INFINITY)
}

/// Two significant digits at most, enough to tell ±2.3% from ±1%: 2.345 → "2.3",
/// 0.0001 → "0.0001", 12.4 → "12".
pub fn fmt_pct(x: f64) -> String {
    if !x.is_finite() {
        return "inf".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let digits = (1 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
