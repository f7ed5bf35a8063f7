//! The spec a run stores: the experiment made fully explicit against one machine (grid
//! points, variants with their knobs in written order, repetitions, adaptive target,
//! monitors), so `--resume` and every report read the same typed value back and never
//! depend on the machine's state at a later time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::adaptive_target::AdaptiveTarget;
use crate::error::ParamError;
use crate::params::{resolve, ParamSpec, Params};
use crate::spec::{CompareSpec, ExperimentSpec, VariantSpec};

/// The fully explicit experiment a run stores. Every field has a default so a run
/// written by `perflab import` (which has no grid) or by an older perflab reads back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSpec {
    pub name: String,
    pub description: String,
    pub workload: String,
    /// The metric the study is judged on (the workload's primary metric).
    pub primary_metric: String,
    pub repetitions: u32,
    pub warmup: u32,
    pub monitors: Vec<String>,
    /// Grid points as given text per parameter (before variant overrides).
    pub points: Vec<BTreeMap<String, String>>,
    pub variants: Vec<VariantSpec>,
    pub compare: CompareSpec,
    /// Grid points left out because they do not fit this machine, with the reason.
    pub skipped: Vec<SkippedPoint>,
    /// Monitors this machine lacks, with the reason, found before the run started.
    pub unavailable_monitors: BTreeMap<String, String>,
    /// Adaptive repetitions (`--target-ci`), with the cap filled in; `None`: the planned
    /// repetitions only. Kept here so a resume continues them and a report can tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveTarget>,
    /// Repetitions until decided (`--until-decided`); `None`: not asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<crate::adaptive_target::UntilDecided>,
    /// Telemetry repetitions per point and variant, planned after the headline ones at
    /// each point, for the monitors that disturb what they observe (0: none selected, or
    /// none wanted). Their figures are never results.
    pub telemetry_reps: u32,
    /// The most the runner waits for the measured CPUs to be quiet, in all, seconds
    /// (`--quiet-machine`); `None`: it does not wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_machine_s: Option<f64>,
    /// The share of its CPUs other work may take before a measurement is disturbed, %
    /// (`None`: [`crate::spec::DISTURBED_ABOVE_PCT`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbed_above_pct: Option<f64>,
    /// The spec as the user wrote it (`None` for an imported run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<ExperimentSpec>,
    /// Where an imported run's results came from (`None` for a run perflab measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
    /// The roles of the parameters an importer made (a seed scan's size); empty for a run
    /// perflab measured, whose workload declares its roles in the registry.
    #[serde(skip_serializing_if = "crate::ParamRoles::is_empty")]
    pub param_roles: crate::ParamRoles,
}

/// A grid point the run leaves out, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkippedPoint {
    pub point: BTreeMap<String, String>,
    pub reason: String,
}

/// The file and parser an imported run was read from, and what the parser noted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Imported {
    pub file: String,
    pub parser: String,
    pub notes: Vec<String>,
    /// The tool's own figures over the repetitions of one point and variant (hyperfine's
    /// mean, stddev, median, min, max, user and system time of a command), kept as it
    /// wrote them: user and system time exist only there, never per repetition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<ToolSummary>,
}

/// One [`Imported::summaries`] entry: the figures the tool printed for the repetitions of
/// `point` under `variant`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolSummary {
    pub point: u32,
    pub variant: String,
    pub metrics: Vec<crate::Metric>,
}

/// Every grid point resolved under every variant, once: `[point][variant]`, the variants
/// in the spec's order. The runner, the memory fit and the plan all read these values,
/// so a parameter is parsed and checked in one place.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    cells: Vec<Vec<Params>>,
}

impl Grid {
    /// The parameters of `point` under the variant at `variant` in the spec's list.
    pub fn params(&self, point: usize, variant: usize) -> &Params {
        &self.cells[point][variant]
    }

    /// The parameters of `point` under every variant, in the spec's order.
    pub fn point(&self, point: usize) -> &[Params] {
        &self.cells[point]
    }

    pub fn points(&self) -> usize {
        self.cells.len()
    }

    /// Keeps the points whose flag is set (the memory fit leaves points out).
    pub fn retain_points(&mut self, keep: &[bool]) {
        let mut flags = keep.iter();
        self.cells
            .retain(|_| flags.next().copied().unwrap_or(false));
    }
}

impl RunSpec {
    /// The share of its CPUs other work may take before a measurement is disturbed, %.
    pub fn disturbed_above(&self) -> f64 {
        self.disturbed_above_pct
            .unwrap_or(crate::spec::DISTURBED_ABOVE_PCT)
    }

    /// Resolves every point under every variant against the workload's declared
    /// parameters (`workload`, `declared`): a bad value is one error naming it.
    pub fn resolve_grid(&self, workload: &str, declared: &[ParamSpec]) -> Result<Grid, ParamError> {
        let cells = self
            .points
            .iter()
            .map(|point| {
                self.variants
                    .iter()
                    .map(|variant| {
                        let mut given = point.clone();
                        for (k, v) in &variant.params {
                            given.insert(k.clone(), v.text());
                        }
                        resolve(workload, declared, &given)
                    })
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        Ok(Grid { cells })
    }

    /// The parameters whose value differs between the points, in name order.
    pub fn varying_params(&self) -> Vec<String> {
        let Some(first) = self.points.first() else {
            return Vec::new();
        };
        first
            .iter()
            .filter(|(k, v)| self.points.iter().any(|p| p.get(*k) != Some(*v)))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamKind;
    use crate::spec::Scalar;

    const DECLARED: &[ParamSpec] = &[
        ParamSpec {
            name: "size",
            role: crate::param_role::ParamRole::Plain,
            help: "",
            kind: ParamKind::Size {
                min: 1,
                max: 1 << 30,
            },
            default: Some("4K"),
        },
        ParamSpec {
            name: "threads",
            role: crate::param_role::ParamRole::Plain,
            help: "",
            kind: ParamKind::Int { min: 1, max: 64 },
            default: Some("1"),
        },
    ];

    fn spec() -> RunSpec {
        let point = |s: &str| BTreeMap::from([("size".to_string(), s.to_string())]);
        let mut b = VariantSpec {
            name: "b".into(),
            knobs: Default::default(),
            params: BTreeMap::new(),
        };
        b.params.insert("threads".into(), Scalar::Int(4));
        RunSpec {
            points: vec![point("4K"), point("1M")],
            variants: vec![
                VariantSpec {
                    name: "a".into(),
                    knobs: Default::default(),
                    params: BTreeMap::new(),
                },
                b,
            ],
            ..RunSpec::default()
        }
    }

    #[test]
    fn the_grid_resolves_every_point_under_every_variant() {
        let g = spec().resolve_grid("w", DECLARED).unwrap();
        assert_eq!(g.points(), 2);
        assert_eq!(g.params(1, 0).describe(), "size=1048576 threads=1");
        assert_eq!(g.params(1, 1).describe(), "size=1048576 threads=4");
        let mut g = g;
        g.retain_points(&[false, true]);
        assert_eq!(g.points(), 1);
        assert_eq!(g.params(0, 0).describe(), "size=1048576 threads=1");
    }

    #[test]
    fn a_bad_value_is_one_error_naming_it() {
        let mut s = spec();
        s.points[0].insert("threads".into(), "0".into());
        let e = s.resolve_grid("w", DECLARED).unwrap_err().to_string();
        assert!(e.contains("threads"), "{e}");
    }

    #[test]
    fn a_run_without_a_grid_reads_back_from_sparse_json() {
        let s: RunSpec = serde_json::from_str(
            r#"{"name":"x","workload":"import:fio","primary_metric":"bw",
                "variants":[{"name":"a"}],"compare":{"baseline":"a"},
                "imported":{"file":"f.json","parser":"fio","notes":[]}}"#,
        )
        .unwrap();
        assert_eq!(s.primary_metric, "bw");
        assert_eq!(s.compare.baseline.as_deref(), Some("a"));
        assert_eq!(s.imported.unwrap().parser, "fio");
        assert!(s.points.is_empty() && s.source.is_none());
    }

    #[test]
    fn varying_params_are_those_with_two_values() {
        assert_eq!(spec().varying_params(), ["size"]);
    }
}
