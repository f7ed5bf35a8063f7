//! The documented range of every number a person gives perflab in an experiment file or a
//! flag of `run`: one place, so the file check, the flag check, `--help` and
//! docs/experiments.md say the same. A value outside its range is refused with one line
//! naming it: `target_ci = 1e308` would otherwise plan a run "within ±1e308%".

use std::ops::RangeInclusive;

/// `repetitions` / `--reps`: per point and variant.
pub const REPETITIONS: RangeInclusive<u32> = 1..=10_000;
/// `warmup` / `--warmup`: unrecorded measurements at the start.
pub const WARMUP: RangeInclusive<u32> = 0..=1_000;
/// `telemetry_reps` / `--telemetry-reps`.
pub const TELEMETRY_REPS: RangeInclusive<u32> = 0..=100;
/// `target_ci` / `--target-ci`, percent of the median, above 0: an interval wider than the
/// median itself says nothing a first repetition did not.
pub const TARGET_CI_MAX_PCT: f64 = 100.0;
/// `partners.limit`: 0 keeps every partner.
pub const PARTNERS_LIMIT: RangeInclusive<usize> = 0..=4096;
/// A CPU number (`--anchor`): Linux's default NR_CPUS ceiling on x86-64 distributions.
pub const CPU: RangeInclusive<u32> = 0..=4095;
/// `compare.buckets` / `--buckets`: edges in percent, above 0.
pub const BUCKET_EDGE_MAX_PCT: f64 = 10_000.0;
/// Any time a flag of perflab's own takes (a timeout, a session's length), seconds above 0:
/// a day is longer than any of them is meant for, and far below where a `Duration` would
/// overflow.
pub const FLAG_SECONDS_MAX: f64 = 86_400.0;

/// A number as a person reads it in an error: `-1e308`, not its 309 digits.
pub use crate::quantity_text::format_number as number;

/// `NAME = V: must be LO to HI` when `v` is outside `range`.
pub fn check_in<T: PartialOrd + std::fmt::Display>(
    name: &str,
    v: T,
    range: &RangeInclusive<T>,
) -> Result<(), String> {
    if range.contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "{name} = {v}: must be {} to {}",
            range.start(),
            range.end()
        ))
    }
}

/// A time flag of perflab's own: above 0 and at most [`FLAG_SECONDS_MAX`].
pub fn flag_seconds(flag: &str, text: &str) -> Result<f64, String> {
    let s = crate::quantity_text::parse_duration(text).map_err(|e| format!("{flag}: {e}"))?;
    if s > 0.0 && s <= FLAG_SECONDS_MAX {
        Ok(s)
    } else {
        Err(format!(
            "{flag} {text}: must be above 0 and at most {}",
            crate::quantity_text::format_duration(FLAG_SECONDS_MAX)
        ))
    }
}

/// Bucket edges in percent: above 0, at most [`BUCKET_EDGE_MAX_PCT`], increasing.
pub fn check_bucket_edges(name: &str, edges: &[f64]) -> Result<(), String> {
    if edges.is_empty() {
        return Err(format!("{name}: no edges given"));
    }
    if let Some(e) = edges
        .iter()
        .find(|e| !(e.is_finite() && **e > 0.0 && **e <= BUCKET_EDGE_MAX_PCT))
    {
        return Err(format!(
            "{name}: edge {} must be above 0 and at most {BUCKET_EDGE_MAX_PCT} (percent)",
            number(*e)
        ));
    }
    if let Some(w) = edges.windows(2).find(|w| w[1] <= w[0]) {
        return Err(format!(
            "{name}: {} does not come after {}: edges must increase",
            w[1], w[0]
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_name_the_value_and_its_bounds() {
        assert!(check_in("repetitions", 5, &REPETITIONS).is_ok());
        assert_eq!(
            check_in("repetitions", 0, &REPETITIONS).unwrap_err(),
            "repetitions = 0: must be 1 to 10000"
        );
        assert!(flag_seconds("--x", "10m").is_ok());
        assert!(flag_seconds("--x", "0s").is_err());
        assert!(flag_seconds("--x", "1e300s")
            .unwrap_err()
            .ends_with("must be above 0 and at most 1d"));
        // "At most a day", as the help says: a day and a nanosecond are both times.
        assert_eq!(flag_seconds("--x", "1d"), Ok(86_400.0));
        assert_eq!(flag_seconds("--x", "1ns"), Ok(1e-9));
        assert!(check_bucket_edges("b", &[1.0, 2.0]).is_ok());
        assert!(check_bucket_edges("b", &[1.0, 1e308]).is_err());
        assert!(check_bucket_edges("b", &[2.0, 1.0]).is_err());
        assert!(check_bucket_edges("b", &[]).is_err());
    }
}
