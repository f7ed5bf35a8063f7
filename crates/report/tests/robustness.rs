//! Reports must never panic, whatever the stored records hold: any mix of failures,
//! zeros, negative values, missing telemetry and single repetitions.

use crate::common::catalog;

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo, RunStatus};
use perflab_core::{Better, Metric, ParamValue, Params, TelemetryRow, Unit, WorkloadOutput};
use perflab_report::{
    compare_runs, compare_variants, distribution, measured_variants, render_pair, render_row,
    render_single_pair, summarize_run,
};
use perflab_report::{Format, Section};
use perflab_stats::{Buckets, StatsConfig};
use proptest::prelude::*;

fn run(id: i64) -> RunInfo {
    catalog::install();
    RunInfo {
        id,
        created_at: 0.0,
        study: "s".into(),
        workload: "ctxsw".into(),
        label: None,
        status: RunStatus::Interrupted,
        spec: serde_json::from_value(serde_json::json!({
            "primary_metric": "m",
            "param_roles": crate::common::catalog::roles_json("ctxsw"),
        }))
        .expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!(null)),
        unavailable: vec![],
        planned: 0,
        done: 0,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

/// (point, variant 0/1, value, failed, with telemetry)
type Raw = (u32, bool, f64, bool, bool);

fn records(raw: &[Raw]) -> Vec<MeasurementRecord> {
    raw.iter()
        .enumerate()
        .map(|(seq, &(point, other, value, failed, tele))| {
            let mut params = Params::default();
            params.0.insert("cpu_a".into(), ParamValue::Int(1));
            params
                .0
                .insert("cpu_b".into(), ParamValue::Int(i64::from(point)));
            let telemetry = if tele {
                vec![
                    TelemetryRow::new("interrupts", "LOC", "", Some(point), value, Unit::Count),
                    TelemetryRow::new("cpuidle", "snooze:usage", "", Some(1), value, Unit::Count),
                    TelemetryRow::new("cpuidle", "odd-key", "", Some(1), value, Unit::Count),
                ]
            } else {
                vec![]
            };
            MeasurementRecord {
                seq: seq as u32,
                point,
                params,
                variant: if other { "b".into() } else { "a".into() },
                rep: 0,
                status: if failed {
                    MeasurementStatus::Failed("x".into())
                } else {
                    MeasurementStatus::Ok
                },
                started_at: 0.0,
                elapsed_s: 0.0,
                output: WorkloadOutput {
                    metrics: vec![Metric::new("m", value, Unit::Count, Better::Lower)],
                    ..Default::default()
                },
                telemetry,
                role: Default::default(),
                monitors: Vec::new(),
            }
        })
        .collect()
}

fn raw() -> impl Strategy<Value = Vec<Raw>> {
    let value = prop_oneof![Just(0.0), -1e9f64..1e9, Just(f64::NAN), Just(1.0)];
    prop::collection::vec(
        (0u32..4, any::<bool>(), value, any::<bool>(), any::<bool>()),
        0..30,
    )
}

proptest! {
    #[test]
    fn reports_never_panic(a in raw(), b in raw()) {
        let cfg = StatsConfig { resamples: 20, ..Default::default() };
        let (ra, rb) = (run(1), run(2));
        let (ma, mb) = (records(&a), records(&b));
        if let Ok(t) = compare_variants(&ra, &ma, "a", "b", None, &cfg) {
            let _ = t.render(Format::Text);
            let _ = t.to_json().unwrap();
            let d = distribution(&t, &Buckets::default());
            let _ = d.render(Format::Text);
            for row in &t.rows {
                let _ = render_row(&ra, &ma, &t, row).unwrap();
            }
            let _ = render_pair(&ra, &ma, &t, 1, 0);
        }
        let summary = summarize_run(&ra, &ma, None, &cfg).unwrap();
        let _ = summary.render(Format::Text);
        let _ = summary.to_json().unwrap();
        let counted: usize = summary.rows.iter().map(|r| r.n_ok + (r.failed + r.missing) as usize).sum();
        prop_assert_eq!(counted, ma.len());
        for v in measured_variants(&ma) {
            for p in 0..4 {
                let _ = render_single_pair(&ra, &ma, &v, 1, p);
            }
        }
        if let Ok(t) = compare_runs(&ra, &ma, &rb, &mb, Some("m"), &cfg) {
            let _ = t.render(Format::Text);
            let rows_and_unmatched = t.rows.len() + t.unmatched.len();
            prop_assert!(rows_and_unmatched > 0);
        }
    }
}
