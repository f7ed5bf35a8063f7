//! A variant table marks the rows whose comparison tested nothing (issue 32 item 4): with a
//! void judge installed (the binary installs perflab-lab's), such a row reads `void` with
//! its reason, stays out of the family decided together, has no interval and no advice on
//! repetitions, and is in no bucket of the regression distribution.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunInfo, RunStatus};
use perflab_core::{
    Better, Metric, ParamValue, Params, RunSpec, Unit, VoidComparison, WorkloadOutput,
};
use perflab_stats::{StatsConfig, Verdict};

/// Point 1 of the run whose spec is named `void-fixture` tested nothing; no other run has
/// void comparisons (the judge is process-wide: the first one installed stays).
fn judge(spec: &RunSpec, _ms: &[MeasurementRecord]) -> Vec<VoidComparison> {
    if spec.name != "void-fixture" {
        return Vec::new();
    }
    vec![VoidComparison {
        point: 1,
        point_label: "cpu_b=1".into(),
        baseline: "poll-only".into(),
        variant: "all".into(),
        reason: "no idle entries in either variant".into(),
    }]
}

fn record(seq: u32, point: u32, variant: &str, rep: u32, value: f64) -> MeasurementRecord {
    let mut params = Params::default();
    params
        .0
        .insert("cpu_b".into(), ParamValue::Int(i64::from(point)));
    MeasurementRecord {
        seq,
        point,
        params,
        variant: variant.into(),
        rep,
        status: MeasurementStatus::Ok,
        started_at: 0.0,
        elapsed_s: 1.0,
        output: WorkloadOutput {
            metrics: vec![Metric {
                name: "rate".into(),
                value,
                unit: Unit::Count,
                better: Better::Higher,
            }],
            ..Default::default()
        },
        telemetry: Vec::new(),
        role: Default::default(),
        monitors: Vec::new(),
    }
}

/// An idle-ipi run `id` of variants poll-only and all, its spec `spec` besides.
fn idle_run(id: i64, mut spec: serde_json::Value) -> RunInfo {
    spec["primary_metric"] = "rate".into();
    spec["variants"] = serde_json::json!([{"name": "poll-only"}, {"name": "all"}]);
    RunInfo {
        id,
        created_at: 0.0,
        study: "idle-ipi".into(),
        workload: "ctxsw".into(),
        label: None,
        status: RunStatus::Complete,
        spec: serde_json::from_value(spec).expect("a valid run spec"),
        fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
        unavailable: Vec::new(),
        planned: 20,
        done: 20,
        failed: 0,
        ineffective: 0,
        uid: String::new(),
    }
}

/// The run [`judge`] finds point 1 of void in.
fn void_fixture_run() -> RunInfo {
    idle_run(
        3,
        serde_json::json!({"name": "void-fixture", "compare": {"baseline": "poll-only"}}),
    )
}

#[test]
fn a_void_point_reads_void_with_its_reason_and_no_advice() {
    perflab_core::catalog::install_void_judge(judge);
    let run = void_fixture_run();
    // Both points: all about 30 % above poll-only, noisy enough to be undecided alone.
    let mut ms = Vec::new();
    for point in 0..2 {
        for rep in 0..5 {
            let noise = [1.0, 1.3, 0.8, 1.2, 0.9][rep as usize];
            let seq = point * 10 + rep * 2;
            ms.push(record(seq, point, "poll-only", rep, 100.0 * noise));
            ms.push(record(seq + 1, point, "all", rep, 130.0 / noise));
        }
    }
    let cfg = StatsConfig::default();
    let t = super::compare_variants(&run, &ms, "poll-only", "all", None, &cfg).unwrap();
    let row = |p: u32| t.rows.iter().find(|r| r.point_a == p).unwrap();
    let void = &row(1).cmp;
    assert_eq!(void.verdict, Verdict::Void);
    assert_eq!(
        void.decision.void.as_deref(),
        Some("no idle entries in either variant")
    );
    assert_eq!(
        (void.change_ci_pct, void.decision.reps_to_decide),
        (None, None)
    );
    assert_ne!(row(0).cmp.verdict, Verdict::Void);
    // The family is the one row that was a test.
    assert_eq!(t.p_adjustment.rows, 1);
    assert!(
        t.notes.iter().any(|n| n.starts_with("void (tested nothing")
            && n.contains("cpu_b=1: no idle entries in either variant")),
        "{:?}",
        t.notes
    );
    assert!(
        !t.notes
            .iter()
            .any(|n| n.contains("about") && n.contains("cpu_b=1 (")),
        "{:?}",
        t.notes
    );
    let d = crate::tables::distribution::distribution(&t, &perflab_stats::Buckets::default());
    assert!(
        d.unclassified.iter().any(|u| u.ends_with("(void)")),
        "{:?}",
        d.unclassified
    );
    assert_eq!(d.total, 1);
}

/// Of two runs named `run 4` and `run 5`, variant `all` at point 1 of run 4 tested nothing.
/// A void point none of whose baseline measurements held its knob: its row says the void
/// reason and counts the ineffective ones, without repeating the first one's reason (the
/// void reason names the cause; idle-ipi's mail said it three times).
#[test]
fn a_void_point_without_values_counts_its_ineffective_measurements_once() {
    perflab_core::catalog::install_void_judge(judge);
    let run = void_fixture_run();
    let mut ms = Vec::new();
    for point in 0..2 {
        for rep in 0..5 {
            let seq = point * 10 + rep * 2;
            let mut a = record(seq, point, "poll-only", rep, 100.0 + f64::from(rep));
            if point == 1 {
                a.status = MeasurementStatus::Ineffective("state1 was entered 90 times".into());
            }
            ms.push(a);
            ms.push(record(seq + 1, point, "all", rep, 130.0 - f64::from(rep)));
        }
    }
    let cfg = StatsConfig::default();
    let t = super::compare_variants(&run, &ms, "poll-only", "all", None, &cfg).unwrap();
    let u = t.unmatched.iter().find(|u| u.label.contains("cpu_b=1"));
    let reason = &u.expect("point 1 has no pair").reason;
    assert!(reason.starts_with("void (no idle entries"), "{reason}");
    assert!(reason.ends_with("(5 ineffective)"), "{reason}");
    assert!(!reason.contains("entered 90 times"), "{reason}");
}

/// The table's INEFFECTIVE note counts what the report's Ineffective list and a void
/// reason count ([`perflab_core::IneffectiveCount`]): every measurement that ran,
/// telemetry repetitions too. Counting headline repetitions only, it said 5 where the list
/// said "6 of 11 measurements" of the same run.
#[test]
fn the_ineffective_note_counts_what_the_ineffective_list_counts() {
    perflab_core::catalog::install_void_judge(judge);
    let run = void_fixture_run();
    let mut ms = Vec::new();
    for point in 0..2 {
        for rep in 0..5 {
            let seq = point * 12 + rep * 2;
            let mut a = record(seq, point, "poll-only", rep, 100.0 + f64::from(rep));
            if point == 1 {
                a.status = MeasurementStatus::Ineffective("state1 was entered 90 times".into());
            }
            ms.push(a);
            ms.push(record(seq + 1, point, "all", rep, 130.0 - f64::from(rep)));
        }
    }
    let mut telemetry = record(22, 1, "poll-only", 0, 100.0);
    telemetry.role = perflab_core::record::Role::Telemetry;
    telemetry.status = MeasurementStatus::Ineffective("state1 was entered 9 times".into());
    ms.push(telemetry);
    let cfg = StatsConfig::default();
    let t = super::compare_variants(&run, &ms, "poll-only", "all", None, &cfg).unwrap();
    let note = t.notes.iter().find(|n| n.starts_with("INEFFECTIVE: "));
    let note = note.unwrap_or_else(|| panic!("{:?}", t.notes));
    assert!(
        note.starts_with("INEFFECTIVE: 6 measurements") && note.contains("(poll-only: 6, all: 0)"),
        "{note}"
    );
    let roles = perflab_core::ParamRoles::default();
    let list = crate::fmt::compact::ineffective_summary(&roles, &ms);
    assert!(
        list[0].starts_with("poll-only: 6 of 11 measurements, at"),
        "{list:?}"
    );
}

fn runs_judge(
    a: perflab_core::catalog::RunSide<'_>,
    b: perflab_core::catalog::RunSide<'_>,
) -> Vec<perflab_core::catalog::RunsVoid> {
    if (a.0, b.0) != ("run 4", "run 5") {
        return Vec::new();
    }
    vec![(1, "all".into(), "no idle entries in either variant".into())]
}

/// Issue 32 item 4: `compare RUN_A RUN_B` judged no row void, though a variant's settings
/// changed between the runs moved nothing; a void row is its variant's at its point only.
#[test]
fn a_void_row_of_two_runs_reads_void_for_its_variant_only() {
    perflab_core::catalog::install_runs_void_judge(runs_judge);
    let run = |id: i64| idle_run(id, serde_json::json!({"name": "runs"}));
    let side = |scale: f64| {
        let mut ms = Vec::new();
        for point in 0..2 {
            for rep in 0..5 {
                let noise = [1.0, 1.3, 0.8, 1.2, 0.9][rep as usize];
                let seq = point * 10 + rep * 2;
                ms.push(record(seq, point, "poll-only", rep, 100.0 * noise * scale));
                ms.push(record(seq + 1, point, "all", rep, 100.0 / noise * scale));
            }
        }
        ms
    };
    let (a, b) = (run(4), run(5));
    let (ms_a, ms_b) = (side(1.0), side(1.3));
    let cfg = StatsConfig::default();
    let t = super::compare_runs(&a, &ms_a, &b, &ms_b, None, &cfg).unwrap();
    assert_eq!(t.rows.len(), 4);
    let verdicts: Vec<(u32, &str, Verdict)> = t
        .rows
        .iter()
        .map(|r| (r.point_a, r.variant.as_deref().unwrap(), r.cmp.verdict))
        .collect();
    let void: Vec<_> = verdicts.iter().filter(|v| v.2 == Verdict::Void).collect();
    assert_eq!(void, [&(1, "all", Verdict::Void)], "{verdicts:?}");
    assert_eq!(t.p_adjustment.rows, 3);
    assert!(
        t.notes.iter().any(
            |n| n.starts_with("void (tested nothing: what run 5's settings")
                && n.contains("cpu_b=1 [all]: no idle entries in either variant")
        ),
        "{:?}",
        t.notes
    );
}
