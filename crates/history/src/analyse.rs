//! A series' change points, each with the runs either side, the medians of the stretches
//! before and after it, and the change with its interval and verdict.
//!
//! The stretches are the runs from the previous change point (or the first run) up to
//! this one, and from this one up to the next (or the last run); their run medians are
//! compared by [`perflab_stats::compare`], the comparison every perflab verdict comes
//! from, so "worse" means here what it means in `perflab compare`.

use perflab_core::record::RunId;
use perflab_core::{Better, Unit};
use perflab_stats::changepoint::{e_divisive, ChangePointConfig};
use perflab_stats::{compare, Sample, StatsConfig, Verdict};
use serde::Serialize;

use crate::series::{Series, SeriesKey, SeriesPoint};

/// How history is analysed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HistoryConfig {
    pub detector: ChangePointConfig,
    pub stats: StatsConfig,
}

/// A run, as a change point names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRef {
    pub run: RunId,
    pub uid: String,
    pub created_at: f64,
    pub label: Option<String>,
    pub kernel: Option<String>,
}

impl RunRef {
    fn of(p: &SeriesPoint) -> Self {
        Self {
            run: p.run,
            uid: p.uid.clone(),
            created_at: p.created_at,
            label: p.label.clone(),
            kernel: p.kernel.clone(),
        }
    }

    /// `run 12 (v2)`: the number, and the label where there is one.
    pub fn describe(&self) -> String {
        match &self.label {
            Some(l) => format!("run {} ({l})", self.run),
            None => format!("run {}", self.run),
        }
    }
}

/// One change point of a series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// Index in the series of the first run after the change.
    pub index: usize,
    /// The last run before the change and the first after it.
    pub before: RunRef,
    pub after: RunRef,
    /// How many runs the compared stretches hold.
    pub runs_before: usize,
    pub runs_after: usize,
    pub median_before: f64,
    pub median_after: f64,
    /// The change in percent and the interval its verdict used (None: median before 0).
    pub change_pct: Option<f64>,
    pub change_ci_pct: Option<(f64, f64)>,
    pub verdict: Verdict,
    /// The detector's p-value for the split.
    pub p_value: f64,
    /// Whether the kernel differs between the two runs either side.
    pub kernel_changed: bool,
}

/// A series and its change points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesHistory {
    pub name: String,
    pub key: SeriesKey,
    pub unit: Unit,
    pub better: Better,
    pub points: Vec<SeriesPoint>,
    pub changes: Vec<Change>,
}

/// The change points of `series`.
pub fn analyse(series: &Series, cfg: &HistoryConfig) -> SeriesHistory {
    let values: Vec<f64> = series.points.iter().map(|p| p.value).collect();
    let found = e_divisive(&values, &cfg.detector);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|c| c.index));
    bounds.push(values.len());
    let changes = found
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let (lo, at, hi) = (bounds[k], bounds[k + 1], bounds[k + 2]);
            change(
                series,
                &values[lo..at],
                &values[at..hi],
                c.index,
                c.p_value,
                cfg,
            )
        })
        .collect();
    SeriesHistory {
        name: series.key.name(),
        key: series.key.clone(),
        unit: series.unit,
        better: series.better,
        points: series.points.clone(),
        changes,
    }
}

fn change(
    series: &Series,
    before: &[f64],
    after: &[f64],
    index: usize,
    p_value: f64,
    cfg: &HistoryConfig,
) -> Change {
    let (a, b) = (sample(before), sample(after));
    let cmp = compare(&a, &b, series.better, &cfg.stats);
    let (last, first) = (&series.points[index - 1], &series.points[index]);
    Change {
        index,
        before: RunRef::of(last),
        after: RunRef::of(first),
        runs_before: before.len(),
        runs_after: after.len(),
        median_before: a.median(),
        median_after: b.median(),
        change_pct: cmp.change_pct,
        change_ci_pct: cmp.change_ci_pct,
        verdict: cmp.verdict,
        p_value,
        kernel_changed: last.kernel != first.kernel,
    }
}

/// The detector never makes an empty stretch, and run medians are finite.
fn sample(values: &[f64]) -> Sample {
    Sample::new(values.to_vec()).expect("a stretch of finite run medians")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64], better: Better) -> Series {
        Series {
            key: SeriesKey {
                host: "h".into(),
                cpu_model: "c".into(),
                study: "s".into(),
                point: "-".into(),
                variant: "v".into(),
                metric: "m".into(),
            },
            unit: Unit::Count,
            better,
            points: values
                .iter()
                .enumerate()
                .map(|(i, &value)| SeriesPoint {
                    run: i as i64 + 1,
                    uid: format!("u{i}"),
                    created_at: i as f64,
                    label: Some(format!("v{i}")),
                    kernel: Some(if i < 10 { "6.1" } else { "6.2" }.into()),
                    value,
                    reps: 3,
                })
                .collect(),
        }
    }

    fn noisy(n: usize, level: f64, seed: u64) -> Vec<f64> {
        let mut g = perflab_stats::simulate::Gen::new(seed);
        (0..n).map(|_| level * (1.0 + 0.01 * g.z())).collect()
    }

    #[test]
    fn a_drop_of_a_higher_is_better_figure_is_worse_at_the_right_run() {
        let mut v = noisy(10, 1000.0, 1);
        v.extend(noisy(10, 900.0, 2));
        let h = analyse(&series(&v, Better::Higher), &HistoryConfig::default());
        assert_eq!(h.changes.len(), 1, "{:?}", h.changes);
        let c = &h.changes[0];
        assert_eq!((c.index, c.before.run, c.after.run), (10, 10, 11));
        assert_eq!(c.after.label.as_deref(), Some("v10"));
        assert_eq!(c.verdict, Verdict::Regressed);
        assert!(c.kernel_changed);
        let pct = c.change_pct.unwrap();
        assert!((-12.0..-8.0).contains(&pct), "{pct}");
        let (lo, hi) = c.change_ci_pct.unwrap();
        assert!(lo <= pct && pct <= hi);
        assert!((c.median_before - 1000.0).abs() < 15.0 && (c.median_after - 900.0).abs() < 15.0);
    }

    #[test]
    fn the_same_drop_of_a_lower_is_better_figure_is_better() {
        let mut v = noisy(10, 1000.0, 1);
        v.extend(noisy(10, 900.0, 2));
        let h = analyse(&series(&v, Better::Lower), &HistoryConfig::default());
        assert_eq!(h.changes[0].verdict, Verdict::Improved);
    }

    #[test]
    fn a_steady_series_has_no_change() {
        let h = analyse(
            &series(&noisy(20, 50.0, 3), Better::Higher),
            &HistoryConfig::default(),
        );
        assert!(h.changes.is_empty());
    }
}
