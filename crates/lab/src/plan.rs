//! The execution order of a run: at each point, repetitions interleave the variants
//! (A B A B …), never all of A then all of B, so slow drift of the machine (thermal,
//! background load, page cache) falls on every variant alike. Telemetry repetitions
//! (numbered apart, from 0) follow a point's headline ones, interleaved the same way.
//!
//! The plan is a count and an iterator, never a list: a run may plan millions of
//! measurements, and each is made only when the store writes it or `--dry-run` shows it.

use perflab_core::{Grid, RunSpec};
use perflab_store::{PlannedMeasurement, Role};

use crate::error::Result;
use crate::plan_size::PlanShape;

/// Every measurement of a spec (resolved as its grid) for the variants available.
pub struct Plan<'a> {
    spec: &'a RunSpec,
    grid: &'a Grid,
    /// Index in the spec's list (the grid's column) and name of each variant planned.
    variants: Vec<(usize, &'a str)>,
}

impl<'a> Plan<'a> {
    /// Plans `spec` (resolved as `grid`) for the variants in `available` (by name, in the
    /// spec's order); refuses a plan over [`crate::plan_size::MAX_MEASUREMENTS`].
    pub fn new(spec: &'a RunSpec, grid: &'a Grid, available: &[String]) -> Result<Plan<'a>> {
        let variants: Vec<(usize, &str)> = spec
            .variants
            .iter()
            .enumerate()
            .filter(|(_, v)| available.contains(&v.name))
            .map(|(i, v)| (i, v.name.as_str()))
            .collect();
        let plan = Plan {
            spec,
            grid,
            variants,
        };
        plan.shape().check()?;
        Ok(plan)
    }

    fn shape(&self) -> PlanShape {
        PlanShape {
            points: self.grid.points() as u64,
            variants: self.variants.len() as u64,
            repetitions: u64::from(self.spec.repetitions),
            capped: false,
            telemetry: u64::from(self.spec.telemetry_reps),
        }
    }

    /// How many measurements the plan holds.
    pub fn len(&self) -> u64 {
        self.shape().measurements().unwrap_or(u64::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many of them are telemetry repetitions.
    pub fn telemetry_len(&self) -> u64 {
        self.grid.points() as u64 * self.variants.len() as u64 * u64::from(self.spec.telemetry_reps)
    }

    /// Each grid cell planned (point, the variant's column) with how many measurements it
    /// gets: for sums over the plan that need no measurement built.
    pub fn cells(&self) -> impl Iterator<Item = (usize, usize, u64)> + '_ {
        let per_cell = u64::from(self.spec.repetitions) + u64::from(self.spec.telemetry_reps);
        (0..self.grid.points()).flat_map(move |point| {
            self.variants
                .iter()
                .map(move |(v, _)| (point, *v, per_cell))
        })
    }

    /// The measurements in execution order, each made as it is asked for.
    pub fn iter(&self) -> impl Iterator<Item = PlannedMeasurement> + '_ {
        let reps = self.spec.repetitions;
        let per_cell = reps + self.spec.telemetry_reps;
        let width = self.variants.len();
        (0..self.grid.points()).flat_map(move |point| {
            (0..per_cell).flat_map(move |round| {
                let (role, rep) = if round < reps {
                    (Role::Headline, round)
                } else {
                    (Role::Telemetry, round - reps)
                };
                let first = (point * per_cell as usize + round as usize) * width;
                self.variants
                    .iter()
                    .enumerate()
                    .map(move |(k, (v, name))| PlannedMeasurement {
                        // Bounded by MAX_MEASUREMENTS, checked in `new`.
                        seq: (first + k) as u32,
                        point: point as u32,
                        params: self.grid.params(point, *v).clone(),
                        variant: name.to_string(),
                        rep,
                        role,
                    })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use perflab_core::spec::VariantSpec;
    use perflab_core::{ParamKind, ParamSpec};

    use super::*;

    const DECLARED: &[ParamSpec] = &[ParamSpec {
        name: "size",
        role: perflab_core::ParamRole::Plain,
        help: "",
        kind: ParamKind::Int { min: 1, max: 100 },
        default: Some("1"),
    }];

    fn spec(reps: u32, telemetry: u32) -> RunSpec {
        let variant = |name: &str| VariantSpec {
            name: name.into(),
            knobs: Default::default(),
            params: BTreeMap::new(),
        };
        let point = |s: &str| BTreeMap::from([("size".to_string(), s.to_string())]);
        RunSpec {
            repetitions: reps,
            telemetry_reps: telemetry,
            points: vec![point("1"), point("2")],
            variants: vec![variant("a"), variant("b"), variant("c")],
            ..RunSpec::default()
        }
    }

    #[test]
    fn repetitions_interleave_the_variants_and_telemetry_follows() {
        let spec = spec(2, 1);
        let grid = spec.resolve_grid("w", DECLARED).unwrap();
        let plan = Plan::new(&spec, &grid, &["a".into(), "c".into()]).unwrap();
        let got: Vec<String> = plan
            .iter()
            .map(|m| {
                format!(
                    "{} p{} {} {}{} {}",
                    m.seq,
                    m.point,
                    m.variant,
                    m.role.as_str(),
                    m.rep,
                    m.params.describe()
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                "0 p0 a headline0 size=1",
                "1 p0 c headline0 size=1",
                "2 p0 a headline1 size=1",
                "3 p0 c headline1 size=1",
                "4 p0 a telemetry0 size=1",
                "5 p0 c telemetry0 size=1",
                "6 p1 a headline0 size=2",
                "7 p1 c headline0 size=2",
                "8 p1 a headline1 size=2",
                "9 p1 c headline1 size=2",
                "10 p1 a telemetry0 size=2",
                "11 p1 c telemetry0 size=2",
            ]
        );
        assert_eq!(plan.len(), 12);
        assert_eq!(plan.telemetry_len(), 4);
        let cells: Vec<_> = plan.cells().collect();
        assert_eq!(cells, [(0, 0, 3), (0, 2, 3), (1, 0, 3), (1, 2, 3)]);
    }

    #[test]
    fn a_plan_over_the_limit_is_refused_before_a_measurement_is_made() {
        let spec = spec(10_000, 100);
        let grid = spec.resolve_grid("w", DECLARED).unwrap();
        let names: Vec<String> = (0..3).map(|i| ["a", "b", "c"][i].to_string()).collect();
        assert!(Plan::new(&spec, &grid, &names).is_ok());
        let mut big = spec.clone();
        big.points = vec![BTreeMap::new(); 400];
        let grid = big.resolve_grid("w", DECLARED).unwrap();
        let e = Plan::new(&big, &grid, &names).err().unwrap().to_string();
        assert!(e.starts_with("the plan has 12120000 measurements (400 points × 3 variants × (10000 repetitions + 100 telemetry))"), "{e}");
    }
}
