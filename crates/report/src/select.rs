//! Picking numbers out of stored records: which metric, which measurements count, and
//! how a parameter point is named in a table.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo};
use perflab_core::{Better, IneffectiveCount, ParamRoles, Params, Unit};
use serde::Serialize;

use crate::error::ReportError;

/// The metric a comparison uses, with its unit and better direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricChoice {
    pub name: String,
    pub unit: Unit,
    pub better: Better,
}

/// The metric named by the user, else the run's `spec.primary_metric`, else the first
/// metric of the first successful measurement.
pub fn choose_metric(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    wanted: Option<&str>,
) -> Result<MetricChoice, ReportError> {
    let ok: Vec<&MeasurementRecord> = ms.iter().filter(|m| is_ok(m)).collect();
    let find = |name: &str| {
        ok.iter()
            .find_map(|m| m.output.metric(name))
            .map(|m| MetricChoice {
                name: m.name.clone(),
                unit: m.unit,
                better: m.better,
            })
    };
    if let Some(name) = wanted {
        return find(name).ok_or_else(|| ReportError::NoSuchMetric {
            run: run.id,
            metric: name.to_string(),
            known: known_metrics(&ok),
        });
    }
    if !run.spec.primary_metric.is_empty() {
        if let Some(choice) = find(&run.spec.primary_metric) {
            return Ok(choice);
        }
    }
    ok.iter()
        .find_map(|m| m.output.metrics.first())
        .map(|m| MetricChoice {
            name: m.name.clone(),
            unit: m.unit,
            better: m.better,
        })
        .ok_or(ReportError::NoData { run: run.id })
}

fn known_metrics(ok: &[&MeasurementRecord]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for m in ok {
        for metric in &m.output.metrics {
            if !names.contains(&metric.name.as_str()) {
                names.push(&metric.name);
            }
        }
    }
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The study's baseline (`compare.baseline` in the stored spec, where it was measured),
/// else the first variant measured; `None` when fewer than two variants were measured.
pub fn baseline_variant(run: &RunInfo, measured: &[String]) -> Option<String> {
    if measured.len() < 2 {
        return None;
    }
    run.spec
        .compare
        .baseline
        .clone()
        .filter(|b| measured.iter().any(|m| m == b))
        .or_else(|| measured.first().cloned())
}

/// The variants measured in a run, in the order the plan first ran them (by `seq`).
/// One entry means there is nothing to compare within the run; callers then take the
/// single-variant path ([`crate::summarize_run`], [`crate::write_single_drilldown`]).
pub fn measured_variants(ms: &[MeasurementRecord]) -> Vec<String> {
    let mut sorted: Vec<&MeasurementRecord> = ms.iter().collect();
    sorted.sort_by_key(|m| m.seq);
    let mut out: Vec<String> = Vec::new();
    for m in sorted {
        if !out.contains(&m.variant) {
            out.push(m.variant.clone());
        }
    }
    out
}

/// A result of its variant: a headline repetition that ran with every knob holding.
pub fn is_ok(m: &MeasurementRecord) -> bool {
    m.is_result()
}

/// The records whose telemetry of `source` describes their variant: the headline results
/// that carry it, or, for a source that only telemetry repetitions carry (perf counters,
/// which disturb the workload, run nowhere else), those. Never a failed or ineffective
/// measurement.
pub fn telemetry_records<'a>(
    records: &[&'a MeasurementRecord],
    source: &str,
) -> Vec<&'a MeasurementRecord> {
    let has = |m: &&MeasurementRecord| {
        m.status == MeasurementStatus::Ok && m.telemetry.iter().any(|t| t.source == source)
    };
    let headline: Vec<&MeasurementRecord> = records
        .iter()
        .copied()
        .filter(|m| m.is_headline() && has(m))
        .collect();
    if !headline.is_empty() {
        return headline;
    }
    records.iter().copied().filter(has).collect()
}

/// The numbers of one side of one row, and what did not count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideValues {
    pub values: Vec<f64>,
    /// The repetition number of each value, so outliers can be named.
    pub reps: Vec<u32>,
    pub failed: u32,
    /// Successful measurements that lack the metric or hold a non-finite value.
    pub missing: u32,
    /// The first failure message, to show a reader why.
    pub first_error: Option<String>,
    /// Headline measurements that ran while a knob of the variant did not hold: not its
    /// numbers.
    pub ineffective: u32,
    /// Of every measurement of the side that ran, telemetry repetitions too, how many a
    /// knob did not hold for: what the table's INEFFECTIVE note adds up, the count a void
    /// comparison's reason and the report's Ineffective list give (one type, one count).
    pub knob: IneffectiveCount,
    /// The first reason a measurement was ineffective.
    pub first_ineffective: Option<String>,
    /// Measurements that other work disturbed (it took more than its share of their
    /// CPUs): not the variant's numbers either.
    pub disturbed: u32,
    /// The first reason a measurement was disturbed.
    pub first_disturbed: Option<String>,
}

impl SideValues {
    pub fn gather<'a>(records: impl Iterator<Item = &'a MeasurementRecord>, metric: &str) -> Self {
        let mut side = SideValues::default();
        let records: Vec<&MeasurementRecord> = records.collect();
        side.knob = IneffectiveCount::of(records.iter().copied());
        // Telemetry repetitions carry the monitors that disturb the workload: never a
        // result, so not a value, a failure or anything else of this side.
        for m in records.into_iter().filter(|m| m.is_headline()) {
            match &m.status {
                MeasurementStatus::Ineffective(why) => {
                    side.ineffective += 1;
                    if side.first_ineffective.is_none() {
                        side.first_ineffective = Some(format!("seq {}: {why}", m.seq));
                    }
                }
                MeasurementStatus::Disturbed(why) => {
                    side.disturbed += 1;
                    if side.first_disturbed.is_none() {
                        side.first_disturbed = Some(format!("seq {}: {why}", m.seq));
                    }
                }
                MeasurementStatus::Failed(msg) => {
                    side.failed += 1;
                    if side.first_error.is_none() {
                        side.first_error = Some(format!("seq {}: {msg}", m.seq));
                    }
                }
                MeasurementStatus::Ok => match m.output.metric(metric) {
                    Some(x) if x.value.is_finite() => {
                        side.values.push(x.value);
                        side.reps.push(m.rep);
                    }
                    _ => side.missing += 1,
                },
            }
        }
        side
    }

    pub fn measured(&self) -> bool {
        !self.values.is_empty()
            || self.failed > 0
            || self.missing > 0
            || self.ineffective > 0
            || self.disturbed > 0
    }
}

/// The layout of a per-point, per-variant table: the variants in plan order, a labeler
/// naming points by what varies within the first variant (parameters a variant overrides,
/// its env say, would otherwise name the variant twice), and the points in order.
pub fn point_grid(
    roles: &ParamRoles,
    ms: &[MeasurementRecord],
) -> (Vec<String>, Labeler, Vec<u32>) {
    let variants = measured_variants(ms);
    let first_variant = variants.first().cloned().unwrap_or_default();
    let labeler = Labeler::new(
        roles,
        ms.iter()
            .filter(|m| m.variant == first_variant)
            .map(|m| &m.params),
    );
    let mut points: Vec<u32> = ms.iter().map(|m| m.point).collect();
    points.sort_unstable();
    points.dedup();
    (variants, labeler, points)
}

/// Names rows by the parameters that differ between them (`cpu_b=24`, `size=64 KiB`, each
/// value in its role's unit), or by the CPU pair (`4-24`) when the parameters with the
/// roles of a pair's CPUs are there.
pub struct Labeler {
    roles: ParamRoles,
    varying: Vec<String>,
}

/// How many of the parameter sets last seen the two helpers below remember: a run's
/// records come point by point, cycling through the point's variants (each may set
/// parameters of its own), so a handful catches nearly every repeat.
const RECENT: usize = 8;

/// Each record's `params.describe()`, rendered once per point and variant rather than
/// once per record (100,000 renderings were a twentieth of a report).
pub(crate) fn describe_each(ms: &[MeasurementRecord]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(ms.len());
    // The last parameter sets rendered, with where their text is in `out`.
    let mut recent: Vec<(&Params, usize)> = Vec::with_capacity(RECENT);
    for m in ms {
        let d = match recent.iter().rev().find(|(p, _)| **p == m.params) {
            Some(&(_, i)) => out[i].clone(),
            None => {
                if recent.len() == RECENT {
                    recent.remove(0);
                }
                recent.push((&m.params, out.len()));
                m.params.describe()
            }
        };
        out.push(d);
    }
    out
}

impl Labeler {
    pub fn new<'a>(roles: &ParamRoles, all: impl Iterator<Item = &'a Params>) -> Self {
        // What varies depends only on the distinct parameter sets, in any order but the
        // first: a repeat of one of the last few kept is left out, which leaves a few
        // hundred of 100,000 records.
        let mut distinct: Vec<&Params> = Vec::new();
        for p in all {
            if !distinct.iter().rev().take(RECENT).any(|q| *q == p) {
                distinct.push(p);
            }
        }
        let all = distinct;
        let mut varying = Vec::new();
        if let Some(first) = all.first() {
            let mut names: Vec<&String> = all.iter().flat_map(|p| p.0.keys()).collect();
            names.sort();
            names.dedup();
            for name in names {
                if all.iter().any(|p| p.get(name) != first.get(name)) {
                    varying.push(name.clone());
                }
            }
        }
        Self {
            roles: roles.clone(),
            varying,
        }
    }

    /// The CPU pair of a point, where the parameters with the pair's roles hold one.
    pub fn pair(&self, params: &Params) -> Option<(u32, u32)> {
        self.roles.cpu_pair(params)
    }

    /// `4-24` for a CPU pair, followed by any other parameter that varies (a pair
    /// measured with two mechanisms must not show as two identical rows); `all` when
    /// nothing varies.
    pub fn label(&self, params: &Params) -> String {
        match self.label_without(params, &[]) {
            l if l.is_empty() => "all".to_string(),
            l => l,
        }
    }

    /// [`Labeler::label`] without the parameters in `skip`, e.g. a scan's curve name
    /// without its size; empty when only skipped ones vary.
    pub fn label_without(&self, params: &Params, skip: &[&str]) -> String {
        let roles = &self.roles;
        let pair = roles
            .cpu_pair(params)
            .filter(|_| !skip.iter().any(|n| roles.is_cpu_pair(n)));
        let parts: Vec<String> = self
            .varying
            .iter()
            .filter(|name| !skip.contains(&name.as_str()))
            .filter(|name| pair.is_none() || !roles.is_cpu_pair(name))
            .map(|name| match params.get(name) {
                Some(v) => roles.named_value(name, v),
                None => format!("{name}=-"),
            })
            .collect();
        match pair {
            Some((a, b)) if parts.is_empty() => format!("{a}-{b}"),
            Some((a, b)) => format!("{a}-{b} {}", parts.join(" ")),
            None => parts.join(" "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::ParamValue;

    fn params(pairs: &[(&str, i64)]) -> Params {
        Params(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), ParamValue::Int(*v)))
                .collect(),
        )
    }

    fn rec(
        seq: u32,
        role: perflab_core::record::Role,
        status: MeasurementStatus,
        sources: &[&str],
    ) -> MeasurementRecord {
        MeasurementRecord {
            seq,
            point: 0,
            params: params(&[]),
            variant: "v".into(),
            rep: seq,
            status,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: perflab_core::WorkloadOutput {
                metrics: vec![perflab_core::Metric::new(
                    "rate",
                    100.0 + f64::from(seq),
                    perflab_core::Unit::PerSecond,
                    perflab_core::Better::Higher,
                )],
                ..Default::default()
            },
            telemetry: sources
                .iter()
                .map(|s| {
                    perflab_core::TelemetryRow::new(
                        s,
                        "k",
                        "",
                        None,
                        1.0,
                        perflab_core::Unit::Count,
                    )
                })
                .collect(),
            role,
            monitors: sources.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn results_and_their_telemetry_leave_out_telemetry_and_ineffective_repetitions() {
        use perflab_core::record::Role::{Headline, Telemetry};
        let ms = [
            rec(0, Headline, MeasurementStatus::Ok, &["interrupts"]),
            rec(
                1,
                Headline,
                MeasurementStatus::Ineffective("x".into()),
                &["interrupts"],
            ),
            rec(
                2,
                Telemetry,
                MeasurementStatus::Ok,
                &["interrupts", "counters"],
            ),
            rec(3, Headline, MeasurementStatus::Failed("y".into()), &[]),
        ];
        let side = SideValues::gather(ms.iter(), "rate");
        assert_eq!(side.values, [100.0]);
        assert_eq!((side.failed, side.ineffective), (1, 1));
        assert_eq!(side.first_ineffective.as_deref(), Some("seq 1: x"));
        let all: Vec<&MeasurementRecord> = ms.iter().collect();
        let seqs = |v: Vec<&MeasurementRecord>| v.iter().map(|m| m.seq).collect::<Vec<_>>();
        // A source the results carry comes from them; one only telemetry repetitions
        // carry comes from those.
        assert_eq!(seqs(telemetry_records(&all, "interrupts")), [0]);
        assert_eq!(seqs(telemetry_records(&all, "counters")), [2]);
        assert!(telemetry_records(&all, "softirqs").is_empty());
    }

    #[test]
    fn labels_name_varying_parameters_or_pairs() {
        use perflab_core::ParamRole;
        let mut roles = ParamRoles::default();
        let p1 = params(&[("size", 4096), ("threads", 2)]);
        let p2 = params(&[("size", 8192), ("threads", 2)]);
        let l = Labeler::new(&roles, [&p1, &p2].into_iter());
        assert_eq!(l.label(&p1), "size=4096");
        let single = Labeler::new(&roles, [&p1].into_iter());
        assert_eq!(single.label(&p1), "all");
        // Without roles, CPUs are parameters like any other.
        let pair = params(&[("cpu_a", 4), ("cpu_b", 24)]);
        let other = params(&[("cpu_a", 4), ("cpu_b", 8)]);
        let l = Labeler::new(&roles, [&pair, &other].into_iter());
        assert_eq!(l.label(&other), "cpu_b=8");
        // A size axis reads in its unit, as the tables beside it.
        roles.insert("size", ParamRole::SizeAxis);
        let l = Labeler::new(&roles, [&p1, &p2].into_iter());
        assert_eq!(l.label(&p2), "size=8 KiB");
        roles.insert("cpu_a", ParamRole::CpuA);
        roles.insert("cpu_b", ParamRole::CpuB);
        assert_eq!(
            Labeler::new(&roles, [&pair].into_iter()).label(&pair),
            "4-24"
        );
        let l = Labeler::new(&roles, [&pair, &other].into_iter());
        assert_eq!(l.label(&other), "4-8");
        let futex = params(&[("cpu_a", 4), ("cpu_b", 24), ("futex", 1)]);
        let l = Labeler::new(&roles, [&pair, &futex].into_iter());
        assert_eq!(l.label(&futex), "4-24 futex=1");
        assert_eq!(l.label(&pair), "4-24 futex=-");
        assert_eq!(l.label_without(&pair, &["cpu_b"]), "futex=-");
        assert_eq!(
            roles.cpu_pair(&params(&[("cpu_a", -1), ("cpu_b", 2)])),
            None
        );
    }
}
