//! What the results database keeps: runs, their plans, and measurements with their telemetry.

use crate::{Params, TelemetryRow, WorkloadOutput};
use serde::{Deserialize, Serialize};

/// A run's number, as users type it (`perflab show 3`).
pub type RunId = i64;

/// One planned measurement of a run, in execution order (`seq`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedMeasurement {
    /// Position in the interleaved execution order, 0-based, unique in a run.
    pub seq: u32,
    /// Index of the parameter point in the grid.
    pub point: u32,
    pub params: Params,
    pub variant: String,
    /// Repetition number at this point and variant, 0-based.
    pub rep: u32,
    /// Whether this measurement's figures are results or only carry telemetry.
    #[serde(default)]
    pub role: Role,
}

/// What a measurement is for.
///
/// Some monitors cost work while the workload runs (per-task perf counters are switched in
/// and out at every context switch, which halved a same-CPU pipe ping-pong here). Those
/// run only in *telemetry* repetitions, planned beside the headline ones; their figures
/// are kept and shown as such but never feed a summary, interval, test or verdict.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A repetition whose figures are results: only monitors that do not disturb it.
    #[default]
    Headline,
    /// A repetition that carries the monitors that would disturb a headline figure.
    Telemetry,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Headline => "headline",
            Role::Telemetry => "telemetry",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [Role::Headline, Role::Telemetry]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "error")]
pub enum MeasurementStatus {
    Ok,
    /// The workload failed; the message is kept and the value is never used as a number.
    Failed(String),
    /// The workload ran, but a knob of its variant did not hold during it (a disabled idle
    /// state kept being entered, THP read back another mode): the figures are kept and
    /// shown, never used as that variant's numbers. The message says which knob and why.
    Ineffective(String),
    /// The workload ran, but other work took more than its share of the measurement's CPUs
    /// (the `disturbance` monitor's rule): the figures are kept and shown, never used as
    /// the variant's numbers. The message says how much of which CPUs.
    Disturbed(String),
}

impl MeasurementStatus {
    /// The failure or ineffectiveness message, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            MeasurementStatus::Ok => None,
            MeasurementStatus::Failed(m)
            | MeasurementStatus::Ineffective(m)
            | MeasurementStatus::Disturbed(m) => Some(m),
        }
    }

    pub fn word(&self) -> &'static str {
        match self {
            MeasurementStatus::Ok => "ok",
            MeasurementStatus::Failed(_) => "failed",
            MeasurementStatus::Ineffective(_) => "ineffective",
            MeasurementStatus::Disturbed(_) => "disturbed",
        }
    }
}

/// The result of one planned measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasurementRecord {
    pub seq: u32,
    pub point: u32,
    pub params: Params,
    pub variant: String,
    pub rep: u32,
    pub status: MeasurementStatus,
    /// Wall-clock start, seconds since the Unix epoch.
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub started_at: f64,
    /// How long the measurement took, seconds.
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub elapsed_s: f64,
    pub output: WorkloadOutput,
    pub telemetry: Vec<TelemetryRow>,
    /// Headline (a result) or telemetry (carries disturbing monitors; never a result).
    #[serde(default)]
    pub role: Role,
    /// The monitors that ran around this measurement, in the order they were started.
    #[serde(default)]
    pub monitors: Vec<String>,
}

impl MeasurementRecord {
    /// True when this measurement's figures are results of its variant: a headline
    /// repetition that ran with every knob holding and no other work disturbing it. Failed
    /// ones have no figures at all.
    pub fn is_result(&self) -> bool {
        self.role == Role::Headline && self.status == MeasurementStatus::Ok
    }

    pub fn is_headline(&self) -> bool {
        self.role == Role::Headline
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Stopped before its plan was done (Ctrl-C, error); `run --resume` finishes it.
    Interrupted,
    Complete,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Complete => "complete",
        }
    }
}

/// A variant that could not run on this machine, with the reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnavailableVariant {
    pub variant: String,
    pub reason: String,
}

/// What is needed to create a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    /// The run's identity across stores (see [`RunInfo::uid`]): `None` gives a new run a
    /// fresh one; a run copied from another store keeps its own.
    #[serde(default)]
    pub uid: Option<String>,
    pub study: String,
    pub workload: String,
    pub label: Option<String>,
    /// The fully expanded experiment spec.
    pub spec: crate::RunSpec,
    /// The host fingerprint.
    pub fingerprint: crate::Fingerprint,
    pub plan: Vec<PlannedMeasurement>,
    pub unavailable: Vec<UnavailableVariant>,
}

/// A stored run, without its measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: RunId,
    /// The run's identity across stores: 128 random bits as 32 lowercase hex digits, given
    /// when the run is created and kept when it is pushed or imported elsewhere (where its
    /// `id` may differ), so copying it again finds it instead of duplicating it.
    #[serde(default)]
    pub uid: String,
    /// Wall-clock creation time, seconds since the Unix epoch.
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub created_at: f64,
    pub study: String,
    pub workload: String,
    pub label: Option<String>,
    pub status: RunStatus,
    /// The experiment as the run stored it (see [`crate::RunSpec`]).
    pub spec: crate::RunSpec,
    pub fingerprint: crate::Fingerprint,
    pub unavailable: Vec<UnavailableVariant>,
    pub planned: u32,
    /// Measurements recorded that ran to the end (ineffective ones included).
    pub done: u32,
    pub failed: u32,
    /// Of `done`, those that ran while a knob of their variant did not hold.
    #[serde(default)]
    pub ineffective: u32,
}
