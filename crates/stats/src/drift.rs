//! The drift guard of run-against-run comparisons.
//!
//! Two runs measured minutes or days apart are not interleaved: whatever changed on the
//! machine in between (frequency, thermal state, background load, a noisy neighbour) is
//! confounded with the change under test. Every run stores a short timing probe in its
//! fingerprint (a fixed integer loop and a fixed memory copy, see
//! `perflab_lab::fingerprint`); when two runs are compared, a probe that moved by more
//! than the noise threshold says the machine itself ran at a different speed.

use perflab_core::Better;
use serde::Serialize;

pub use perflab_core::timing_probe::{ProbeReading, TimingProbe};

/// One reading of two runs side by side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProbeDrift {
    pub name: String,
    pub unit: String,
    pub a: f64,
    pub b: f64,
    /// b / a.
    pub ratio: f64,
    /// |ratio − 1| is above the noise threshold.
    pub moved: bool,
    /// The machine was slower when run B took its probe (in this reading).
    pub b_slower: bool,
}

/// The readings both probes have, compared against `noise_pct`. Readings that are not
/// positive finite numbers are left out: they cannot be divided.
pub fn probe_drift(a: &TimingProbe, b: &TimingProbe, noise_pct: f64) -> Vec<ProbeDrift> {
    a.readings
        .iter()
        .filter_map(|ra| {
            let rb = b.readings.iter().find(|r| r.name == ra.name)?;
            let ok = |x: f64| x.is_finite() && x > 0.0;
            if !(ok(ra.value) && ok(rb.value)) {
                return None;
            }
            let ratio = rb.value / ra.value;
            Some(ProbeDrift {
                name: ra.name.clone(),
                unit: ra.unit.clone(),
                a: ra.value,
                b: rb.value,
                ratio,
                moved: (ratio - 1.0).abs() * 100.0 > noise_pct,
                b_slower: match ra.better {
                    Better::Higher => ratio < 1.0,
                    Better::Lower => ratio > 1.0,
                    Better::Neither => false,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(ns: f64, mib: f64) -> TimingProbe {
        TimingProbe {
            readings: vec![
                ProbeReading {
                    name: "integer loop".into(),
                    unit: "ns/op".into(),
                    value: ns,
                    better: Better::Lower,
                },
                ProbeReading {
                    name: "memcpy 4 MiB".into(),
                    unit: "MiB/s".into(),
                    value: mib,
                    better: Better::Higher,
                },
            ],
            tries: 7,
            build: "release".into(),
            at: 0.0,
        }
    }

    #[test]
    fn a_probe_that_moved_beyond_the_threshold_is_named() {
        let d = probe_drift(&probe(1.0, 10_000.0), &probe(1.05, 9_950.0), 1.0);
        assert_eq!(d.len(), 2);
        assert!(d[0].moved && d[0].b_slower, "{d:?}");
        assert!((d[0].ratio - 1.05).abs() < 1e-12);
        // 0.5 % slower copying is within the 1 % threshold.
        assert!(!d[1].moved && d[1].b_slower, "{d:?}");
        let strict = probe_drift(&probe(1.0, 10_000.0), &probe(1.05, 9_950.0), 0.1);
        assert!(strict[1].moved);
    }

    #[test]
    fn unusable_or_unmatched_readings_are_left_out() {
        let mut b = probe(0.0, 10_000.0);
        b.readings[1].name = "something else".into();
        assert!(probe_drift(&probe(1.0, 10_000.0), &b, 1.0).is_empty());
    }

    #[test]
    fn the_probe_reads_back_from_json() {
        let p = probe(1.25, 8_000.0);
        let text = serde_json::to_string(&p).unwrap();
        let back: TimingProbe = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p);
    }
}
