//! One measurement as a run takes it: monitors started around the workload (each
//! unavailable one said once and dropped), knob probes checked, the record assembled.

use std::time::Instant;

use perflab_core::{
    MeasureCtx, Monitor, MonitorError, TelemetryRow, WorkloadError, WorkloadOutput,
};
use perflab_knobs::{verify_effects, AppliedVariant};
use perflab_store::{MeasurementRecord, MeasurementStatus, PlannedMeasurement, Role};

use crate::run_options::{now_epoch, Progress, RunOptions};

pub(crate) struct Slot {
    monitor: Box<dyn Monitor>,
    alive: bool,
    /// Notes already reported, so each is said once.
    said: Vec<String>,
}

pub(crate) fn build_monitors(names: &[String]) -> Vec<Slot> {
    names
        .iter()
        .filter_map(|n| perflab_monitors::by_name(n))
        .map(|monitor| Slot {
            monitor,
            alive: true,
            said: Vec::new(),
        })
        .collect()
}

/// Monitors kept across measurements taken outside a stored run.
pub struct MonitorSet {
    slots: Vec<Slot>,
}

impl MonitorSet {
    /// Fresh monitors by name (unknown names are left out, as a run's spec never has them).
    pub fn new(names: &[String]) -> Self {
        Self {
            slots: build_monitors(names),
        }
    }
}

/// One measurement exactly as a run takes it (monitors by role, knob probes of `variant`),
/// for checks that compare measurements without storing them, such as the cost of each
/// monitor. `None` when it was interrupted.
pub fn measure_once(
    pm: &PlannedMeasurement,
    workload: &dyn perflab_core::Workload,
    monitors: &mut MonitorSet,
    opts: &RunOptions,
    progress: &mut dyn Progress,
) -> Option<MeasurementRecord> {
    // Such checks judge interleaved pairs against their own tolerance: the share other
    // work took is recorded in every measurement, but marks none of them (100 %).
    let above = 100.0;
    measure(
        pm,
        workload,
        &mut monitors.slots,
        opts,
        (None, above),
        progress,
    )
}

/// The variant's facts, and the journal always: a monitor that creates something (an
/// ftrace instance) journals it there, with or without a variant.
fn facts(
    variant: Option<&AppliedVariant>,
    opts: &RunOptions,
) -> std::collections::BTreeMap<String, String> {
    let mut facts = variant.map(|a| a.facts()).unwrap_or_default();
    facts
        .entry(perflab_knobs::JOURNAL_FACT.to_string())
        .or_insert_with(|| opts.journal.to_string_lossy().into_owned());
    facts
}

/// One measurement with its monitors, under `variant`, disturbed when other work took more
/// than `above` % of its CPUs. `None` when it was interrupted (not recorded).
pub(crate) fn measure(
    pm: &PlannedMeasurement,
    workload: &dyn perflab_core::Workload,
    monitors: &mut [Slot],
    opts: &RunOptions,
    (variant, above): (Option<&AppliedVariant>, f64),
    progress: &mut dyn Progress,
) -> Option<MeasurementRecord> {
    // `expand` asked for every point's CPUs before anything ran; should the workload
    // still fail to say, the measurement fails with its error (below).
    let cpus = workload.cpus(&pm.params);
    let ctx = MeasureCtx {
        sys: opts.sys.clone(),
        stop: opts.stop.clone(),
        threads: Default::default(),
        cpus: cpus.clone().unwrap_or_default(),
        facts: facts(variant, opts),
        workload: workload.info().name,
    };
    let started = start_monitors(monitors, pm.role, &ctx, progress);
    let ran: Vec<String> = monitors
        .iter()
        .zip(&started)
        .filter(|(_, s)| **s)
        .map(|(slot, _)| slot.monitor.name().to_string())
        .collect();
    // What the kernel shows of each knob's effect, just before and just after the
    // workload: a setting that did not hold makes the measurement ineffective.
    let probes = variant.map(|a| a.probes(&opts.sys)).unwrap_or_default();
    let started_at = now_epoch();
    let t0 = Instant::now();
    let result = match cpus {
        Ok(_) => workload.run(&pm.params, &ctx),
        Err(e) => Err(WorkloadError::Param(e)),
    };
    let elapsed_s = t0.elapsed().as_secs_f64();
    let ineffective = match &result {
        Ok(out) => verify_effects(&probes, &opts.sys, out),
        Err(_) => None,
    };
    let (mut telemetry, new_notes) = finish_monitors(monitors, &started, &ctx, progress);
    let (status, output) = match result {
        Ok(out) => {
            let out = complete_output(out, &ctx, new_notes, &mut telemetry);
            // The progress line of the measurement says it, with the reason. A knob that
            // did not hold says more than a neighbour's load, so it wins.
            let disturbed = perflab_monitors::disturbance::judge(&ctx.cpus, &telemetry, above);
            match (ineffective, disturbed) {
                (Some(why), _) => (MeasurementStatus::Ineffective(why), out),
                (None, Some(why)) => (MeasurementStatus::Disturbed(why), out),
                (None, None) => (MeasurementStatus::Ok, out),
            }
        }
        Err(WorkloadError::Interrupted) => return None,
        Err(e) => (
            MeasurementStatus::Failed(e.to_string()),
            WorkloadOutput::default(),
        ),
    };
    Some(MeasurementRecord {
        seq: pm.seq,
        point: pm.point,
        params: pm.params.clone(),
        variant: pm.variant.clone(),
        rep: pm.rep,
        status,
        started_at,
        elapsed_s,
        output,
        telemetry,
        role: pm.role,
        monitors: ran,
    })
}

/// Starts every live monitor that may run around a measurement of `role`; one that is
/// unavailable is said once and left out for the rest of the run. Returns which started.
fn start_monitors(
    monitors: &mut [Slot],
    role: Role,
    ctx: &MeasureCtx,
    progress: &mut dyn Progress,
) -> Vec<bool> {
    let mut started = vec![false; monitors.len()];
    for (slot, s) in monitors.iter_mut().zip(started.iter_mut()) {
        // A monitor that disturbs the workload never runs around a headline figure.
        if !slot.alive || (role == Role::Headline && slot.monitor.disturbs()) {
            continue;
        }
        match slot.monitor.start(ctx) {
            Ok(()) => *s = true,
            Err(MonitorError::Unavailable(u)) => {
                slot.alive = false;
                let hint = u.hint.map(|h| format!(" ({h})")).unwrap_or_default();
                progress.note(&format!(
                    "monitor {}: {}{hint}; skipped for this run",
                    slot.monitor.name(),
                    u.reason
                ));
            }
            Err(MonitorError::Failed(e)) => {
                progress.note(&format!("monitor {}: {e}", slot.monitor.name()))
            }
        }
    }
    started
}

/// The telemetry of the monitors that started, and their notes not said before.
fn finish_monitors(
    monitors: &mut [Slot],
    started: &[bool],
    ctx: &MeasureCtx,
    progress: &mut dyn Progress,
) -> (Vec<TelemetryRow>, Vec<String>) {
    let mut telemetry = Vec::new();
    let mut new_notes = Vec::new();
    for (slot, &s) in monitors.iter_mut().zip(started) {
        if !s {
            continue;
        }
        match slot.monitor.finish(ctx) {
            Ok(rows) => telemetry.extend(rows),
            Err(e) => progress.note(&format!("monitor {}: {e}", slot.monitor.name())),
        }
        for note in slot.monitor.notes() {
            if !slot.said.contains(&note) {
                progress.note(&note);
                new_notes.push(note.clone());
                slot.said.push(note);
            }
        }
    }
    (telemetry, new_notes)
}

/// A successful output with the threads the context collected (when the workload gave
/// none), the monitors' new notes, and per-byte rows derived from the telemetry.
fn complete_output(
    mut out: WorkloadOutput,
    ctx: &MeasureCtx,
    new_notes: Vec<String>,
    telemetry: &mut Vec<TelemetryRow>,
) -> WorkloadOutput {
    if out.threads.is_empty() {
        out.threads = ctx.threads.take();
    }
    out.notes.extend(new_notes);
    // Misses per byte need the bytes the workload says it moved; the counts span
    // the whole measurement, set-up included (the monitor cannot see inside it).
    if let Some(bytes) = out.metric("bytes") {
        let per_byte = perflab_monitors::counters::per_byte(telemetry, bytes.value);
        telemetry.extend(per_byte);
    }
    out
}
