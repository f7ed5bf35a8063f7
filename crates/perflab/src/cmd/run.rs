//! `perflab run`: build the experiment from a study or flags, check it, run it, and print
//! what it found.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use perflab_lab::spec::{ParamInput, PartnersSpec, Scalar, VariantSpec};
use perflab_lab::{adaptive, presets, ExperimentSpec, RunOptions};
use perflab_store::RunStatus;

use crate::cli::{Global, RunArgs, RunFormat};
use crate::cmd::run_end::RunEnd;
use crate::cmd::{common, drilldown_dir, envelope, hint, run_json, run_view, show};
use crate::exit::{input, INTERRUPTED};
use crate::progress::Reporter;

pub fn run(g: &Global, a: RunArgs) -> anyhow::Result<i32> {
    let sys = common::sysroot(g)?;
    if let Some(k) = &a.guest_kernel {
        perflab_knobs::guest::kernel::find(&sys, Some(k)).map_err(crate::exit::input)?;
        // Read by the netpath knob where it boots a guest; set before any thread that
        // could read the environment starts.
        std::env::set_var(perflab_knobs::guest::kernel::KERNEL_ENV, k);
    }
    if let Some(id) = a.resume {
        let mut store = common::read_store(g)?;
        return execute(g, &mut store, id, &sys, &a);
    }
    if !a.dry_run {
        common::check_db(g)?;
    }
    let spec = build_spec(&a)?;
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
    let mut store = common::open_store(g)?;
    let id = perflab_lab::create_with_uid(&mut store, &prepared, a.label.clone(), a.uid.clone())?;
    execute(g, &mut store, id, &sys, &a)
}

fn execute(
    g: &Global,
    store: &mut perflab_store::Store,
    id: i64,
    sys: &perflab_sys::SysRoot,
    a: &RunArgs,
) -> anyhow::Result<i32> {
    let out = a.out.as_deref();
    let stop = Arc::new(AtomicBool::new(false));
    let _signals = perflab_knobs::signals::install(stop.clone())?;
    let opts = RunOptions {
        sys: sys.clone(),
        journal: common::journal_path(g),
        stop,
        label: None,
    };
    let info = store.run(id)?;
    let mut reporter = Reporter::new(&info.spec.primary_metric, info.spec.varying_params());
    let outcome = perflab_lab::execute(store, id, &opts, &mut reporter)?;
    eprintln!(
        "run {}: {} ({} measured this session, {} failed, {} left); results stored in {}",
        outcome.run,
        outcome.status.as_str(),
        outcome.recorded,
        outcome.failed,
        outcome.remaining,
        run_json::database_location(store)
    );
    // The run's totals, not this session's: a resume that retried the failures is judged
    // by what the run holds now.
    let end = RunEnd::of(&store.run(id)?);
    if outcome.status == RunStatus::Interrupted {
        eprintln!(
            "resume with: perflab run --resume {}{}",
            outcome.run,
            hint::db_flag(g)
        );
    }
    let json = a.format == RunFormat::Json;
    if json || outcome.status != RunStatus::Interrupted {
        let (info, ms) = (store.run(id)?, store.measurements(id)?);
        let after = show::AfterRun::of(&info, &ms, out, store.path())?;
        let cap = match json {
            true => usize::MAX,
            false => perflab_report::spans_ab::MAX_COMPARISONS,
        };
        let view = run_view::EndView::of(&info, &ms, after, cap)?;
        let drilldown = view.write_drilldown(&info, &ms)?;
        if json {
            let doc =
                run_json::document(store, &info, &ms, &view, drilldown, &end, &hint::db_flag(g));
            envelope::print(&doc)?;
        } else {
            print!("{}", view.text(drilldown.as_deref()));
            print_adaptive(store, id)?;
        }
    }
    if a.out.is_none() {
        give_drilldown(g, store, id);
    }
    if let Some(line) = end.last_line(&hint::db_flag(g)) {
        // After the tables, where a reader (and `tail -1` of a log) looks last.
        std::io::stdout().flush()?;
        eprintln!("{line}");
    }
    Ok(if outcome.status == RunStatus::Interrupted {
        INTERRUPTED
    } else {
        end.exit_code
    })
}

/// Under sudo, the drill-down written beside the invoking user's database is theirs, as
/// the database is; a failure is said, not fatal (the results are safe in the database).
fn give_drilldown(g: &Global, store: &perflab_store::Store, id: i64) {
    let Some(user) = crate::cmd::sudo_db::sudo_user(g) else {
        return;
    };
    let Ok(info) = store.run(id) else { return };
    let dir = drilldown_dir::default_dir(&info.study, id, store.path());
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
fn print_adaptive(store: &perflab_store::Store, id: i64) -> anyhow::Result<()> {
    let info = store.run(id)?;
    if info.spec.adaptive.is_none() && info.spec.until_decided.is_none() {
        return Ok(());
    }
    let ms = store.measurements(id)?;
    if let Some(r) = adaptive::report(&info.spec, &ms) {
        println!();
        println!("{}", r.summary);
    }
    if let Some(line) = adaptive::decided::report_line(&info.spec, &store.plan(id)?, &ms) {
        println!();
        println!("{line}");
    }
    Ok(())
}

fn load_study(name: &str) -> anyhow::Result<ExperimentSpec> {
    if let Some(spec) = presets::preset(name) {
        return Ok(spec?);
    }
    let path = std::path::Path::new(name);
    if path.exists() || name.ends_with(".toml") {
        let text = std::fs::read_to_string(path)
            .map_err(|e| input(format!("{name}: cannot read the experiment file: {e}")))?;
        return Ok(ExperimentSpec::from_toml(name, &text)?);
    }
    Err(input(format!(
        "unknown study {name:?} (built-in: {}; or give a path to a TOML file)",
        presets::names().join(", ")
    )))
}

/// The experiment the flags describe: a study with overrides, or a bare workload.
pub fn build_spec(a: &RunArgs) -> anyhow::Result<ExperimentSpec> {
    let mut spec = match (&a.study, &a.workload) {
        (Some(s), _) => load_study(s)?,
        (None, Some(w)) => ExperimentSpec {
            name: w.clone(),
            description: String::new(),
            workload: w.clone(),
            repetitions: 3,
            warmup: 0,
            monitors: None,
            params: BTreeMap::new(),
            variants: Vec::new(),
            compare: Default::default(),
            quick: None,
            target_ci: None,
            max_reps: None,
            until_decided: false,
            telemetry_reps: None,
        },
        (None, None) => {
            return Err(input(
                "name a study (`perflab list` shows them) or a workload with --workload",
            ))
        }
    };
    // Quick settings first, so that flags given with --quick still win.
    if a.quick {
        spec.make_quick();
    }
    for p in &a.params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| input(format!("--param {p:?}: expected NAME=VALUE")))?;
        let k = k.trim().to_string();
        // Free text (a command, a regex, a token) is taken verbatim: its commas are its own.
        let is_text = perflab_workloads::by_name(&spec.workload).is_some_and(|w| {
            w.info().params.iter().any(|s| {
                s.name == k
                    && matches!(
                        s.kind,
                        perflab_core::ParamKind::Text { .. }
                            | perflab_core::ParamKind::Secret { .. }
                    )
            })
        });
        let value = if is_text {
            ParamInput::One(Scalar::Str(v.to_string()))
        } else if v.contains(',') {
            ParamInput::List(
                v.split(',')
                    .map(|s| Scalar::Str(s.trim().to_string()))
                    .collect(),
            )
        } else {
            ParamInput::One(Scalar::Str(v.trim().to_string()))
        };
        spec.params.insert(k, value);
    }
    if let Some(d) = &a.duration {
        spec.params
            .insert("duration".into(), ParamInput::One(Scalar::Str(d.clone())));
    }
    if let Some(size) = &a.size {
        let value = if size.contains(',') {
            ParamInput::List(
                size.split(',')
                    .map(|s| Scalar::Str(s.trim().to_string()))
                    .collect(),
            )
        } else {
            ParamInput::One(Scalar::Str(size.trim().to_string()))
        };
        spec.params.insert("size".into(), value);
    }
    if let Some(cpu) = a.anchor {
        spec.params
            .insert("cpu_a".into(), ParamInput::One(Scalar::Int(cpu as i64)));
    }
    if let Some(p) = &a.partners {
        let input_value = match p.as_str() {
            "per-core" | "all" => ParamInput::Partners(PartnersSpec {
                partners_of: "cpu_a".into(),
                mode: p.clone(),
                limit: None,
            }),
            list => {
                let cpus = perflab_sys::parse_cpu_list(list)
                    .map_err(|e| input(format!("--partners {list:?}: {}", e.reason)))?;
                if cpus.is_empty() {
                    return Err(input("--partners: empty CPU list"));
                }
                ParamInput::List(cpus.into_iter().map(|c| Scalar::Int(c as i64)).collect())
            }
        };
        spec.params.insert("cpu_b".into(), input_value);
    }
    if let Some(r) = a.reps {
        spec.repetitions = r;
    }
    if let Some(w) = a.warmup {
        spec.warmup = w;
    }
    if let Some(m) = &a.monitors {
        spec.monitors = Some(m.clone());
    }
    if let Some(t) = a.telemetry_reps {
        spec.telemetry_reps = Some(t);
    }
    let given = with_paths(&spec, &a.variants, &a.paths)?;
    if !given.is_empty() {
        spec.variants = select_variants(&spec, &given)?;
        if let Some(b) = &spec.compare.baseline {
            if !spec.variants.iter().any(|v| &v.name == b) {
                spec.compare.baseline = spec.variants.first().map(|v| v.name.clone());
            }
        }
    }
    adaptive_flags(a, &mut spec)?;
    spec.check()
        .map_err(|e| input(format!("{}: {e}", spec.name)))?;
    Ok(spec)
}

/// `--paths a,b` is `--variant a --variant b` for a study whose variants are network paths
/// (each sets the `netpath` knob): a plain way to pick paths, refused elsewhere so that it
/// never quietly means something else.
fn with_paths(
    spec: &ExperimentSpec,
    variants: &[String],
    paths: &[String],
) -> anyhow::Result<Vec<String>> {
    let paths: Vec<String> = paths
        .iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if paths.is_empty() {
        return Ok(variants.to_vec());
    }
    let path_names: Vec<&str> = spec
        .variants
        .iter()
        .filter(|v| v.knobs.get("netpath").is_some())
        .map(|v| v.name.as_str())
        .collect();
    if path_names.is_empty() {
        return Err(input(format!(
            "--paths: study {:?} has no network-path variants (it is for `netpaths`); \
             use --variant NAME to pick variants",
            spec.name
        )));
    }
    if let Some(p) = paths.iter().find(|p| !path_names.contains(&p.as_str())) {
        return Err(input(format!(
            "--paths: {p:?} is not a path of {} (paths: {})",
            spec.name,
            path_names.join(", ")
        )));
    }
    Ok(variants.iter().cloned().chain(paths).collect())
}

/// `--target-ci` and `--max-reps` over the study's `target_ci` and `max_reps`, checked
/// here so that the error names the flag rather than the file's key.
fn adaptive_flags(a: &RunArgs, spec: &mut ExperimentSpec) -> anyhow::Result<()> {
    if let Some(t) = &a.target_ci {
        let pct = t.trim().trim_end_matches('%').parse::<f64>().map_err(|_| {
            input(format!(
                "--target-ci {t:?}: expected a percentage above 0, e.g. 1 for ±1% of the median"
            ))
        })?;
        spec.target_ci = Some(pct);
    }
    if let Some(n) = &a.max_reps {
        let cap = n.trim().parse::<u32>().map_err(|_| {
            input(format!(
                "--max-reps {n:?}: expected a whole number of repetitions, e.g. 30"
            ))
        })?;
        spec.max_reps = Some(cap);
    }
    if a.until_decided {
        spec.until_decided = true;
    }
    if a.target_ci.is_some() || a.max_reps.is_some() {
        // --max-reps caps --until-decided as well, which needs no --target-ci.
        let target = spec.target_ci.or(spec.until_decided.then_some(1.0));
        adaptive::check_settings(target, spec.max_reps, spec.repetitions)
            .map_err(|e| input(e.for_flags()))?;
    }
    Ok(())
}

/// `--variant NAME` keeps a variant of the study; `--variant NAME:SETTING;SETTING` defines
/// one, where each SETTING is `param=value` for a parameter of the study's workload (an
/// `exec` variant's own `cmd`, so two versions of a program run interleaved) or
/// `knob=value` (`cpuidle=poll-only`, `before=CMD`).
fn select_variants(spec: &ExperimentSpec, given: &[String]) -> anyhow::Result<Vec<VariantSpec>> {
    let params: Vec<&str> = perflab_workloads::by_name(&spec.workload)
        .map(|w| w.info().params.iter().map(|p| p.name).collect())
        .unwrap_or_default();
    let knobs: Vec<&str> = perflab_knobs::knob_names()
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let mut out = Vec::new();
    for g in given {
        match g.split_once(':') {
            None => {
                let v = spec.variants.iter().find(|v| &v.name == g).ok_or_else(|| {
                    input(format!(
                        "unknown variant {g:?} (the study has: {}; define one with \
                         NAME:knob=value or NAME:param=value)",
                        if spec.variants.is_empty() {
                            "none".to_string()
                        } else {
                            perflab_lab::expand::variant_names(&spec.variants)
                        }
                    ))
                })?;
                out.push(v.clone());
            }
            Some((name, settings)) => {
                let mut v = VariantSpec {
                    name: name.trim().to_string(),
                    knobs: Default::default(),
                    params: BTreeMap::new(),
                };
                if v.name.is_empty() {
                    return Err(input(format!("--variant {g:?}: the variant needs a name")));
                }
                let is_key = |k: &str| params.contains(&k) || knobs.contains(&k);
                for kv in split_settings(settings, is_key) {
                    let (k, value) = kv.split_once('=').ok_or_else(|| {
                        input(format!(
                            "--variant {g:?}: expected knob=value or param=value, got {kv:?}"
                        ))
                    })?;
                    let k = k.trim();
                    if params.contains(&k) {
                        v.params
                            .insert(k.to_string(), Scalar::Str(value.trim().to_string()));
                    } else if knobs.contains(&k) {
                        v.knobs.push(k, value.trim());
                    } else {
                        return Err(input(format!(
                            "--variant {g:?}: {k:?} is neither a parameter of workload {} ({}) \
                             nor a knob ({})",
                            spec.workload,
                            if params.is_empty() {
                                "unknown workload".to_string()
                            } else {
                                params.join(", ")
                            },
                            knobs.join(", ")
                        )));
                    }
                }
                out.push(v);
            }
        }
    }
    Ok(out)
}

/// Splits `a=1;b=2` at each `;` that starts a new setting (`;` then a known name and `=`)
/// or ends the text; any other `;` belongs to the value, so a shell command keeps its own:
/// `cmd=make; ./bench {size};env=HUGE=1` is `cmd` and `env`.
fn split_settings(text: &str, is_key: impl Fn(&str) -> bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices(';') {
        let rest = &text[i + 1..];
        // A `;` at the end separates nothing from nothing, as it always has.
        let starts_setting =
            rest.trim().is_empty() || rest.split_once('=').is_some_and(|(k, _)| is_key(k.trim()));
        if starts_setting {
            out.push(&text[start..i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// `run --dry-run --format json`: the expanded experiment and its plan (`$defs/run-dry-run`
/// in docs/schema/perflab.json).
#[derive(serde::Serialize)]
struct DryRun<'a> {
    dry_run: bool,
    spec: &'a perflab_core::RunSpec,
    variants: &'a [String],
    unavailable: &'a [perflab_store::UnavailableVariant],
    measurements: usize,
    telemetry_measurements: usize,
    timed_seconds: Option<f64>,
    plan: &'a [perflab_core::record::PlannedMeasurement],
}

fn print_plan(p: &perflab_lab::Prepared, format: RunFormat) -> anyhow::Result<()> {
    let names: Vec<String> = p.available.iter().map(|v| v.spec.name.clone()).collect();
    let plan = perflab_lab::plan::plan(&p.spec, &p.grid, &names);
    // A workload without a timed `duration` (null, dmatest) has no known run time.
    let timed_duration = p.workload.info().params.iter().any(|s| {
        s.name == "duration" && matches!(s.kind, perflab_core::ParamKind::Duration { .. })
    });
    let timed: f64 = if timed_duration {
        plan.iter()
            .map(|m| m.params.seconds("duration"))
            .sum::<Result<f64, _>>()?
    } else {
        0.0
    };
    // exec's `duration` is only a placeholder value for its command, not a time it runs.
    let timed = (timed > 0.0 && p.spec.workload != "exec").then_some(timed);
    if format == RunFormat::Json {
        // Everything the text form says, as one document and nothing else on stdout;
        // notes (monitors left out, variants unavailable) went to stderr.
        let doc = DryRun {
            dry_run: true,
            spec: &p.spec,
            variants: &names,
            unavailable: &p.unavailable,
            measurements: plan.len(),
            telemetry_measurements: plan
                .iter()
                .filter(|m| m.role == perflab_core::record::Role::Telemetry)
                .count(),
            timed_seconds: timed,
            plan: &plan,
        };
        envelope::print(&doc)?;
        return Ok(());
    }
    println!("{}", serde_json::to_string_pretty(&p.spec)?);
    println!(
        "{}",
        plan_arithmetic(p.spec.points.len(), names.len(), p.spec.repetitions, &plan)
    );
    if let Some(u) = &p.spec.until_decided {
        println!(
            "then until decided: undecided comparison rows get more repetitions, in looks \
             of an alpha-spending schedule, up to {} per point and variant",
            u.cap
        );
    }
    if let Some(a) = &p.spec.adaptive {
        println!(
            "then adaptive rounds: up to {} repetitions per point and variant, until the \
             median's 95% CI is within ±{}%",
            a.max_reps,
            adaptive::fmt_pct(a.target_ci_pct)
        );
    }
    if let Some(timed) = timed {
        println!("at least {timed:.0} s of timed measurement, plus warm-ups and set-up");
    }
    for m in plan.iter().take(20) {
        // Telemetry repetitions are numbered apart (from 0), so say which kind a line is.
        let kind = match m.role {
            perflab_core::record::Role::Headline => "",
            perflab_core::record::Role::Telemetry => " telemetry",
        };
        println!(
            "  #{:<4} [{}] rep {}{kind}  {}",
            m.seq,
            m.variant,
            m.rep,
            m.params.describe()
        );
    }
    if plan.len() > 20 {
        println!("  … {} more", plan.len() - 20);
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
    plan: &[perflab_store::PlannedMeasurement],
) -> String {
    let telemetry = plan
        .iter()
        .filter(|m| m.role == perflab_core::record::Role::Telemetry)
        .count();
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

#[cfg(test)]
mod tests {
    use super::split_settings;

    #[test]
    fn settings_split_only_where_a_known_name_follows() {
        let known = |k: &str| ["cmd", "env", "before", "cpuidle"].contains(&k);
        assert_eq!(
            split_settings("cmd=make; ./bench {size};env=HUGE=1", known),
            ["cmd=make; ./bench {size}", "env=HUGE=1"]
        );
        assert_eq!(
            split_settings("before=modprobe -r x; modprobe x;cpuidle=poll-only;", known),
            ["before=modprobe -r x; modprobe x", "cpuidle=poll-only"]
        );
        // An unknown name does not split: the error then names the first setting.
        assert_eq!(split_settings("bogus=1;cmd=x", known), ["bogus=1", "cmd=x"]);
        assert_eq!(split_settings("cmd=a;bogus=1", known), ["cmd=a;bogus=1"]);
        assert_eq!(split_settings("", known), Vec::<&str>::new());
    }
}
