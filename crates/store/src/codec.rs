//! How Rust values become column values and back (see the conventions in `schema`).

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::corrupt;
use crate::{
    Location, MeasurementStatus, Role, RunId, RunInfo, RunStatus, StoreError, UnavailableVariant,
};
use perflab_core::Params;

/// The serde name of a unit-like enum value (`Unit::PerSecond` → `per_second`), so the
/// database uses the same words as the JSON exports and stays in step with new variants.
pub(crate) fn name<T: Serialize>(v: &T) -> Result<String, StoreError> {
    let text = serde_json::to_string(v).map_err(|source| StoreError::Encode {
        what: "an enum name",
        source,
    })?;
    Ok(
        match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            Some(inner) => inner.to_string(),
            None => text,
        },
    )
}

/// The inverse of [`name`]; `None` for a word this build does not know.
pub(crate) fn from_name<T: DeserializeOwned>(s: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
}

/// Remembers decoded names: a load of many thousand telemetry rows sees only a handful of
/// distinct unit words.
pub(crate) struct NameCache<T> {
    seen: Vec<(String, T)>,
}

impl<T: DeserializeOwned + Copy> NameCache<T> {
    pub(crate) fn new() -> Self {
        Self { seen: Vec::new() }
    }

    pub(crate) fn get(&mut self, s: &str) -> Option<T> {
        if let Some((_, v)) = self.seen.iter().find(|(k, _)| k == s) {
            return Some(*v);
        }
        let v: T = from_name(s)?;
        self.seen.push((s.to_string(), v));
        Some(v)
    }
}

pub(crate) fn json<T: Serialize + ?Sized>(what: &'static str, v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|source| StoreError::Encode { what, source })
}

/// Counters are kept as their i64 bit pattern: lossless for every u64.
pub(crate) fn u64_to_sql(v: u64) -> i64 {
    v as i64
}

pub(crate) fn u64_from_sql(v: i64) -> u64 {
    v as u64
}

/// SQLite turns a bound NaN into NULL; this turns it back.
pub(crate) fn real(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

pub(crate) fn run_status(s: &str) -> Option<RunStatus> {
    [
        RunStatus::Running,
        RunStatus::Interrupted,
        RunStatus::Complete,
    ]
    .into_iter()
    .find(|r| r.as_str() == s)
}

pub(crate) const OK: &str = "ok";
pub(crate) const FAILED: &str = "failed";

/// A measurement's `status`, `error`, `ineffective` and `disturbed` columns.
pub(crate) struct StatusColumns<'a> {
    pub(crate) status: &'static str,
    pub(crate) error: Option<&'a str>,
    pub(crate) ineffective: Option<&'a str>,
    pub(crate) disturbed: Option<&'a str>,
}

/// The columns of a measurement's status. An ineffective or disturbed measurement ran
/// (`ok`, so a resume does not redo it) and says why it is not its variant's number in
/// `ineffective` or `disturbed`.
pub(crate) fn status_columns(s: &MeasurementStatus) -> StatusColumns<'_> {
    let cols = |status, error, ineffective, disturbed| StatusColumns {
        status,
        error,
        ineffective,
        disturbed,
    };
    match s {
        MeasurementStatus::Ok => cols(OK, None, None, None),
        MeasurementStatus::Failed(e) => cols(FAILED, Some(e.as_str()), None, None),
        MeasurementStatus::Ineffective(why) => cols(OK, None, Some(why.as_str()), None),
        MeasurementStatus::Disturbed(why) => cols(OK, None, None, Some(why.as_str())),
    }
}

pub(crate) fn status_from_columns(
    status: &str,
    error: Option<String>,
    ineffective: Option<String>,
    disturbed: Option<String>,
) -> Option<MeasurementStatus> {
    match (status, ineffective, disturbed) {
        (OK, Some(why), _) => Some(MeasurementStatus::Ineffective(why)),
        (OK, None, Some(why)) => Some(MeasurementStatus::Disturbed(why)),
        (OK, None, None) => Some(MeasurementStatus::Ok),
        (FAILED, _, _) => Some(MeasurementStatus::Failed(error.unwrap_or_default())),
        _ => None,
    }
}

/// A `runs` row before its JSON and status text are decoded.
pub(crate) struct RawRun {
    pub(crate) id: RunId,
    pub(crate) created_at: Option<f64>,
    pub(crate) study: String,
    pub(crate) workload: String,
    pub(crate) label: Option<String>,
    pub(crate) status: String,
    pub(crate) spec: String,
    pub(crate) fingerprint: String,
    pub(crate) planned: u32,
    pub(crate) done: u32,
    pub(crate) failed: u32,
    pub(crate) ineffective: u32,
    pub(crate) uid: Option<String>,
}

impl RawRun {
    pub(crate) fn decode(
        self,
        db: impl Into<Location> + Copy,
        unavailable: Vec<UnavailableVariant>,
    ) -> Result<RunInfo, StoreError> {
        let id = self.id;
        let bad = |what: &str| corrupt(db, format!("run {id}: {what}"));
        Ok(RunInfo {
            id,
            uid: self.uid.ok_or_else(|| bad("it has no uid"))?,
            created_at: real(self.created_at),
            study: self.study,
            workload: self.workload,
            label: self.label,
            status: run_status(&self.status)
                .ok_or_else(|| bad(&format!("unknown status {:?}", self.status)))?,
            spec: serde_json::from_str(&self.spec)
                .map_err(|e| bad(&format!("its spec does not read back: {e}")))?,
            fingerprint: serde_json::from_str(&self.fingerprint)
                .map_err(|e| bad(&format!("its fingerprint is not JSON: {e}")))?,
            unavailable,
            planned: self.planned,
            done: self.done,
            failed: self.failed,
            ineffective: self.ineffective,
        })
    }
}

pub(crate) fn parse_role(
    db: impl Into<Location>,
    id: RunId,
    seq: u32,
    text: &str,
) -> Result<Role, StoreError> {
    Role::parse(text).ok_or_else(|| {
        corrupt(
            db,
            format!("run {id} measurement {seq}: unknown role {text:?}"),
        )
    })
}

pub(crate) fn parse_params(
    db: impl Into<Location>,
    id: RunId,
    seq: u32,
    text: &str,
) -> Result<Params, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| corrupt(db, format!("run {id} measurement {seq}: parameters: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::{Better, Unit};

    #[test]
    fn enum_names_round_trip() {
        assert_eq!(name(&Unit::PerSecond).unwrap(), "per_second");
        assert_eq!(
            from_name::<Unit>("mib_per_second"),
            Some(Unit::MibPerSecond)
        );
        assert_eq!(from_name::<Better>("sideways"), None);
        let mut c = NameCache::<Better>::new();
        assert_eq!(c.get("lower"), Some(Better::Lower));
        assert_eq!(c.get("lower"), Some(Better::Lower));
        assert_eq!(c.get(""), None);
    }

    #[test]
    fn counters_round_trip_at_the_extremes() {
        for v in [0, 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            assert_eq!(u64_from_sql(u64_to_sql(v)), v);
        }
    }

    #[test]
    fn statuses_round_trip() {
        for s in [
            RunStatus::Running,
            RunStatus::Interrupted,
            RunStatus::Complete,
        ] {
            assert_eq!(run_status(s.as_str()), Some(s));
        }
        assert_eq!(run_status("paused"), None);
        let failed = MeasurementStatus::Failed("boom".into());
        for st in [
            failed,
            MeasurementStatus::Ok,
            MeasurementStatus::Ineffective("cpuidle: state1 entered 3 times".into()),
            MeasurementStatus::Disturbed("other work took 48% of CPU 0".into()),
        ] {
            let c = status_columns(&st);
            let text = |t: Option<&str>| t.map(str::to_string);
            assert_eq!(
                status_from_columns(
                    c.status,
                    text(c.error),
                    text(c.ineffective),
                    text(c.disturbed)
                ),
                Some(st)
            );
        }
        assert_eq!(status_from_columns("maybe", None, None, None), None);
        // A knob that did not hold says more than a neighbour: ineffective wins.
        assert_eq!(
            status_from_columns(OK, None, Some("knob".into()), Some("busy".into())),
            Some(MeasurementStatus::Ineffective("knob".into()))
        );
    }
}
