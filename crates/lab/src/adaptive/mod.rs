//! Adaptive repetitions (`--target-ci`): after a run's planned measurements, repeat the
//! points whose median is not yet known to the precision asked, one balanced round at a
//! time, until every point is precise enough or has reached the cap.

pub mod decided;
mod round;
mod status;

pub use perflab_core::adaptive_target::{
    check_settings, target_of, AdaptiveTarget, SettingError, DEFAULT_MAX_REPS, MAX_REPS_LIMIT,
};
pub use round::next_round;
pub use status::{
    adaptive_status, fmt_pct, half_width_pct, judged_metric, point_labels, summary_line,
    PointStatus,
};

/// What an adaptive run reached, for `run`'s last line and `show --json`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AdaptiveReport {
    pub target: AdaptiveTarget,
    /// The metric judged; `None` when no measurement succeeded.
    pub metric: Option<String>,
    pub points: Vec<PointStatus>,
    /// The one-line summary, as `perflab run` prints it.
    pub summary: String,
}

/// The adaptive outcome of a stored run (its spec and its measurements); `None` for a run
/// without `--target-ci`.
pub fn report(
    spec: &perflab_core::RunSpec,
    ms: &[perflab_core::record::MeasurementRecord],
) -> Option<AdaptiveReport> {
    let target = spec.adaptive?;
    let primary = Some(spec.primary_metric.as_str()).filter(|p| !p.is_empty());
    let metric = judged_metric(primary, ms);
    let points = adaptive_status(&target, metric.as_deref(), ms);
    let roles = perflab_core::catalog::param_roles(&spec.workload, spec);
    let summary = summary_line(&target, &points, &point_labels(&roles, ms));
    Some(AdaptiveReport {
        target,
        metric,
        points,
        summary,
    })
}

/// The better direction of the judged metric, as its measurements report it (for the
/// runner's --target-ci rounds and `decided`'s rows alike).
pub(crate) fn better_of(
    metric: Option<&str>,
    ms: &[perflab_core::record::MeasurementRecord],
) -> perflab_core::Better {
    metric
        .and_then(|name| ms.iter().find_map(|m| m.output.metric(name)))
        .map_or(perflab_core::Better::Neither, |m| m.better)
}

#[cfg(test)]
mod tests;
