//! Experiment specs as people write them (TOML files, presets, CLI flags), and their
//! expansion against a machine's topology into the fully explicit form a run stores.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::adaptive_target::check_settings;
use crate::KnobSettings;

/// An experiment file that does not parse or check, with its name.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct SpecFileError {
    pub path: String,
    pub reason: String,
}

/// A scalar parameter value as written in TOML or on the command line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    pub fn text(&self) -> String {
        match self {
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Str(s) => s.clone(),
        }
    }
}

/// CPUs chosen relative to another CPU parameter, from the machine's topology.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartnersSpec {
    /// The parameter holding the anchor CPU, e.g. `cpu_a`.
    pub partners_of: String,
    /// `per-core`: one CPU of every core (a sibling on the anchor's own core, else the
    /// anchor itself); `all`: every online CPU.
    #[serde(default = "per_core")]
    pub mode: String,
    /// Keep at most this many partners, evenly spread over the list.
    #[serde(default)]
    pub limit: Option<usize>,
}

fn per_core() -> String {
    "per-core".into()
}

/// A parameter: one value, a list (a grid axis), or partners from the topology.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamInput {
    One(Scalar),
    List(Vec<Scalar>),
    Partners(PartnersSpec),
}

/// A variant: a named set of knob settings and parameter overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    pub name: String,
    /// In written order: applied in it, restored in reverse; a knob may appear twice.
    #[serde(default)]
    pub knobs: KnobSettings,
    #[serde(default)]
    pub params: BTreeMap<String, Scalar>,
}

/// What the study compares by default when it finishes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSpec {
    /// The baseline variant (A); the other variants are compared against it.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Regression bucket edges in percent.
    #[serde(default)]
    pub buckets: Option<Vec<f64>>,
    /// Write the per-pair drill-down directory after the run.
    #[serde(default)]
    pub drilldown: bool,
}

/// What `--quick` changes: fewer repetitions and parameter overrides (shorter
/// measurements, fewer sizes), so a first look takes a minute or two.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickSpec {
    #[serde(default)]
    pub repetitions: Option<u32>,
    #[serde(default)]
    pub params: BTreeMap<String, ParamInput>,
}

/// An experiment as written by a person.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub workload: String,
    #[serde(default = "default_reps")]
    pub repetitions: u32,
    /// Unrecorded measurements at the start of the run.
    #[serde(default)]
    pub warmup: u32,
    /// Monitor names; `None` means all default monitors.
    #[serde(default)]
    pub monitors: Option<Vec<String>>,
    #[serde(default)]
    pub params: BTreeMap<String, ParamInput>,
    #[serde(default)]
    pub variants: Vec<VariantSpec>,
    #[serde(default)]
    pub compare: CompareSpec,
    /// Overrides for `--quick`; without it, `--quick` means 0.5 s measurements.
    #[serde(default)]
    pub quick: Option<QuickSpec>,
    /// Adaptive repetitions: after the planned ones, repeat a point until the median's
    /// 95% interval is within ±this percent of the median (or `max_reps` is reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ci: Option<f64>,
    /// The most repetitions adaptive repetitions may reach per point and variant
    /// (default [`crate::adaptive_target::DEFAULT_MAX_REPS`]); only with `target_ci`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reps: Option<u32>,
    /// After the planned repetitions, add repetitions to the comparison rows still
    /// undecided, until each is decided or `max_reps` is reached (`--until-decided`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub until_decided: bool,
    /// Telemetry repetitions per point and variant for the monitors that would disturb a
    /// headline figure (perf counters); default 1 when such a monitor is selected, 0 to
    /// not take them at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry_reps: Option<u32>,
    /// Before measuring, and after a disturbed measurement, wait for the measured CPUs to
    /// be quiet (other work at most 10 % of them over 1 s), at most this long in all over
    /// the run (`"60s"`; `"0s"`: never wait). `--quiet-machine`; `--quick` waits 5 s at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_machine: Option<String>,
    /// A measurement on whose CPUs other work took more than this percent (after the
    /// accounting's granularity) is disturbed: kept, never a result. Default
    /// [`DISTURBED_ABOVE_PCT`]; 100 marks none (`--disturbed-above`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed_above: Option<f64>,
}

/// Other work above this share of a measurement's CPUs makes it disturbed, unless the run
/// says otherwise (docs/METHODOLOGY.md, "A disturbed machine").
pub const DISTURBED_ABOVE_PCT: f64 = 10.0;

/// The longest a run may wait for a quiet machine in all, seconds.
pub const QUIET_MACHINE_MAX_S: f64 = 3600.0;
/// What `--quick` allows: a quick look waits a little, not a minute.
const QUIET_MACHINE_QUICK_S: f64 = 5.0;

/// The monitors a spec names, as a run keeps them: `none` alone (or an empty list, or
/// only empty names, as `--monitors ''` gives) is no monitor at all; `none` beside a
/// monitor is a contradiction.
pub fn monitor_names(given: &[String]) -> Result<Vec<String>, String> {
    let names: Vec<String> = given
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if names.iter().any(|n| n == "none") {
        if names.len() > 1 {
            return Err(format!(
                "monitors {}: \"none\" means no monitor, so it cannot be given with others",
                names.join(",")
            ));
        }
        return Ok(Vec::new());
    }
    Ok(names)
}

fn default_reps() -> u32 {
    3
}

impl ExperimentSpec {
    /// Parses a TOML experiment file; the error names the file and the problem.
    pub fn from_toml(path: &str, text: &str) -> Result<Self, SpecFileError> {
        let spec: ExperimentSpec = toml::from_str(text).map_err(|e| SpecFileError {
            path: path.to_string(),
            reason: e.message().replace('\n', " "),
        })?;
        spec.check().map_err(|reason| SpecFileError {
            path: path.to_string(),
            reason,
        })?;
        Ok(spec)
    }

    /// Checks what serde cannot: counts and names.
    pub fn check(&self) -> std::result::Result<(), String> {
        use crate::limits::{check_in, PARTNERS_LIMIT, REPETITIONS, TELEMETRY_REPS, WARMUP};
        check_in("repetitions", self.repetitions, &REPETITIONS)?;
        if let Some(r) = self.quick.as_ref().and_then(|q| q.repetitions) {
            check_in("quick.repetitions", r, &REPETITIONS)?;
        }
        check_in("warmup", self.warmup, &WARMUP)?;
        self.quiet_machine_s()?;
        if let Some(p) = self.disturbed_above {
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!(
                    "disturbed_above = {p}: must be above 0 and at most 100"
                ));
            }
        }
        // `max_reps` caps until-decided repetitions too, so it needs no `target_ci` then.
        let target = self.target_ci.or(self.until_decided.then_some(1.0));
        check_settings(target, self.max_reps, self.repetitions).map_err(|e| e.for_file())?;
        if let Some(t) = self.telemetry_reps {
            check_in("telemetry_reps", t, &TELEMETRY_REPS)?;
        }
        if let Some(b) = &self.compare.buckets {
            crate::limits::check_bucket_edges("compare.buckets", b)?;
        }
        let quick_params = self.quick.iter().flat_map(|q| q.params.iter());
        for (name, p) in self.params.iter().chain(quick_params) {
            if let ParamInput::Partners(PartnersSpec { limit: Some(l), .. }) = p {
                check_in(&format!("{name}.limit"), *l, &PARTNERS_LIMIT)?;
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for v in &self.variants {
            if v.name.is_empty() || v.name.contains(['/', ',', ' ']) {
                return Err(format!(
                    "variant name {:?} must be non-empty, without '/', ',' or spaces",
                    v.name
                ));
            }
            if !seen.insert(&v.name) {
                return Err(format!("variant {:?} is defined twice", v.name));
            }
        }
        for (name, p) in &self.params {
            if let ParamInput::List(l) = p {
                if l.is_empty() {
                    return Err(format!("parameter {name} has an empty list"));
                }
            }
        }
        Ok(())
    }

    /// Applies the `--quick` overrides.
    pub fn make_quick(&mut self) {
        if let Ok(Some(s)) = self.quiet_machine_s() {
            if s > QUIET_MACHINE_QUICK_S {
                self.quiet_machine = Some(format!("{QUIET_MACHINE_QUICK_S}s"));
            }
        }
        match self.quick.clone() {
            Some(q) => {
                if let Some(r) = q.repetitions {
                    self.repetitions = r;
                }
                self.params.extend(q.params);
            }
            None => {
                self.params.insert(
                    "duration".into(),
                    ParamInput::One(Scalar::Str("0.5s".into())),
                );
            }
        }
    }

    /// The most the run waits for a quiet machine in all, seconds (`None`: it does not).
    pub fn quiet_machine_s(&self) -> std::result::Result<Option<f64>, String> {
        let Some(text) = &self.quiet_machine else {
            return Ok(None);
        };
        let s = crate::parse_duration(text).map_err(|e| format!("quiet_machine: {e}"))?;
        if s > QUIET_MACHINE_MAX_S {
            return Err(format!(
                "quiet_machine = {text:?}: at most {QUIET_MACHINE_MAX_S} s (1h)"
            ));
        }
        Ok((s > 0.0).then_some(s))
    }

    /// The variants to run: the declared ones, or one variant `default` without knobs.
    pub fn effective_variants(&self) -> Vec<VariantSpec> {
        if self.variants.is_empty() {
            vec![VariantSpec {
                name: "default".into(),
                knobs: KnobSettings::new(),
                params: BTreeMap::new(),
            }]
        } else {
            self.variants.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: &str = include_str!("../../../presets/idle-ipi.toml");

    #[test]
    fn preset_parses() {
        let s = ExperimentSpec::from_toml("idle-ipi.toml", IDLE).unwrap();
        assert_eq!(s.workload, "ctxsw");
        assert_eq!(s.variants.len(), 2);
        assert!(matches!(
            s.params.get("cpu_b"),
            Some(ParamInput::Partners(_))
        ));
    }

    #[test]
    fn malformed_files_name_the_problem() {
        let e = ExperimentSpec::from_toml("x.toml", "name = 1").unwrap_err();
        assert!(e.to_string().starts_with("x.toml: "), "{e}");
        let e =
            ExperimentSpec::from_toml("x.toml", "name='a'\nworkload='null'\nbogus=1").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = ExperimentSpec::from_toml("x.toml", "name='a'\nworkload='null'\nrepetitions=0")
            .unwrap_err();
        assert!(e.to_string().contains("repetitions"), "{e}");
        let two = "name='a'\nworkload='null'\n[[variants]]\nname='v'\n[[variants]]\nname='v'";
        assert!(ExperimentSpec::from_toml("x.toml", two).is_err());
    }

    /// `quiet_machine` is a duration up to an hour, 0 means no wait, and `--quick` caps
    /// it at 5 s.
    #[test]
    fn quiet_machine_is_a_bounded_duration() {
        let base = "name='a'\nworkload='null'\n";
        let read = |extra: &str| ExperimentSpec::from_toml("x.toml", &format!("{base}{extra}"));
        assert_eq!(read("").unwrap().quiet_machine_s(), Ok(None));
        let mut s = read("quiet_machine='2m'").unwrap();
        assert_eq!(s.quiet_machine_s(), Ok(Some(120.0)));
        s.make_quick();
        assert_eq!(s.quiet_machine_s(), Ok(Some(5.0)));
        assert_eq!(
            read("quiet_machine='0s'").unwrap().quiet_machine_s(),
            Ok(None)
        );
        let e = read("quiet_machine='2h'").unwrap_err().to_string();
        assert!(e.contains("at most 3600 s"), "{e}");
        assert!(read("quiet_machine='soon'").is_err());
    }

    #[test]
    fn until_decided_is_read_and_takes_max_reps_as_its_cap() {
        let base = "name='a'\nworkload='null'\nrepetitions=5\n";
        let s =
            ExperimentSpec::from_toml("x.toml", &format!("{base}until_decided=true\nmax_reps=20"))
                .unwrap();
        assert!(s.until_decided);
        let u = crate::adaptive_target::until_decided_of(s.until_decided, s.max_reps, 5).unwrap();
        assert_eq!((u.planned, u.cap), (5, 20));
        assert!(
            !ExperimentSpec::from_toml("x.toml", base)
                .unwrap()
                .until_decided
        );
        // The cap is still checked against the planned repetitions.
        let e =
            ExperimentSpec::from_toml("x.toml", &format!("{base}until_decided=true\nmax_reps=2"))
                .unwrap_err();
        assert!(e.to_string().contains("max_reps"), "{e}");
    }

    #[test]
    fn adaptive_keys_are_read_and_checked() {
        let base = "name='a'\nworkload='null'\nrepetitions=5\n";
        let s = ExperimentSpec::from_toml("x.toml", &format!("{base}target_ci=0.5\nmax_reps=20"))
            .unwrap();
        assert_eq!((s.target_ci, s.max_reps), (Some(0.5), Some(20)));
        let s = ExperimentSpec::from_toml("x.toml", base).unwrap();
        assert_eq!((s.target_ci, s.max_reps), (None, None));
        for (bad, needle) in [
            ("target_ci=0", "target_ci"),
            ("target_ci=-1", "target_ci"),
            ("target_ci=inf", "target_ci"),
            (
                "target_ci=1e308",
                "target_ci = 1e308: must be a percentage above 0 and at most 100",
            ),
            ("target_ci=9223372036854775807", "target_ci"),
            ("target_ci=nan", "target_ci"),
            ("max_reps=10", "max_reps needs target_ci"),
            ("target_ci=1\nmax_reps=4", "max_reps = 4"),
        ] {
            let e = ExperimentSpec::from_toml("x.toml", &format!("{base}{bad}")).unwrap_err();
            assert!(e.to_string().contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn none_or_nothing_is_no_monitor() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(monitor_names(&v(&["none"])), Ok(vec![]));
        assert_eq!(monitor_names(&v(&[""])), Ok(vec![]));
        assert_eq!(monitor_names(&v(&[])), Ok(vec![]));
        assert_eq!(
            monitor_names(&v(&[" interrupts", ""])),
            Ok(v(&["interrupts"]))
        );
        assert!(monitor_names(&v(&["none", "cpuidle"]))
            .unwrap_err()
            .contains("cannot be given with others"));
    }

    #[test]
    fn every_numeric_key_is_held_to_its_range() {
        let base = "name='a'\nworkload='null'\n";
        for (bad, needle) in [
            ("repetitions=0", "repetitions = 0: must be 1 to 10000"),
            (
                "repetitions=10001",
                "repetitions = 10001: must be 1 to 10000",
            ),
            ("warmup=1001", "warmup = 1001: must be 0 to 1000"),
            (
                "telemetry_reps=101",
                "telemetry_reps = 101: must be 0 to 100",
            ),
            ("[quick]\nrepetitions=0", "quick.repetitions = 0"),
            (
                "[compare]\nbuckets=[1, 1e308]",
                "compare.buckets: edge 1e308",
            ),
            ("[compare]\nbuckets=[0]", "compare.buckets: edge 0"),
            (
                "[params]\ncpu_b={partners_of='cpu_a', limit=5000}",
                "cpu_b.limit = 5000: must be 0 to 4096",
            ),
        ] {
            let e = ExperimentSpec::from_toml("x.toml", &format!("{base}{bad}")).unwrap_err();
            assert!(e.to_string().contains(needle), "{bad}: {e}");
        }
        for fine in [
            "repetitions=10000",
            "warmup=1000",
            "telemetry_reps=0",
            "target_ci=100",
        ] {
            assert!(ExperimentSpec::from_toml("x.toml", &format!("{base}{fine}")).is_ok());
        }
    }
}
