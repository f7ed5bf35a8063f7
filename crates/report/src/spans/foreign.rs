//! Whose events a span keyed by CPU matched. A span from `softirq_raise` to
//! `softirq_entry` on one CPU matches every NET_RX of that CPU, the benchmark's packets or
//! anyone else's; on a VM path the host's spans keyed by CPU matched about 95 events per
//! round trip that were not the benchmark's, and printed a p50 as if it were (issue 32).
//!
//! The monitor leaves, for each span keyed by CPU (or chained after one), how many matches
//! per round trip its set expects from the study's own work (`{span}:per_round_trip`); the
//! workload counts its round trips (netrr's `exchanges`, ctxsw's and so idle-ipi's
//! `round_trips`). What matched beyond the expected count is foreign:
//!
//! foreign per round trip = matched / round trips − expected per round trip
//!
//! (per repetition, the median over the repetitions). The tracer runs for the whole
//! measurement, warm-up included, while the workload counts its timed window only (idle-ipi
//! quick: 50 ms counted of 250 ms run), so the round trips are the window's rate times the
//! measurement's elapsed time, or the count where that is more: the estimate errs towards
//! more round trips, that is towards fewer foreign events. Above
//! [`MAX_FOREIGN_PER_EXPECTED`] × expected (for an expectation of one: more than half a
//! foreign event per round trip, more than a third of the matched spans someone else's)
//! the row shows the count and no figure, as a row with too few events does. A span whose
//! workload counts no round trips says so on its row, rather than guess.

use perflab_core::record::MeasurementRecord;
use perflab_core::span_outline::{MAX_FOREIGN_PER_EXPECTED, PER_ROUND_TRIP_STAT};
use serde::Serialize;

use crate::spans::rows;

/// The workload metrics that count a measurement's round trips in its timed window, each
/// with the rate of that window, in the order looked for.
pub const ROUND_TRIP_METRICS: [(&str, &str); 2] = [
    ("exchanges", "transactions_per_s"),
    ("round_trips", "round_trips_per_s"),
];

/// What a table with such rows says of them (after its other sentences).
pub const LEGEND: &str = " A span keyed by CPU matches every event on its CPUs, the \
     study's or not: its matches show how many per round trip were beyond what the study's \
     own work makes (foreign/round trip); more than half the expected count beyond it reads \
     contaminated, with no figure.";

/// A span keyed by CPU, its matches against the workload's round trips.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Foreign {
    /// Medians over the repetitions that recorded both the span and a round-trip count.
    Counted {
        /// Matched spans per round trip.
        matched_per_trip: f64,
        /// What the span's set expects of the study's own work per round trip.
        expected_per_trip: f64,
        /// Matched beyond that, per round trip (0 where it matched fewer).
        foreign_per_trip: f64,
        /// Whether `foreign_per_trip` is above the limit: the row has no figure.
        contaminated: bool,
    },
    /// The workload counts no round trips, so its foreign matches are not counted.
    NoRoundTrips,
}

impl Foreign {
    /// The row must not show a figure.
    pub fn contaminated(&self) -> bool {
        matches!(
            self,
            Foreign::Counted {
                contaminated: true,
                ..
            }
        )
    }

    /// For a row: `0.2 foreign/round trip`, or that there is no count to judge by.
    pub fn describe(&self) -> String {
        match self {
            Foreign::Counted {
                foreign_per_trip, ..
            } => format!("{} foreign/round trip", per_trip(*foreign_per_trip)),
            Foreign::NoRoundTrips => "foreign not counted: no round trips".to_string(),
        }
    }

    /// For a refused cell: `contaminated: 95 foreign events per round trip (> 0.50)`.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Foreign::Counted {
                foreign_per_trip,
                expected_per_trip,
                contaminated: true,
                ..
            } => Some(refusal(*foreign_per_trip, *expected_per_trip)),
            _ => None,
        }
    }
}

/// Why a contaminated span has no figure, with the count and the limit.
pub fn refusal(foreign_per_trip: f64, expected_per_trip: f64) -> String {
    format!(
        "contaminated: {} foreign events per round trip (> {})",
        per_trip(foreign_per_trip),
        per_trip(MAX_FOREIGN_PER_EXPECTED * expected_per_trip)
    )
}

/// How a span (`netrx.raise`) of `recs` stands; `None` for a span not keyed by CPU (the
/// monitor left no expectation for it, as for every span of a run stored before).
pub fn foreign(recs: &[&MeasurementRecord], span: &str) -> Option<Foreign> {
    let expected = perflab_stats::median(
        recs.iter()
            .filter_map(|m| rows::value(m, span, PER_ROUND_TRIP_STAT))
            .filter(|x| *x > 0.0),
    )?;
    let per_rep: Vec<f64> = recs
        .iter()
        .filter_map(|m| {
            let matched = rows::value(m, span, "count")?;
            let trips = round_trips(m).filter(|t| *t > 0.0)?;
            Some(matched / trips)
        })
        .collect();
    let Some(matched) = perflab_stats::median(per_rep) else {
        return Some(Foreign::NoRoundTrips);
    };
    let foreign = (matched - expected).max(0.0);
    Some(Foreign::Counted {
        matched_per_trip: matched,
        expected_per_trip: expected,
        foreign_per_trip: foreign,
        contaminated: foreign > MAX_FOREIGN_PER_EXPECTED * expected,
    })
}

/// The round trips a measurement made while it was traced, where its workload counts
/// them: the timed window's rate over the whole measurement, at least the window's count.
fn round_trips(m: &MeasurementRecord) -> Option<f64> {
    ROUND_TRIP_METRICS.iter().find_map(|(count, rate)| {
        let counted = m.output.metric(count)?.value;
        let traced = m
            .output
            .metric(rate)
            .map(|r| r.value * m.elapsed_s)
            .filter(|t| t.is_finite());
        Some(traced.map_or(counted, |t| t.max(counted)))
    })
}

/// `95`, `1.5`, `0.12`: as many digits as a count per round trip needs.
fn per_trip(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}")
    } else if x >= 1.0 || x == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::record::{MeasurementStatus, Role};
    use perflab_core::{Better, Metric, TelemetryRow, Unit, WorkloadOutput};

    /// One telemetry repetition: `matched` raises, `expected` per round trip declared,
    /// `trips` exchanges (none: the workload counts no round trips).
    fn rep(matched: f64, expected: Option<f64>, trips: Option<f64>) -> MeasurementRecord {
        let row = |stat: &str, v: f64| {
            TelemetryRow::new(
                "trace",
                format!("netrx.raise:{stat}"),
                "(a)",
                None,
                v,
                Unit::Count,
            )
        };
        let mut telemetry = vec![row("count", matched)];
        telemetry.extend(expected.map(|e| row(PER_ROUND_TRIP_STAT, e)));
        MeasurementRecord {
            seq: 0,
            point: 0,
            params: Default::default(),
            variant: "v".into(),
            rep: 0,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: WorkloadOutput {
                metrics: trips
                    .map(|t| Metric::new("exchanges", t, Unit::Count, Better::Neither))
                    .into_iter()
                    .collect(),
                ..Default::default()
            },
            telemetry,
            role: Role::Telemetry,
            monitors: vec!["trace".into()],
        }
    }

    fn judge(reps: &[MeasurementRecord]) -> Option<Foreign> {
        let recs: Vec<&MeasurementRecord> = reps.iter().collect();
        foreign(&recs, "netrx.raise")
    }

    #[test]
    fn ninety_five_foreign_events_per_round_trip_refuse_the_figure() {
        let f = judge(&[rep(96_000.0, Some(1.0), Some(1_000.0))]).unwrap();
        assert!(f.contaminated(), "{f:?}");
        assert_eq!(
            f.refusal().as_deref(),
            Some("contaminated: 95 foreign events per round trip (> 0.50)")
        );
    }

    #[test]
    fn about_one_per_round_trip_is_the_studys_own() {
        let f = judge(&[
            rep(1_040.0, Some(1.0), Some(1_000.0)),
            rep(1_010.0, Some(1.0), Some(1_000.0)),
            rep(990.0, Some(1.0), Some(1_000.0)),
        ])
        .unwrap();
        assert!(!f.contaminated(), "{f:?}");
        assert_eq!(f.refusal(), None);
        assert_eq!(f.describe(), "0.01 foreign/round trip");
    }

    #[test]
    fn the_limit_is_half_the_expected_count_beyond_it() {
        // Two expected (both ends of an exchange receive): 2.9 per round trip is 0.9
        // foreign, within 1; 3.2 is 1.2, beyond.
        assert!(!judge(&[rep(2_900.0, Some(2.0), Some(1_000.0))])
            .unwrap()
            .contaminated());
        assert!(judge(&[rep(3_200.0, Some(2.0), Some(1_000.0))])
            .unwrap()
            .contaminated());
    }

    /// idle-ipi quick: 206 round trips counted in a 50 ms window of a 0.31 s measurement
    /// whose warm-up (0.2 s) was traced too; the waker's IPIs matched 1,862. Against the
    /// window's count that is 9 per round trip; against the whole measurement's, 1.5 of
    /// the 2 a round trip makes.
    #[test]
    fn the_warm_up_is_traced_too() {
        let mut m = rep(1_862.0, Some(2.0), None);
        m.output.metrics = vec![
            Metric::new("round_trips", 206.0, Unit::Count, Better::Neither),
            Metric::new(
                "round_trips_per_s",
                206.0 / 0.05,
                Unit::PerSecond,
                Better::Higher,
            ),
        ];
        m.elapsed_s = 0.3086;
        let f = judge(&[m]).unwrap();
        assert!(!f.contaminated(), "{f:?}");
        match f {
            Foreign::Counted {
                matched_per_trip, ..
            } => assert!(
                (matched_per_trip - 1.4645).abs() < 1e-3,
                "{matched_per_trip}"
            ),
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn no_round_trips_is_said_not_guessed() {
        let f = judge(&[rep(96_000.0, Some(1.0), None)]).unwrap();
        assert_eq!(f, Foreign::NoRoundTrips);
        assert!(!f.contaminated());
        assert_eq!(f.describe(), "foreign not counted: no round trips");
    }

    #[test]
    fn a_span_not_keyed_by_cpu_is_not_judged() {
        assert_eq!(judge(&[rep(96_000.0, None, Some(1_000.0))]), None);
    }
}
