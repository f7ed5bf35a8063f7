//! The runner: executes a run's pending measurements in planned order, switching variant
//! knobs as needed, with monitors around every measurement, committing each result to the
//! store the moment it exists. Stopping (a signal sets the stop flag) keeps everything
//! measured; knobs are restored on every path out of here, panics included, because the
//! applied variant is a guard on this stack frame.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;

use perflab_core::MeasureCtx;
use perflab_knobs::{AppliedVariant, Journal};
use perflab_store::{
    MeasurementRecord, MeasurementStatus, NewRun, PlannedMeasurement, RunId, RunStatus, Store,
};

use crate::adaptive::{better_of, decided, fmt_pct, judged_metric, next_round, AdaptiveTarget};
use crate::claim::claim_settings;
use crate::error::{LabError, Result};
use crate::measure::{build_monitors, measure, Slot};
use crate::plan::Plan;
use crate::prepare::{check_variants, find_workload, Prepared, Variant};
use crate::quiet::QuietBudget;
pub use crate::run_options::{now_epoch, Progress, RunOptions};
use perflab_core::adaptive_target::UntilDecided;
use perflab_core::RunSpec;
use perflab_monitors::disturbance;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub run: RunId,
    pub status: RunStatus,
    pub recorded: u32,
    pub failed: u32,
    pub remaining: u32,
}

/// Creates the run in the store with its full plan. Nothing on the system changes.
pub fn create(store: &mut Store, prepared: &Prepared, label: Option<String>) -> Result<RunId> {
    create_with_uid(store, prepared, label, None)
}

/// [`create`] with the run's uid chosen by the caller (a fleet run picks it, so every
/// connection to the host finds the run again).
pub fn create_with_uid(
    store: &mut Store,
    prepared: &Prepared,
    label: Option<String>,
    uid: Option<String>,
) -> Result<RunId> {
    let names: Vec<String> = prepared
        .available
        .iter()
        .map(|v| v.spec.name.clone())
        .collect();
    let planned = Plan::new(&prepared.spec, &prepared.grid, &names)?;
    let new = NewRun {
        study: prepared.spec.name.clone(),
        workload: prepared.spec.workload.clone(),
        label,
        spec: prepared.spec.clone(),
        fingerprint: prepared.fingerprint.clone(),
        plan: Vec::new(),
        unavailable: prepared.unavailable.clone(),
        uid,
    };
    // Written as it is made, a batch at a time: the plan is never held whole.
    Ok(store.create_run_streamed(&new, planned.iter().map(Ok), now_epoch())?)
}

/// Runs (or resumes) every pending measurement of `run`. Every setting its variants
/// change is claimed first (see [`crate::claim`]): another perflab holding one refuses the
/// run before it is marked running or anything is changed.
pub fn execute(
    store: &mut Store,
    run: RunId,
    opts: &RunOptions,
    progress: &mut dyn Progress,
) -> Result<Outcome> {
    execute_claimed(store, run, opts, None, progress)
}

/// [`execute`] with the journal handle that already claimed the run's settings
/// ([`crate::claim::claim_waiting`], before the run was created or while it waited), so
/// that nothing is claimed twice and no other perflab gets them in between; `None` opens
/// the journal and claims them here.
pub fn execute_claimed(
    store: &mut Store,
    run: RunId,
    opts: &RunOptions,
    claimed: Option<Journal>,
    progress: &mut dyn Progress,
) -> Result<Outcome> {
    // An unknown run is said so before anything is claimed.
    store.run(run)?;
    // Held to the end, so what is pending cannot change under this session's feet; read
    // the run only once it is held.
    let _claim = store.claim(run).map_err(|e| match e {
        // Another process measuring it is the person's to sort out (exit 2).
        e if e.is_input() => LabError::Input(e.to_string()),
        e => LabError::Store(e),
    })?;
    let info = store.run(run)?;
    let spec = &info.spec;
    let workload = find_workload(&spec.workload)?;
    // Counted by variant, not loaded: the pending measurements are read a chunk at a
    // time as they are measured.
    let pending = store.pending_variants(run)?;
    let pending_count: u64 = pending.iter().map(|(_, n)| n).sum();
    let (variants, unavailable) = check_variants(&spec.variants, &opts.sys)?;
    // A resumed run must not quietly run a variant in another configuration: if a
    // variant it planned can no longer be applied, stop before changing anything.
    if let Some(u) = unavailable
        .iter()
        .find(|u| pending.iter().any(|(v, _)| *v == u.variant))
    {
        return Err(LabError::Input(format!(
            "run {run}: variant {} cannot run now: {}",
            u.variant, u.reason
        )));
    }
    let journal = match claimed {
        Some(j) => j,
        None => Journal::open(&opts.journal)?,
    }
    .for_run(run);
    claim_settings(&journal, &opts.sys, &variants)?;
    let mut monitors = build_monitors(&with_disturbance(&spec.monitors));
    progress.begin(run, info.planned as u64, (info.done) as u64);
    store.set_status(run, RunStatus::Running)?;
    let quiet = RefCell::new(spec.quiet_machine_s.map(|s| Quiet {
        budget: QuietBudget::new(s, spec.disturbed_above()),
        due: true,
    }));
    let session = Session {
        spec,
        workload,
        variants: &variants,
        opts,
        journal: &journal,
        fresh: info.done == 0,
        quiet: &quiet,
    };
    let mut counts = Counts::default();
    let mut result = session
        .measure_all(store, run, Batch::Pending, &mut monitors, progress, None)
        .map(|(r, f)| counts.add(pending_count, r, f));
    // Extra rounds come after the planned phase, --target-ci's before --until-decided's.
    // Whatever the planned phase left (an interruption) comes first, so an adaptive phase
    // only ever judges finished points; a resume gets here again.
    let phases = [
        spec.adaptive.as_ref().map(Rounds::Precision),
        spec.until_decided.as_ref().map(Rounds::UntilDecided),
    ];
    for rounds in phases.into_iter().flatten() {
        if result.is_ok() && counts.remaining == 0 {
            let again = Session {
                fresh: false,
                ..session
            };
            result = again.adapt(store, run, rounds, &mut monitors, progress, &mut counts);
        }
    }
    conclude(store, run, result, &counts, progress)
}

/// Marks the run complete, or interrupted when measurements remain or it failed (so it
/// can be resumed), and says how it ended.
fn conclude(
    store: &mut Store,
    run: RunId,
    result: Result<()>,
    counts: &Counts,
    progress: &mut dyn Progress,
) -> Result<Outcome> {
    if let Err(e) = result {
        // Knobs are already restored (the guard lived in measure_all); the run can be
        // resumed, so it must not stay marked as running.
        let _ = store.set_status(run, RunStatus::Interrupted);
        progress.end();
        return Err(e);
    }
    // Failed measurements are finished (recorded with their error); only those never
    // attempted make the run interrupted. A resume retries both.
    let status = if counts.remaining == 0 {
        RunStatus::Complete
    } else {
        RunStatus::Interrupted
    };
    store.set_status(run, status)?;
    progress.end();
    Ok(Outcome {
        run,
        status,
        recorded: counts.recorded,
        failed: counts.failed,
        remaining: counts.remaining,
    })
}

/// What the rounds after the planned phase aim for.
#[derive(Clone, Copy)]
enum Rounds<'a> {
    /// `--target-ci`: each median's interval narrow enough.
    Precision(&'a AdaptiveTarget),
    /// `--until-decided`: each comparison row decided.
    UntilDecided(&'a UntilDecided),
}

/// Measurements of this session, over the planned phase and every adaptive round.
#[derive(Default)]
struct Counts {
    recorded: u32,
    failed: u32,
    /// Of the last batch run, those never attempted (stopped before them).
    remaining: u32,
}

impl Counts {
    fn add(&mut self, batch: u64, recorded: u32, failed: u32) {
        self.recorded += recorded;
        self.failed += failed;
        self.remaining =
            u32::try_from(batch.saturating_sub(u64::from(recorded))).unwrap_or(u32::MAX);
    }
}

/// What one call of [`Session::measure_all`] measures.
#[derive(Clone, Copy)]
enum Batch<'a> {
    /// Everything the run still has pending, read from the store a chunk at a time.
    Pending,
    /// An adaptive round, already planned and in hand.
    Round(&'a [PlannedMeasurement]),
}

/// Pending measurements read from the store at a time.
const PENDING_CHUNK: u32 = 4096;

impl<'a> Batch<'a> {
    /// The next measurements to take after seq `after` (`None`: none taken yet); empty
    /// when there are no more.
    fn next(
        self,
        store: &Store,
        run: RunId,
        after: Option<u32>,
    ) -> Result<std::borrow::Cow<'a, [PlannedMeasurement]>> {
        Ok(match self {
            Batch::Pending => store.pending_after(run, after, PENDING_CHUNK)?.into(),
            Batch::Round(round) if after.is_none() => round.into(),
            Batch::Round(_) => Vec::new().into(),
        })
    }
}

/// What one session of a run works with.
struct Session<'a> {
    spec: &'a RunSpec,
    workload: &'a dyn perflab_core::Workload,
    variants: &'a [Variant],
    opts: &'a RunOptions,
    journal: &'a Journal,
    /// Nothing was measured before (not a resume): warm up first.
    fresh: bool,
    /// `--quiet-machine`: what is left of the wait, and whether one is due.
    quiet: &'a RefCell<Option<Quiet>>,
}

/// The quiet-machine wait of a session: due before its first measurement and after each
/// disturbed one, while the budget lasts.
struct Quiet {
    budget: QuietBudget,
    due: bool,
}

impl Session<'_> {
    /// Measures `batch` in order until done or stopped; returns (recorded, failed).
    /// With `keep`, each record is also appended there, without its telemetry, histograms
    /// and threads (the adaptive rounds judge metrics only).
    /// The applied variant is a guard on this frame, so every way out restores it.
    fn measure_all(
        &self,
        store: &mut Store,
        run: RunId,
        batch: Batch,
        monitors: &mut [Slot],
        progress: &mut dyn Progress,
        mut keep: Option<&mut Vec<MeasurementRecord>>,
    ) -> Result<(u32, u32)> {
        let mut applied: Option<(String, AppliedVariant)> = None;
        let mut chunk = batch.next(store, run, None)?;
        if self.spec.warmup > 0 && self.fresh {
            if let Some(first) = chunk.first() {
                self.warm_up(first, &mut applied, progress)?;
            }
        }

        let mut recorded = 0;
        let mut failed = 0;
        'chunks: while !chunk.is_empty() {
            for pm in chunk.iter() {
                if self.opts.stop.load(Ordering::Relaxed) {
                    break 'chunks;
                }
                switch_variant(
                    &mut applied,
                    &pm.variant,
                    self.variants,
                    self.opts,
                    self.journal,
                )?;
                let variant = applied.as_ref().map(|(_, a)| a);
                let cpus = self.workload.cpus(&pm.params).unwrap_or_default();
                self.wait_for_quiet(&cpus, progress);
                let above = self.spec.disturbed_above();
                let Some(rec) = measure(
                    pm,
                    self.workload,
                    monitors,
                    self.opts,
                    (variant, above),
                    progress,
                ) else {
                    break 'chunks;
                };
                if let Some(q) = self.quiet.borrow_mut().as_mut() {
                    q.due = matches!(rec.status, MeasurementStatus::Disturbed(_));
                }
                if matches!(rec.status, MeasurementStatus::Failed(_)) {
                    failed += 1;
                }
                store.record(run, &rec)?;
                recorded += 1;
                progress.measured(&rec);
                if let Some(keep) = keep.as_deref_mut() {
                    keep.push(metrics_only(rec));
                }
            }
            let last = chunk.last().map(|p| p.seq);
            chunk = batch.next(store, run, last)?;
        }
        // Restore explicitly so a failure to restore is reported, not lost in a Drop.
        if let Some((_, a)) = applied.take() {
            a.restore()?;
        }
        Ok((recorded, failed))
    }
}

impl Session<'_> {
    /// Waits for `cpus` to be quiet when a wait is due and the budget lasts, saying how it
    /// ended (see [`crate::quiet`]).
    fn wait_for_quiet(&self, cpus: &[u32], progress: &mut dyn Progress) {
        let mut quiet = self.quiet.borrow_mut();
        let Some(q) = quiet.as_mut().filter(|q| q.due && !q.budget.spent()) else {
            return;
        };
        let sys = &self.opts.sys;
        let waited = q
            .budget
            .wait(&mut || crate::quiet::host_window(sys, cpus, &self.opts.stop));
        let named = if cpus.is_empty() {
            "every CPU".to_string()
        } else {
            format!("CPU {}", perflab_sys::format_cpu_list(cpus))
        };
        if let Some(line) = q.budget.say(&named, &waited) {
            progress.note(&line);
        }
        q.due = false;
    }

    /// The spec's unrecorded warm-up measurements, of `first`'s point and variant (applied
    /// into `applied`, where the measurements that follow find it).
    fn warm_up(
        &self,
        first: &PlannedMeasurement,
        applied: &mut Option<(String, AppliedVariant)>,
        progress: &mut dyn Progress,
    ) -> Result<()> {
        progress.note(&format!(
            "warm-up: {} unrecorded measurement(s)",
            self.spec.warmup
        ));
        switch_variant(
            applied,
            &first.variant,
            self.variants,
            self.opts,
            self.journal,
        )?;
        for _ in 0..self.spec.warmup {
            if self.opts.stop.load(Ordering::Relaxed) {
                break;
            }
            // The first real measurement reports a workload that cannot say.
            let Ok(cpus) = self.workload.cpus(&first.params) else {
                break;
            };
            let ctx = MeasureCtx {
                sys: self.opts.sys.clone(),
                stop: self.opts.stop.clone(),
                threads: Default::default(),
                cpus,
                facts: facts_of(applied),
                workload: self.workload.info().name,
            };
            // A failing warm-up is reported by the first real measurement.
            let _ = self.workload.run(&first.params, &ctx);
        }
        Ok(())
    }

    /// A resume on a machine that lost a variant's knob must not plan it.
    fn check_round_variants(&self, run: RunId, round: &[PlannedMeasurement]) -> Result<()> {
        match round
            .iter()
            .find(|p| !self.variants.iter().any(|v| v.spec.name == p.variant))
        {
            Some(p) => Err(LabError::Input(format!(
                "run {run}: variant {} cannot run now, so its adaptive repetitions \
                 cannot continue",
                p.variant
            ))),
            None => Ok(()),
        }
    }

    /// Adaptive rounds: judge every point, append one balanced round for those not yet
    /// precise enough and below the cap, measure it, and again, until none is left or
    /// the run is stopped (the round's unmeasured rest stays planned for a resume).
    fn adapt(
        &self,
        store: &mut Store,
        run: RunId,
        rounds: Rounds,
        monitors: &mut [Slot],
        progress: &mut dyn Progress,
        counts: &mut Counts,
    ) -> Result<()> {
        let stats = perflab_stats::StatsConfig::default();
        let mut plan = store.plan(run)?;
        // Loaded once, then kept up to date with what each round records: a round judges
        // only the judged metric, so reloading telemetry every round would be waste.
        let mut ms: Vec<MeasurementRecord> = store
            .measurements(run)?
            .into_iter()
            .map(metrics_only)
            .collect();
        let primary = Some(self.spec.primary_metric.as_str()).filter(|p| !p.is_empty());
        for round_no in 1.. {
            let metric = judged_metric(primary, &ms);
            let round = match rounds {
                Rounds::Precision(target) => next_round(target, metric.as_deref(), &plan, &ms),
                Rounds::UntilDecided(until) => decided::next_round(
                    until,
                    self.spec.compare.baseline.as_deref(),
                    better_of(metric.as_deref(), &ms),
                    metric.as_deref(),
                    &plan,
                    &ms,
                    &stats,
                ),
            };
            if round.is_empty() {
                break;
            }
            let points: BTreeSet<u32> = round.iter().map(|p| p.point).collect();
            let total_points: BTreeSet<u32> = plan.iter().map(|p| p.point).collect();
            self.check_round_variants(run, &round)?;
            let planned = store.append_plan(run, &round)?;
            plan.extend(round.iter().cloned());
            if self.opts.stop.load(Ordering::Relaxed) {
                // Planned, so that a resume measures this round and carries on judging.
                counts.remaining = round.len() as u32;
                break;
            }
            progress.end();
            progress.note(&round_note(
                rounds,
                round_no,
                &points,
                &total_points,
                round.len(),
            ));
            let done = store.run(run)?.done;
            progress.begin(run, u64::from(planned), u64::from(done));
            let (recorded, failed) = self.measure_all(
                store,
                run,
                Batch::Round(&round),
                monitors,
                progress,
                Some(&mut ms),
            )?;
            counts.add(round.len() as u64, recorded, failed);
            if counts.remaining > 0 {
                break;
            }
        }
        Ok(())
    }
}

/// What an adaptive round is about to do: how many points are still short of the target.
fn round_note(
    rounds: Rounds,
    round_no: u32,
    points: &BTreeSet<u32>,
    total_points: &BTreeSet<u32>,
    measurements: usize,
) -> String {
    match rounds {
        Rounds::Precision(target) => format!(
            "adaptive round {round_no}: {} of {} points above ±{}% (cap {})",
            points.len(),
            total_points.len(),
            fmt_pct(target.target_ci_pct),
            target.max_reps
        ),
        Rounds::UntilDecided(until) => format!(
            "until-decided round {round_no}: {} of {} points undecided, {} more \
             measurements (cap {})",
            points.len(),
            total_points.len(),
            measurements,
            until.cap
        ),
    }
}

/// The run's monitors with `disturbance` last, named or not: every measurement records how
/// much of its CPUs other work took, and it reads closest to the workload when started
/// after the others. `--monitors none` (an empty list) asked for no monitor at all, so it
/// gets none, and no measurement of it can be judged disturbed.
fn with_disturbance(names: &[String]) -> Vec<String> {
    if names.is_empty() {
        return Vec::new();
    }
    let mut names: Vec<String> = names
        .iter()
        .filter(|n| *n != disturbance::NAME)
        .cloned()
        .collect();
    names.push(disturbance::NAME.to_string());
    names
}

/// A record without what adaptive rounds never look at.
fn metrics_only(mut rec: MeasurementRecord) -> MeasurementRecord {
    rec.telemetry = Vec::new();
    rec.output.histograms = Vec::new();
    rec.output.threads = Vec::new();
    rec
}

fn facts_of(applied: &Option<(String, AppliedVariant)>) -> BTreeMap<String, String> {
    applied.as_ref().map(|(_, a)| a.facts()).unwrap_or_default()
}

fn switch_variant(
    applied: &mut Option<(String, AppliedVariant)>,
    want: &str,
    variants: &[Variant],
    opts: &RunOptions,
    journal: &Journal,
) -> Result<()> {
    if applied.as_ref().is_some_and(|(name, _)| name == want) {
        return Ok(());
    }
    if let Some((_, a)) = applied.take() {
        a.restore()?;
    }
    let v = variants
        .iter()
        .find(|v| v.spec.name == want)
        .ok_or_else(|| LabError::Runtime(format!("variant {want} is not in the run's spec")))?;
    *applied = Some((
        want.to_string(),
        AppliedVariant::apply(&v.knobs, &opts.sys, journal)?,
    ));
    Ok(())
}
