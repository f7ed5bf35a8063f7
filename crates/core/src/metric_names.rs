//! One spelling of rates in metric names, and the old spellings stored runs still carry.
//!
//! A metric name ends in its unit, and "per second" is always `_s`: `bandwidth_mib_s`
//! (MiB/s), `sender_bytes_s` (bytes/s), and for counts `<things>_per_s`
//! (`round_trips_per_s`, `transactions_per_s`, `ops_per_s`). Before that was settled,
//! ctxsw spelled its two rates `_per_sec`; runs stored then keep those names. Every lookup
//! of a metric by name ([`crate::WorkloadOutput::metric`]) goes through [`same_metric`],
//! so `compare`, `report` and `--metric` match an old run's metric under either name.

/// (old name, current name) of every renamed metric.
pub const RENAMED: &[(&str, &str)] = &[
    ("round_trips_per_sec", "round_trips_per_s"),
    ("switches_per_sec", "switches_per_s"),
];

/// The current name of a metric (itself when it was never renamed).
pub fn canonical(name: &str) -> &str {
    RENAMED
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// Whether two names denote one metric, under its old or its current spelling.
pub fn same_metric(a: &str, b: &str) -> bool {
    a == b || canonical(a) == canonical(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_and_new_spellings_match_and_others_do_not() {
        assert_eq!(canonical("round_trips_per_sec"), "round_trips_per_s");
        assert_eq!(canonical("bandwidth_mib_s"), "bandwidth_mib_s");
        assert!(same_metric("round_trips_per_sec", "round_trips_per_s"));
        assert!(same_metric("switches_per_s", "switches_per_sec"));
        assert!(!same_metric("round_trips_per_sec", "switches_per_s"));
        for (old, new) in RENAMED {
            // A current name is never itself an old one, so lookups cannot chain.
            assert!(RENAMED.iter().all(|(o, _)| o != new), "{new}");
            // The one spelling: per second is `_s`.
            assert!(new.ends_with("_per_s") && old.ends_with("_per_sec"));
        }
    }

    #[test]
    fn an_output_is_read_under_either_name() {
        use crate::{Better, Metric, Unit, WorkloadOutput};
        let out = WorkloadOutput {
            metrics: vec![Metric::new(
                "round_trips_per_sec",
                5.0,
                Unit::PerSecond,
                Better::Higher,
            )],
            ..Default::default()
        };
        assert_eq!(out.metric("round_trips_per_s").map(|m| m.value), Some(5.0));
        assert_eq!(
            out.metric("round_trips_per_sec").map(|m| m.value),
            Some(5.0)
        );
        assert!(out.metric("switches_per_s").is_none());
    }
}
