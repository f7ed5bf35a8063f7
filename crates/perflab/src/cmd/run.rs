//! `perflab run`: build the experiment from a study or flags, check it, run it, and print
//! what it found.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use perflab_lab::{adaptive, RunOptions};
use perflab_store::RunStatus;

use crate::cli::{Global, RunArgs, RunFormat};
use crate::cmd::run_end::RunEnd;
use crate::cmd::{common, drilldown_dir, envelope, hint, run_lock, run_spec, run_view};
use crate::exit::INTERRUPTED;
use crate::progress::Reporter;

pub fn run(g: &Global, a: RunArgs) -> anyhow::Result<i32> {
    let sys = common::sysroot(g)?;
    if let Some(k) = &a.guest_kernel {
        perflab_knobs::guest::kernel::find(&sys, Some(k)).map_err(crate::exit::input)?;
        // Read by the netpath knob where it boots a guest; set before any thread that
        // could read the environment starts.
        std::env::set_var(perflab_knobs::guest::kernel::KERNEL_ENV, k);
    }
    if let Some(named) = a.resume {
        let mut store = common::resume_store(g)?;
        let id = crate::run_ref::resolve(&store, named)?;
        let info = store.run(id)?;
        // One of a bisection's runs: the bisection resumes, that run among the rest.
        if let Some(key) = crate::cmd::bisect::resume::key_of(&info) {
            drop(store);
            return crate::cmd::bisect::resume::resume(g, &info, &key, a.format);
        }
        let (variants, _) = perflab_lab::prepare::check_variants(&info.spec.variants, &sys)?;
        let journal =
            claim(g, &sys, &variants, &a).map_err(|e| run_lock::refused(e, Some(id), g))?;
        return execute(g, &mut store, id, &sys, &a, journal);
    }
    if !a.dry_run {
        common::check_db(g)?;
    }
    let spec = run_spec::build_spec(&a)?;
    let prepared = perflab_lab::prepare(&spec, &sys)?;
    for n in &prepared.notes {
        eprintln!("{n}");
    }
    for u in &prepared.unavailable {
        eprintln!(
            "variant {} is unavailable on this machine: {}",
            u.variant, u.reason
        );
    }
    if a.dry_run {
        print_plan(&prepared, a.format)?;
        return Ok(0);
    }
    if let Some(uid) = &a.uid {
        if uid.len() != 32 || !uid.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(crate::exit::input(format!(
                "--uid {uid:?}: expected 32 hex digits"
            )));
        }
    }
    // Every setting the run changes is claimed before the run is stored: a run another
    // perflab would refuse one to is refused (or waits, with --wait-lock) with nothing
    // stored or changed.
    let journal =
        claim(g, &sys, &prepared.available, &a).map_err(|e| run_lock::refused(e, None, g))?;
    let mut store = common::open_store(g)?;
    let id = perflab_lab::create_with_uid(&mut store, &prepared, a.label.clone(), a.uid.clone())?;
    // The run reads its spec back from the store; the grid (1.5 KB a point) goes now.
    drop(prepared);
    execute(g, &mut store, id, &sys, &a, journal)
}

/// Claims every setting of `variants` through a journal handle that holds them until
/// the run ends, waiting up to `--wait-lock` for another perflab to let go of one.
fn claim(
    g: &Global,
    sys: &perflab_sys::SysRoot,
    variants: &[perflab_lab::prepare::Variant],
    a: &RunArgs,
) -> perflab_lab::Result<perflab_knobs::Journal> {
    perflab_lab::claim::claim_waiting(
        &common::journal_path(g),
        sys,
        variants,
        wait_lock(a)?,
        &mut |line| eprintln!("perflab: {line}"),
    )
}

/// `--wait-lock`, else `$PERFLAB_WAIT_LOCK` (a test suite or a shared machine's scripts
/// set it once), else no wait.
fn wait_lock(a: &RunArgs) -> perflab_lab::Result<Option<std::time::Duration>> {
    if a.wait_lock.is_some() {
        return Ok(a.wait_lock);
    }
    match std::env::var("PERFLAB_WAIT_LOCK") {
        Ok(text) if !text.is_empty() => crate::cli::wait_time(&text)
            .map(Some)
            .map_err(|e| perflab_lab::LabError::Input(format!("PERFLAB_WAIT_LOCK: {e}"))),
        _ => Ok(None),
    }
}

fn execute(
    g: &Global,
    store: &mut perflab_store::Store,
    id: i64,
    sys: &perflab_sys::SysRoot,
    a: &RunArgs,
    journal: perflab_knobs::Journal,
) -> anyhow::Result<i32> {
    let stop = Arc::new(AtomicBool::new(false));
    let _signals = perflab_knobs::signals::install(stop.clone())?;
    let opts = RunOptions {
        sys: sys.clone(),
        journal: common::journal_path(g),
        stop,
        label: None,
    };
    let info = store.run(id)?;
    let mut reporter = Reporter::new(
        &info.spec.primary_metric,
        info.spec.varying_params(),
        perflab_core::catalog::param_roles(&info.workload, &info.spec),
    );
    let outcome = perflab_lab::execute_claimed(store, id, &opts, Some(journal), &mut reporter)
        .map_err(|e| run_lock::refused(e, Some(id), g))?;
    eprintln!(
        "run {}: {} ({} measured this session, {} failed, {} left); results stored in {}",
        outcome.run,
        outcome.status.as_str(),
        outcome.recorded,
        outcome.failed,
        outcome.remaining,
        run_view::database_location(store)
    );
    // The run as it stands now, read once: its totals, not this session's (a resume that
    // retried the failures is judged by what the run holds now), and its view.
    let info = store.run(id)?;
    let mut end = RunEnd::of(&info).with_disturbed(&info, store.disturbed(id)?);
    if outcome.status == RunStatus::Interrupted {
        eprintln!(
            "resume with: perflab run --resume {}{}",
            outcome.run,
            hint::db_flag(g)
        );
    }
    let json = a.format == RunFormat::Json;
    if json || outcome.status != RunStatus::Interrupted {
        end = print_results(g, store, &info, end, a, outcome.status)?;
    }
    if a.out.is_none() {
        give_drilldown(g, store, &info);
    }
    if let Some(line) = end.last_line(&hint::db_flag(g)) {
        // After the tables, where a reader (and `tail -1` of a log) looks last.
        crate::stdout_guard::Stdout.flush()?;
        eprintln!("{line}");
    }
    Ok(if outcome.status == RunStatus::Interrupted {
        INTERRUPTED
    } else {
        end.exit_code
    })
}

/// The run's tables, as `show` and `report` print them, and (unless the run was
/// interrupted) the judgement of comparisons void throughout, added to `end` and
/// returned with it: the last line and the exit code depend on it.
fn print_results(
    g: &Global,
    store: &perflab_store::Store,
    info: &perflab_store::RunInfo,
    mut end: RunEnd,
    a: &RunArgs,
    status: RunStatus,
) -> anyhow::Result<RunEnd> {
    let json = a.format == RunFormat::Json;
    // Folded as the store streams them, as `show` and `report` read a run: a run of
    // a million measurements is not loaded whole to print its tables.
    let ms = common::report_records(store, info.id, true)?;
    if status != RunStatus::Interrupted {
        let points = |variant: &str| {
            let at: std::collections::BTreeSet<u32> = ms
                .iter()
                .filter(|m| m.variant == variant)
                .map(|m| m.point)
                .collect();
            at.len()
        };
        end = end.with_void(
            info,
            perflab_lab::void::judge(&info.spec, &ms),
            (comparisons(info, &ms), &points),
        );
    }
    let out = a.out.as_deref();
    run_view::print(store, (info, &ms), out, &end, json, &hint::db_flag(g))?;
    if !json {
        print_adaptive(store, info, &ms)?;
        if let Some(listing) = end.void_listing() {
            crate::stdout_guard::line("")?;
            crate::stdout_guard::print(listing)?;
        }
    }
    Ok(end)
}

/// The comparisons a run makes: every variant but the baseline, at every point measured.
fn comparisons(info: &perflab_store::RunInfo, ms: &[perflab_store::MeasurementRecord]) -> usize {
    let points: std::collections::BTreeSet<u32> = ms.iter().map(|m| m.point).collect();
    info.spec.variants.len().saturating_sub(1) * points.len()
}

/// Under sudo, the drill-down written beside the invoking user's database is theirs, as
/// the database is; a failure is said, not fatal (the results are safe in the database).
fn give_drilldown(g: &Global, store: &perflab_store::Store, info: &perflab_store::RunInfo) {
    let Some(user) = crate::cmd::sudo_db::sudo_user(g) else {
        return;
    };
    let dir = drilldown_dir::default_dir(&info.study, info.id, store.path());
    let Some(top) = dir.parent().filter(|t| t.exists()) else {
        return;
    };
    if let Err(e) = drilldown_dir::give_to(&user, top) {
        eprintln!(
            "perflab: warning: cannot give {} to {}: {e}",
            top.display(),
            user.name
        );
    }
}

/// The adaptive run's last word: which points reached the target and which the cap.
fn print_adaptive(
    store: &perflab_store::Store,
    info: &perflab_store::RunInfo,
    ms: &[perflab_store::MeasurementRecord],
) -> anyhow::Result<()> {
    if info.spec.adaptive.is_none() && info.spec.until_decided.is_none() {
        return Ok(());
    }
    if let Some(r) = adaptive::report(&info.spec, ms) {
        crate::stdout_guard::line("")?;
        crate::stdout_guard::line(r.summary)?;
    }
    if let Some(line) = adaptive::decided::report_line(&info.spec, &store.plan(info.id)?, ms) {
        crate::stdout_guard::line("")?;
        crate::stdout_guard::line(line)?;
    }
    Ok(())
}

/// `run --dry-run --format json`: the expanded experiment and its plan (`$defs/run-dry-run`
/// in docs/schema/perflab.json).
#[derive(serde::Serialize)]
struct DryRun<'a> {
    dry_run: bool,
    spec: &'a perflab_core::RunSpec,
    variants: &'a [String],
    unavailable: &'a [perflab_store::UnavailableVariant],
    measurements: u64,
    telemetry_measurements: u64,
    timed_seconds: Option<f64>,
    plan: PlanSeq<'a>,
}

/// The plan as a JSON array written as it is made, never held whole.
struct PlanSeq<'a>(&'a perflab_lab::plan::Plan<'a>);

impl serde::Serialize for PlanSeq<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

fn print_plan(p: &perflab_lab::Prepared, format: RunFormat) -> anyhow::Result<()> {
    let names: Vec<String> = p.available.iter().map(|v| v.spec.name.clone()).collect();
    let plan = perflab_lab::plan::Plan::new(&p.spec, &p.grid, &names)?;
    let timed = timed_seconds(p, &plan)?;
    let mut out = std::io::BufWriter::new(crate::stdout_guard::Stdout);
    if format == RunFormat::Json {
        // Everything the text form says, as one document and nothing else on stdout;
        // notes (monitors left out, variants unavailable) went to stderr.
        let doc = DryRun {
            dry_run: true,
            spec: &p.spec,
            variants: &names,
            unavailable: &p.unavailable,
            measurements: plan.len(),
            telemetry_measurements: plan.telemetry_len(),
            timed_seconds: timed,
            plan: PlanSeq(&plan),
        };
        envelope::write_as(&mut out, "perflab-run-dry-run", &doc)?;
        out.flush()?;
        return Ok(());
    }
    write_plan_text(&mut out, p, names.len(), &plan, timed)?;
    out.flush()?;
    Ok(())
}

/// The plan's timed seconds, summed over the grid's cells, each times its measurements (no
/// measurement is built); `None` for a workload without a timed `duration`.
fn timed_seconds(
    p: &perflab_lab::Prepared,
    plan: &perflab_lab::plan::Plan<'_>,
) -> anyhow::Result<Option<f64>> {
    // A workload without a timed `duration` (null, dmatest) has no known run time.
    let timed_duration = p.workload.info().params.iter().any(|s| {
        s.name == "duration" && matches!(s.kind, perflab_core::ParamKind::Duration { .. })
    });
    if !timed_duration {
        return Ok(None);
    }
    let timed: f64 = plan
        .cells()
        .map(|(point, variant, n)| {
            p.grid
                .params(point, variant)
                .seconds("duration")
                .map(|s| s * n as f64)
        })
        .sum::<Result<f64, _>>()?;
    // exec's `duration` is only a placeholder value for its command, not a time it runs.
    Ok((timed > 0.0 && p.spec.workload != "exec").then_some(timed))
}

/// The dry run as text: the spec, the plan's arithmetic and extensions, its time, and the
/// first 20 measurements.
fn write_plan_text(
    out: &mut impl Write,
    p: &perflab_lab::Prepared,
    variants: usize,
    plan: &perflab_lab::plan::Plan<'_>,
    timed: Option<f64>,
) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &p.spec)?;
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        plan_arithmetic(p.spec.points.len(), variants, p.spec.repetitions, plan)
    )?;
    if let Some(u) = &p.spec.until_decided {
        writeln!(
            out,
            "then until decided: undecided comparison rows get more repetitions, in looks \
             of an alpha-spending schedule, up to {} per point and variant",
            u.cap
        )?;
    }
    if let Some(a) = &p.spec.adaptive {
        writeln!(
            out,
            "then adaptive rounds: up to {} repetitions per point and variant, until the \
             median's 95% CI is within ±{}%",
            a.max_reps,
            adaptive::fmt_pct(a.target_ci_pct)
        )?;
    }
    if let Some(timed) = timed {
        writeln!(
            out,
            "at least {timed:.0} s of timed measurement, plus warm-ups and set-up"
        )?;
    }
    // Each value in its unit, as the progress lines and the report will name the point.
    let roles = perflab_core::catalog::param_roles(&p.spec.workload, &p.spec);
    for m in plan.iter().take(20) {
        // Telemetry repetitions are numbered apart (from 0), so say which kind a line is.
        let kind = match m.role {
            perflab_core::record::Role::Headline => "",
            perflab_core::record::Role::Telemetry => " telemetry",
        };
        writeln!(
            out,
            "  #{:<4} [{}] rep {}{kind}  {}",
            m.seq,
            m.variant,
            m.rep,
            roles.describe(&m.params)
        )?;
    }
    if plan.len() > 20 {
        writeln!(out, "  … {} more", plan.len() - 20)?;
    }
    Ok(())
}

/// The plan's header: the product of its axes, and the telemetry repetitions (which carry
/// the monitors that would disturb a headline figure) added as their own term, so the
/// arithmetic a person reads adds up to the number of measurements.
fn plan_arithmetic(
    points: usize,
    variants: usize,
    reps: u32,
    plan: &perflab_lab::plan::Plan,
) -> String {
    let telemetry = plan.telemetry_len();
    let headline = plan.len() - telemetry;
    let product = format!("{points} points x {variants} variants x {reps} repetitions");
    if telemetry == 0 {
        return format!("{product} = {headline} measurements");
    }
    format!(
        "{product} = {headline} measurements + {telemetry} telemetry (repetitions for the monitors \
         that would disturb a headline figure) = {} in all",
        plan.len()
    )
}
