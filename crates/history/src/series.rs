//! The series a store holds. A series is one metric of one study, parameter point and
//! variant on one machine, a value per run: the median of the run's result repetitions.
//!
//! The point is named by the parameters that vary within the run (its grid's axes); those
//! every measurement of a run shares are the run's settings, like its label.
//!
//! The machine is the fingerprint's host name and CPU model. The kernel is not part of
//! it: a kernel upgrade is one of the changes history is for, so each point carries its
//! run's kernel and a change point says when the kernel changed with it.

use std::collections::BTreeMap;

use perflab_core::record::RunId;
use perflab_core::record::{MeasurementRecord, RunInfo, RunStatus};
use perflab_core::{Better, Params, Unit};
use perflab_store::Store;
use serde::Serialize;

use crate::error::HistoryError;

/// What identifies a series.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    pub host: String,
    pub cpu_model: String,
    pub study: String,
    /// The parameter point, `name=value` joined by commas; `-` when the grid has none.
    pub point: String,
    pub variant: String,
    pub metric: String,
}

impl SeriesKey {
    /// The name `perflab history NAME` takes: host/study/variant/metric/point.
    pub fn name(&self) -> String {
        format!(
            "{}/{}/{}/{}/{}",
            self.host, self.study, self.variant, self.metric, self.point
        )
    }
}

/// One run of a series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPoint {
    pub run: RunId,
    pub uid: String,
    /// Seconds since the Unix epoch.
    pub created_at: f64,
    pub label: Option<String>,
    pub kernel: Option<String>,
    /// The median of the run's result repetitions.
    pub value: f64,
    pub reps: usize,
}

/// One series, its points oldest first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub key: SeriesKey,
    pub unit: Unit,
    pub better: Better,
    pub points: Vec<SeriesPoint>,
}

/// A selection of series; every field given must equal the key's (the point may also
/// be given as one of its `name=value` parts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub name: Option<String>,
    pub study: Option<String>,
    pub point: Option<String>,
    pub variant: Option<String>,
    pub metric: Option<String>,
    pub host: Option<String>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }

    pub fn matches(&self, k: &SeriesKey) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        eq(&self.name, &k.name())
            && eq(&self.study, &k.study)
            && eq(&self.variant, &k.variant)
            && eq(&self.metric, &k.metric)
            && eq(&self.host, &k.host)
            && self
                .point
                .as_deref()
                .is_none_or(|p| p == k.point || k.point.split(',').any(|part| part == p))
    }

    /// The filter in words, for the error when it matches nothing.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [
            ("series", &self.name),
            ("--study", &self.study),
            ("--point", &self.point),
            ("--variant", &self.variant),
            ("--metric", &self.metric),
            ("--host", &self.host),
        ]
        .iter()
        .filter_map(|(flag, v)| v.as_ref().map(|v| format!("{flag} {v}")))
        .collect();
        parts.join(" ")
    }
}

/// Every series in `store`, in key order, each holding the runs that measured it (runs
/// still running or without results contribute nothing).
pub fn extract(store: &Store) -> Result<Vec<Series>, HistoryError> {
    let mut runs = store.runs()?;
    runs.retain(|r| r.status != RunStatus::Running && r.done > 0);
    runs.sort_by(|a, b| a.created_at.total_cmp(&b.created_at).then(a.id.cmp(&b.id)));
    let mut all: BTreeMap<SeriesKey, Series> = BTreeMap::new();
    for run in &runs {
        let mut records: Vec<MeasurementRecord> = Vec::new();
        store.visit_measurements(run.id, &mut |_| false, &mut |m| {
            if m.is_result() {
                records.push(m);
            }
            Ok(())
        })?;
        let varying = varying_params(&records);
        let mut values: BTreeMap<SeriesKey, (Unit, Better, Vec<f64>)> = BTreeMap::new();
        for m in &records {
            add_record(run, m, &varying, &mut values);
        }
        for (key, (unit, better, reps)) in values {
            let Some(value) = perflab_stats::median(reps.iter().copied()) else {
                continue;
            };
            let series = all.entry(key.clone()).or_insert_with(|| Series {
                key,
                unit,
                better,
                points: Vec::new(),
            });
            series.points.push(SeriesPoint {
                run: run.id,
                uid: run.uid.clone(),
                created_at: run.created_at,
                label: run.label.clone(),
                kernel: run.fingerprint.kernel.clone(),
                value,
                reps: reps.len(),
            });
        }
    }
    Ok(all.into_values().collect())
}

/// The series `filter` selects, or [`HistoryError::NoMatch`] when it selects none.
pub fn select(all: Vec<Series>, filter: &Filter) -> Result<Vec<Series>, HistoryError> {
    let count = all.len();
    let picked: Vec<Series> = all.into_iter().filter(|s| filter.matches(&s.key)).collect();
    if picked.is_empty() && !filter.is_empty() {
        return Err(HistoryError::NoMatch {
            what: filter.describe(),
            count,
        });
    }
    Ok(picked)
}

/// The parameters whose value differs between a run's measurements: the grid's axes.
/// A parameter every measurement of the run shares is a setting of the run (what
/// `-p value=...` set for this version), not a point of the grid, so runs that set it
/// differently stay one series and the change shows in it.
fn varying_params(records: &[MeasurementRecord]) -> Vec<String> {
    let Some(first) = records.first() else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for m in records {
        for (k, v) in &m.params.0 {
            if first.params.0.get(k) != Some(v) && !names.contains(k) {
                names.push(k.clone());
            }
        }
        for k in first.params.0.keys() {
            if !m.params.0.contains_key(k) && !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    names
}

fn add_record(
    run: &RunInfo,
    m: &MeasurementRecord,
    varying: &[String],
    values: &mut BTreeMap<SeriesKey, (Unit, Better, Vec<f64>)>,
) {
    for metric in &m.output.metrics {
        if !metric.value.is_finite() {
            continue;
        }
        let key = SeriesKey {
            host: run
                .fingerprint
                .hostname
                .clone()
                .unwrap_or_else(|| "?".into()),
            cpu_model: run.fingerprint.cpu_model.clone().unwrap_or_default(),
            study: run.study.clone(),
            point: point_name(&m.params, varying),
            variant: m.variant.clone(),
            metric: metric.name.clone(),
        };
        values
            .entry(key)
            .or_insert_with(|| (metric.unit, metric.better, Vec::new()))
            .2
            .push(metric.value);
    }
}

/// `name=value` of the `varying` parameters joined by commas, in the parameters' (sorted)
/// order; `-` for none.
pub fn point_name(params: &Params, varying: &[String]) -> String {
    let parts: Vec<String> = params
        .0
        .iter()
        .filter(|(k, _)| varying.contains(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if parts.is_empty() {
        return "-".into();
    }
    parts.join(",")
}
