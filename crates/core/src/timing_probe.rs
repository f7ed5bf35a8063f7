//! The short timing probe a run stores in its fingerprint (a fixed integer loop and a
//! fixed memory copy, taken by `perflab_lab::fingerprint`). The type lives here because
//! the fingerprint that carries it crosses crates; `perflab_stats::drift` judges two of them.

use serde::{Deserialize, Serialize};

use crate::Better;

/// One figure of the probe: the median of its tries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeReading {
    /// What was timed, e.g. `integer loop`; readings of two runs match by name.
    pub name: String,
    /// `ns/op`, `MiB/s`.
    pub unit: String,
    pub value: f64,
    pub better: Better,
}

/// The probe as stored with a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingProbe {
    pub readings: Vec<ProbeReading>,
    /// Tries per reading; each value is their median.
    pub tries: u32,
    /// `release` or `debug`: the loop is perflab's own code, so a debug build of perflab
    /// runs it several times slower and its figures are no guide to the machine's drift.
    pub build: String,
    /// When it was taken, seconds since the Unix epoch.
    pub at: f64,
}
