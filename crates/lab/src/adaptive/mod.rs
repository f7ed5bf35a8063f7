//! Adaptive repetitions (`--target-ci`): after a run's planned measurements, repeat the
//! points whose median is not yet known to the precision asked, one balanced round at a
//! time, until every point is precise enough or has reached the cap.

mod round;
mod status;

pub use round::next_round;
pub use status::{
    adaptive_status, fmt_pct, half_width_pct, judged_metric, point_labels, summary_line,
    AdaptiveTarget, PointStatus,
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

/// The adaptive outcome of a stored run (its spec JSON and its measurements); `None` for
/// a run without `--target-ci`.
pub fn report(
    spec: &serde_json::Value,
    ms: &[perflab_core::record::MeasurementRecord],
) -> Option<AdaptiveReport> {
    let target: AdaptiveTarget = serde_json::from_value(spec.get("adaptive")?.clone()).ok()?;
    let metric = judged_metric(spec.get("primary_metric").and_then(|v| v.as_str()), ms);
    let points = adaptive_status(&target, metric.as_deref(), ms);
    let summary = summary_line(&target, &points, &point_labels(ms));
    Some(AdaptiveReport {
        target,
        metric,
        points,
        summary,
    })
}

/// The cap when a target is given without one: enough for a median interval about a
/// third as wide as with 3 repetitions (widths shrink about as 1/√n), few enough that a
/// point that never settles costs a bounded time.
pub const DEFAULT_MAX_REPS: u32 = 30;

/// The most repetitions a cap may allow, as for `repetitions`.
pub const MAX_REPS_LIMIT: u32 = 10_000;

/// What is wrong with adaptive settings; worded for a TOML file or for flags.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingError {
    Target(f64),
    CapWithoutTarget(u32),
    CapOutOfRange { cap: u32, reps: u32 },
}

impl SettingError {
    /// In the words of an experiment file's keys.
    pub fn for_file(&self) -> String {
        self.say("target_ci", "max_reps", "repetitions")
    }

    /// In the words of `perflab run`'s flags.
    pub fn for_flags(&self) -> String {
        self.say("--target-ci", "--max-reps", "repetitions")
    }

    fn say(&self, target: &str, cap: &str, reps: &str) -> String {
        match self {
            SettingError::Target(t) => format!(
                "{target} = {t}: must be a percentage above 0, e.g. 1 for ±1% of the median"
            ),
            SettingError::CapWithoutTarget(c) => {
                format!("{cap} = {c}: {cap} needs {target} (the cap of adaptive repetitions)")
            }
            SettingError::CapOutOfRange { cap: c, reps: r } => format!(
                "{cap} = {c}: must be at least the {r} planned {reps} and at most \
                 {MAX_REPS_LIMIT}"
            ),
        }
    }
}

/// Checks the adaptive settings of a spec with `reps` planned repetitions.
pub fn check_settings(
    target: Option<f64>,
    cap: Option<u32>,
    reps: u32,
) -> Result<(), SettingError> {
    match (target, cap) {
        (None, None) => Ok(()),
        (None, Some(c)) => Err(SettingError::CapWithoutTarget(c)),
        (Some(t), _) if !(t.is_finite() && t > 0.0) => Err(SettingError::Target(t)),
        (Some(_), c) => {
            let c = c.unwrap_or(DEFAULT_MAX_REPS.max(reps));
            if c < reps || c > MAX_REPS_LIMIT {
                return Err(SettingError::CapOutOfRange { cap: c, reps });
            }
            Ok(())
        }
    }
}

/// The target a spec asks for, with the cap filled in (never below the planned
/// repetitions, so a study of 50 repetitions with a target is not capped at 30).
pub fn target_of(target: Option<f64>, cap: Option<u32>, reps: u32) -> Option<AdaptiveTarget> {
    target.map(|t| AdaptiveTarget {
        target_ci_pct: t,
        max_reps: cap.unwrap_or(DEFAULT_MAX_REPS.max(reps)),
    })
}

#[cfg(test)]
mod tests;
