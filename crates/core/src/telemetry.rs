//! Telemetry: what the machine did around a measurement, as before/after deltas.

use serde::{Deserialize, Serialize};

use crate::units::Unit;

/// One delta from one source. `cpu: None` is the total over all CPUs of the machine.
///
/// Keys are the source's own names (`LOC`, `NET_RX`, `user`, `stop2:usage`), so a person
/// reading a drill-down sees the names their kernel uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TelemetryRow {
    pub source: String,
    pub key: String,
    /// Human description, e.g. "Local timer interrupts"; may be empty.
    pub label: String,
    pub cpu: Option<u32>,
    #[serde(deserialize_with = "crate::serde_nan::f64_or_nan")]
    pub value: f64,
    pub unit: Unit,
}

impl TelemetryRow {
    pub fn new(
        source: &str,
        key: impl Into<String>,
        label: impl Into<String>,
        cpu: Option<u32>,
        value: f64,
        unit: Unit,
    ) -> Self {
        Self {
            source: source.to_string(),
            key: key.into(),
            label: label.into(),
            cpu,
            value,
            unit,
        }
    }
}
