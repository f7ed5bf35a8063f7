//! Reports over records folded as the store streams them (`perflab_report::slim`: each
//! cell's histograms summed into its first repetition) say exactly what reports over the
//! whole records say, in every format: the fixtures of the other report tests, and random
//! runs with failures, telemetry repetitions, histograms without buckets, with other
//! bounds, and damaged ones.

use crate::common;

use common::more::{ctxsw_run, latency_run, threads_run};
use hdrhistogram::Histogram;
use perflab_core::record::{MeasurementRecord, MeasurementStatus, Role, RunInfo};
use perflab_core::{HistogramData, Unit};
use perflab_report::full::{build_report, ReportOptions, RunData};
use perflab_report::slim::fold;
use perflab_report::{latency_percentiles, Format};
use proptest::prelude::*;

/// Every rendering of the report of `runs`, whole and folded, side by side.
fn same_report(runs: Vec<(RunInfo, Vec<MeasurementRecord>)>) {
    let whole: Vec<RunData> = runs
        .iter()
        .map(|(info, ms)| RunData {
            info: info.clone(),
            ms: ms.clone(),
        })
        .collect();
    let folded: Vec<RunData> = runs
        .into_iter()
        .map(|(info, ms)| RunData { info, ms: fold(ms) })
        .collect();
    let opts = ReportOptions::default();
    let (a, b) = (
        build_report(&whole, &opts).unwrap(),
        build_report(&folded, &opts).unwrap(),
    );
    assert_eq!(a.json(), b.json());
    for f in [Format::Text, Format::Markdown, Format::Mail, Format::Html] {
        assert_eq!(a.render(f), b.render(f), "{f:?}");
    }
}

#[test]
fn folded_fixtures_report_what_whole_ones_report() {
    same_report(vec![ctxsw_run(5)]);
    same_report(vec![latency_run(21), latency_run(22)]);
    same_report(vec![threads_run(3)]);
    same_report(vec![ctxsw_run(5), ctxsw_run(6)]);
    same_report(vec![(common::run_info(1), common::records(1.0, None))]);
}

#[test]
fn folding_keeps_one_sum_per_cell_and_empty_markers() {
    let (_, ms) = ctxsw_run(5);
    let folded = fold(ms.clone());
    // Every record stays, with its summaries; only the buckets moved.
    assert_eq!(folded.len(), ms.len());
    for (a, b) in ms.iter().zip(&folded) {
        let (ha, hb) = (&a.output.histograms[0], &b.output.histograms[0]);
        assert_eq!((ha.count, ha.p50, ha.max), (hb.count, hb.p50, hb.max));
    }
    let small = folded
        .iter()
        .filter(|m| m.output.histograms[0].encoded.len() <= 40)
        .count();
    // 2 points × 2 variants: four carriers, the other repetitions markers.
    assert_eq!(small, ms.len() - 4);
}

/// What one random repetition's histogram is.
#[derive(Clone, Debug)]
enum Hist {
    Values(Vec<u64>),
    /// A record from elsewhere: summaries without buckets.
    NoBuckets(Vec<u64>),
    /// Bounds other than ctxsw's.
    Narrow(Vec<u64>),
    Damaged,
}

fn hist() -> impl Strategy<Value = Hist> {
    let values = || prop::collection::vec(1_000u64..900_000, 1..40);
    prop_oneof![
        8 => values().prop_map(Hist::Values),
        1 => values().prop_map(Hist::NoBuckets),
        1 => values().prop_map(Hist::Narrow),
        1 => Just(Hist::Damaged),
    ]
}

fn data(h: &Hist) -> HistogramData {
    let record = |hi: u64, digits: u8, vs: &[u64]| {
        let mut x = Histogram::<u64>::new_with_bounds(1, hi, digits).unwrap();
        for &v in vs {
            x.record(v).unwrap();
        }
        HistogramData::from_hdr("rtt", Unit::Nanoseconds, &x)
    };
    match h {
        Hist::Values(vs) => record(60_000_000_000, 3, vs),
        Hist::NoBuckets(vs) => {
            let mut d = record(60_000_000_000, 3, vs);
            d.encoded.clear();
            d
        }
        Hist::Narrow(vs) => record(1_000_000, 2, vs),
        Hist::Damaged => {
            let mut d = record(60_000_000_000, 3, &[5_000]);
            d.encoded.truncate(d.encoded.len() - 1);
            d
        }
    }
}

/// One random repetition: its status (0 ok, 1 failed, 2 ineffective), whether it is a
/// telemetry repetition, and its histogram.
type Rep = (u8, bool, Hist);

fn rep() -> impl Strategy<Value = Rep> {
    (
        prop_oneof![8 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        prop::bool::weighted(0.1),
        hist(),
    )
}

/// A ctxsw run whose records are those of the fixture, in its interleaved order, with
/// `reps`' statuses, roles and histograms.
fn random_run(reps: &[Rep]) -> (RunInfo, Vec<MeasurementRecord>) {
    let (info, mut ms) = ctxsw_run(9);
    for (m, (status, telemetry, h)) in ms.iter_mut().zip(reps.iter().cycle()) {
        m.status = match status {
            0 => MeasurementStatus::Ok,
            1 => MeasurementStatus::Failed("died".into()),
            _ => MeasurementStatus::Ineffective("knob did not hold".into()),
        };
        if *telemetry {
            m.role = Role::Telemetry;
        }
        m.output.histograms = vec![data(h)];
    }
    (info, ms)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn folded_random_runs_report_what_whole_ones_report(
        reps in prop::collection::vec(rep(), 12)
    ) {
        let (info, ms) = random_run(&reps);
        let folded = fold(ms.clone());
        prop_assert_eq!(
            latency_percentiles(&[(&info, &ms)]),
            latency_percentiles(&[(&info, &folded)])
        );
        same_report(vec![(info, ms)]);
    }
}
