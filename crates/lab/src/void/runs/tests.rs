//! Two runs of one variant whose `cpuidle` setting was changed between them: void where
//! neither entered an idle state (the fixture trees' counters never move), judged from
//! the same telemetry as within one run; not judged where the runs set the same.

use perflab_core::{ParamValue, Params, RunSpec, TelemetryRow, Unit, WorkloadOutput};
use perflab_store::{MeasurementRecord, MeasurementStatus};

use super::judge_runs;

fn spec(cpuidle: &str) -> RunSpec {
    serde_json::from_value(serde_json::json!({
        "name": "s", "workload": "ctxsw",
        "variants": [{ "name": "v", "knobs": { "cpuidle": cpuidle } }],
        "points": [{ "cpu_b": "1" }],
    }))
    .unwrap()
}

/// A measurement of `v` at cpu_b=1 (point `point` of its run) with the cpuidle rows of
/// CPU 1: haltpoll idle disabled or not, entered `entries` times.
fn record(point: u32, rep: u32, disabled: bool, entries: f64) -> MeasurementRecord {
    let mut params = Params::default();
    params.0.insert("cpu_b".into(), ParamValue::Int(1));
    let row = |k: &str, v: f64| TelemetryRow::new("cpuidle", k, "", Some(1), v, Unit::Count);
    MeasurementRecord {
        seq: rep,
        point,
        params,
        variant: "v".into(),
        rep,
        status: MeasurementStatus::Ok,
        started_at: 0.0,
        elapsed_s: 1.0,
        output: WorkloadOutput::default(),
        telemetry: vec![
            row("haltpoll idle:usage", entries),
            row("haltpoll idle:disabled", f64::from(u8::from(disabled))),
        ],
        role: Default::default(),
        monitors: Vec::new(),
    }
}

fn side(point: u32, disabled: bool, entries: f64) -> Vec<MeasurementRecord> {
    (0..3)
        .map(|rep| record(point, rep, disabled, entries))
        .collect()
}

#[test]
fn a_setting_changed_between_runs_that_moved_nothing_is_void() {
    let (a, b) = (spec("poll-only"), spec("all"));
    // Run B's point 0 is run A's point 2: rows match by parameters, not by index.
    let (ms_a, ms_b) = (side(2, true, 0.0), side(0, false, 0.0));
    let void = judge_runs(("run 1", &a, &ms_a), ("run 2", &b, &ms_b));
    assert_eq!(void.len(), 1, "{void:?}");
    assert_eq!((void[0].0, void[0].1.as_str()), (2, "v"));
    assert!(
        void[0].2.starts_with(
            "no idle entries in either variant: haltpoll idle was entered a median of 0 \
             times per measurement on the measured CPUs in v in run 2, where it is enabled, \
             and never in v in run 1"
        ),
        "{}",
        void[0].2
    );
}

#[test]
fn a_setting_changed_between_runs_that_moved_is_not_void() {
    let (a, b) = (spec("poll-only"), spec("all"));
    let (ms_a, ms_b) = (side(0, true, 0.0), side(0, false, 250.0));
    assert_eq!(judge_runs(("run 1", &a, &ms_a), ("run 2", &b, &ms_b)), []);
}

#[test]
fn runs_whose_variants_set_the_same_are_not_judged() {
    // Two kernels compared: no setting says what should have moved, so nothing is void
    // even where no idle state was entered.
    let a = spec("all");
    let (ms_a, ms_b) = (side(0, false, 0.0), side(0, false, 0.0));
    assert_eq!(judge_runs(("run 1", &a, &ms_a), ("run 2", &a, &ms_b)), []);
    // A row of one run only has nothing to compare.
    let b = spec("poll-only");
    assert_eq!(judge_runs(("run 1", &b, &ms_a), ("run 2", &a, &[])), []);
}
