//! Fixtures of the three void comparisons of issue 32, from the telemetry their runs
//! recorded (idle-ipi on a haltpoll guest; irq-fill with no device interrupt on the fill
//! CPU; memxfer 2m with no huge page used), and their counterparts that did move.

use perflab_core::{
    Better, Metric, ParamValue, Params, RunSpec, TelemetryRow, Unit, WorkloadOutput,
};
use perflab_store::{MeasurementRecord, MeasurementStatus};

use super::judge;

fn spec(workload: &str, variants: serde_json::Value, baseline: &str) -> RunSpec {
    serde_json::from_value(serde_json::json!({
        "name": "s", "workload": workload, "variants": variants,
        "compare": { "baseline": baseline },
        "points": [{ "cpu_b": "0" }, { "cpu_b": "1" }],
    }))
    .unwrap()
}

fn record(point: u32, variant: &str, rep: u32, telemetry: Vec<TelemetryRow>) -> MeasurementRecord {
    let mut params = Params::default();
    params
        .0
        .insert("cpu_b".into(), ParamValue::Int(point as i64));
    MeasurementRecord {
        seq: rep * 2 + u32::from(variant != "poll-only"),
        point,
        params,
        variant: variant.into(),
        rep,
        status: MeasurementStatus::Ok,
        started_at: 0.0,
        elapsed_s: 1.0,
        output: WorkloadOutput::default(),
        telemetry,
        role: Default::default(),
        monitors: Vec::new(),
    }
}

/// cpuidle rows of one measured CPU: POLL and haltpoll, haltpoll disabled or not.
fn idle(cpu: u32, haltpoll_disabled: bool, haltpoll_entries: f64) -> Vec<TelemetryRow> {
    let row = |k: &str, v: f64| TelemetryRow::new("cpuidle", k, "", Some(cpu), v, Unit::Count);
    vec![
        row("POLL:usage", 0.0),
        row("POLL:disabled", 0.0),
        row("haltpoll idle:usage", haltpoll_entries),
        row(
            "haltpoll idle:disabled",
            f64::from(u8::from(haltpoll_disabled)),
        ),
    ]
}

fn idle_ipi() -> RunSpec {
    spec(
        "ctxsw",
        serde_json::json!([
            { "name": "poll-only", "knobs": { "cpuidle": "poll-only" } },
            { "name": "all", "knobs": { "cpuidle": "all" } },
        ]),
        "poll-only",
    )
}

#[test]
fn idle_ipi_whose_driver_ignores_disable_is_void() {
    // As recorded here (haltpoll guest): poll-only entered haltpoll idle in some
    // measurements (ineffective), `all` at about the same rate.
    let entries = [(1.0, 2.0), (0.0, 0.0), (4.0, 8.0), (0.0, 24.0), (0.0, 0.0)];
    let mut ms = Vec::new();
    for (rep, (off, on)) in entries.into_iter().enumerate() {
        let mut m = record(1, "poll-only", rep as u32, idle(1, true, off));
        if off > 0.0 {
            m.status = MeasurementStatus::Ineffective("haltpoll entered".into());
        }
        ms.push(m);
        ms.push(record(1, "all", rep as u32, idle(1, false, on)));
    }
    let void = judge(&idle_ipi(), &ms);
    assert_eq!(void.len(), 1, "{void:?}");
    assert_eq!((void[0].point, void[0].variant.as_str()), (1, "all"));
    assert_eq!(void[0].point_label, "cpu_b=1");
    assert!(
        void[0].reason
            == "poll-only entered haltpoll idle, where it is disabled: the idle driver ignores \
                `disable`, so poll-only ran with the idle states of all (2 of 5 measurements of \
                poll-only, all points, were ineffective; all here: median 2 entries per \
                measurement on the measured CPUs)",
        "{}",
        void[0].line()
    );
}

#[test]
fn a_driver_that_ignored_disable_at_one_point_ignored_it_at_every_point() {
    // Point 0: poll-only entered haltpoll; point 1: it did not happen to, while `all`
    // entered it in most measurements. The knob is machine-wide: both points are void.
    let mut ms = Vec::new();
    for rep in 0..3 {
        let mut m = record(0, "poll-only", rep, idle(0, true, 3.0));
        m.status = MeasurementStatus::Ineffective("haltpoll entered".into());
        ms.push(m);
        ms.push(record(0, "all", rep, idle(0, false, 3.0)));
        ms.push(record(1, "poll-only", rep, idle(1, true, 0.0)));
        ms.push(record(1, "all", rep, idle(1, false, 7.0)));
    }
    let void = judge(&idle_ipi(), &ms);
    assert_eq!(void.len(), 2, "{void:?}");
    assert_eq!(
        void[1].reason,
        "poll-only entered haltpoll idle, where it is disabled: the idle driver ignores \
         `disable`, so poll-only ran with the idle states of all (3 of 6 measurements of \
         poll-only, all points, were ineffective)"
    );
}

/// The count a void reason gives is the measurements recorded ineffective, the count the
/// report's Ineffective list gives: the knob's check reads every CPU, the telemetry here
/// only the measured ones, so counting the entries it shows said "entered in 1 of 3
/// measurements" of measurements all three of which the list counts.
#[test]
fn the_reason_counts_the_measurements_recorded_ineffective() {
    let mut ms = Vec::new();
    for rep in 0..3 {
        // haltpoll was entered on the measured CPU in rep 0 only, on another in all three.
        let mut m = record(
            1,
            "poll-only",
            rep,
            idle(1, true, f64::from(u8::from(rep == 0))),
        );
        m.status = MeasurementStatus::Ineffective("haltpoll entered on cpu0".into());
        ms.push(m);
        ms.push(record(1, "all", rep, idle(1, false, 5.0)));
    }
    let void = judge(&idle_ipi(), &ms);
    assert_eq!(void.len(), 1, "{void:?}");
    assert!(
        void[0]
            .reason
            .contains("(3 of 3 measurements of poll-only, all points, were ineffective;"),
        "{}",
        void[0].reason
    );
}

#[test]
fn idle_ipi_with_no_idle_entries_in_either_variant_is_void() {
    let ms: Vec<_> = (0..5)
        .flat_map(|r| {
            [
                record(0, "poll-only", r, idle(0, true, 0.0)),
                record(0, "all", r, idle(0, false, if r == 3 { 2.0 } else { 0.0 })),
            ]
        })
        .collect();
    let void = judge(&idle_ipi(), &ms);
    assert_eq!(void.len(), 1);
    assert!(void[0]
        .reason
        .starts_with("no idle entries in either variant"));
}

/// Issue 34 item 3: the states no side entered are one sentence, not one each (C1, C1E
/// and C6 of the intel_idle fixture made 20 lines of idle-ipi's mail).
#[test]
fn states_entered_in_neither_variant_are_named_in_one_sentence() {
    let states = |cpu: u32, disabled: bool| -> Vec<TelemetryRow> {
        let row =
            |k: String, v: f64| TelemetryRow::new("cpuidle", &k, "", Some(cpu), v, Unit::Count);
        ["C1", "C1E", "C6"]
            .iter()
            .flat_map(|s| {
                [
                    row(format!("{s}:usage"), 0.0),
                    row(format!("{s}:disabled"), f64::from(u8::from(disabled))),
                ]
            })
            .collect()
    };
    let ms: Vec<_> = (0..3)
        .flat_map(|r| {
            [
                record(0, "poll-only", r, states(0, true)),
                record(0, "all", r, states(0, false)),
            ]
        })
        .collect();
    let void = judge(&idle_ipi(), &ms);
    assert_eq!(void.len(), 1, "{void:?}");
    assert_eq!(
        void[0].reason,
        "no idle entries in either variant: all entered C1, C1E and C6 (enabled there) a \
         median of 0 times per measurement on the measured CPUs, poll-only never, so \
         disabling them changed nothing"
    );
}

#[test]
fn idle_ipi_whose_knob_held_and_mattered_is_not_void() {
    // A driver that honours `disable`: poll-only never enters, `all` does, every time.
    let ms: Vec<_> = (0..5)
        .flat_map(|r| {
            [
                record(0, "poll-only", r, idle(0, true, 0.0)),
                record(0, "all", r, idle(0, false, 5000.0 + f64::from(r))),
            ]
        })
        .collect();
    assert_eq!(judge(&idle_ipi(), &ms), []);
    // Without cpuidle telemetry nothing can be judged: no void.
    let bare: Vec<_> = ms
        .into_iter()
        .map(|mut m| {
            m.telemetry.clear();
            m
        })
        .collect();
    assert_eq!(judge(&idle_ipi(), &bare), []);
}

fn irq_fill() -> RunSpec {
    spec(
        "xfer",
        serde_json::json!([
            { "name": "base" },
            { "name": "irqs-away", "knobs": { "irqaffinity": "devices:1" } },
        ]),
        "base",
    )
}

/// interrupts rows on the fill CPU 0: the local timer and one virtio queue.
fn irqs(virtio: f64) -> Vec<TelemetryRow> {
    let row =
        |k: &str, l: &str, v: f64| TelemetryRow::new("interrupts", k, l, Some(0), v, Unit::Count);
    vec![
        row("LOC", "Local timer interrupts", 6000.0),
        row("24", "PCI-MSI 49153-edge virtio0-input.0", virtio),
        TelemetryRow::new("interrupts", "LOC", "", None, 12000.0, Unit::Count),
    ]
}

#[test]
fn irq_fill_with_no_device_interrupt_on_the_fill_cpu_is_void() {
    let ms: Vec<_> = (0..4)
        .flat_map(|r| {
            [
                record(0, "base", r, irqs(0.0)),
                record(0, "irqs-away", r, irqs(0.0)),
            ]
        })
        .collect();
    let void = judge(&irq_fill(), &ms);
    assert_eq!(void.len(), 1, "{void:?}");
    assert!(
        void[0]
            .reason
            .starts_with("no interrupt moved: no device interrupt"),
        "{}",
        void[0].reason
    );
    // The timer's own interrupts (LOC) are not what the knob moves.
    assert!(void[0]
        .line()
        .starts_with("void: irqs-away vs base at cpu_b=0: no interrupt moved"));
}

#[test]
fn irq_fill_whose_interrupts_moved_is_not_void() {
    let ms: Vec<_> = (0..4)
        .flat_map(|r| {
            [
                record(0, "base", r, irqs(300.0)),
                record(0, "irqs-away", r, irqs(0.0)),
            ]
        })
        .collect();
    assert_eq!(judge(&irq_fill(), &ms), []);
}

fn memxfer() -> RunSpec {
    spec(
        "xfer",
        serde_json::json!([
            { "name": "4k", "params": { "backing": "4k" } },
            { "name": "2m", "params": { "backing": "2m" }, "knobs": { "hugepages": "2M:auto" } },
        ]),
        "4k",
    )
}

fn with_huge(mut m: MeasurementRecord, fraction: f64) -> MeasurementRecord {
    m.output.metrics.push(Metric {
        name: "huge_fraction".into(),
        value: fraction,
        unit: Unit::Ratio,
        better: Better::Neither,
    });
    m
}

#[test]
fn memxfer_2m_with_no_huge_page_used_is_void() {
    let ms: Vec<_> = (0..4)
        .flat_map(|r| {
            [
                with_huge(record(0, "4k", r, Vec::new()), 0.0),
                with_huge(record(0, "2m", r, Vec::new()), 0.0),
            ]
        })
        .collect();
    let void = judge(&memxfer(), &ms);
    assert_eq!(void.len(), 1, "{void:?}");
    assert!(void[0]
        .reason
        .starts_with("no huge page used in either variant"));
    // On huge pages, as meant: not void.
    let ms: Vec<_> = ms
        .into_iter()
        .map(|mut m| {
            let f = if m.variant == "2m" { 1.0 } else { 0.0 };
            m.output.metrics.clear();
            with_huge(m, f)
        })
        .collect();
    assert_eq!(judge(&memxfer(), &ms), []);
}
