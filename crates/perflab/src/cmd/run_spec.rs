//! The experiment `perflab run` flags describe: a study or a bare workload, with the
//! flags' overrides, chosen variants and adaptive settings applied, checked.

use std::collections::BTreeMap;

use perflab_core::{ParamRole, ParamRoles};
use perflab_lab::spec::{ParamInput, PartnersSpec, Scalar, VariantSpec};
use perflab_lab::{adaptive, presets, ExperimentSpec};

use crate::cli::RunArgs;
use crate::exit::input;

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
    let mut spec = base_spec(a)?;
    // Quick settings first, so that flags given with --quick still win.
    if a.quick {
        spec.make_quick();
    }
    for p in &a.params {
        param_flag(&mut spec, p)?;
    }
    shortcut_flags(a, &mut spec)?;
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
    if let Some(q) = &a.quiet_machine {
        spec.quiet_machine = Some(q.clone());
    }
    if let Some(p) = disturbed_above(a)? {
        spec.disturbed_above = Some(p);
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

/// `--disturbed-above`, else `$PERFLAB_DISTURBED_ABOVE` (a shared machine's scripts, or a
/// test suite on a CI machine that other builds keep busy), else the study's own.
fn disturbed_above(a: &RunArgs) -> anyhow::Result<Option<f64>> {
    if a.disturbed_above.is_some() {
        return Ok(a.disturbed_above);
    }
    match std::env::var("PERFLAB_DISTURBED_ABOVE") {
        Ok(t) => t.trim().parse().map(Some).map_err(|_| {
            input(format!(
                "PERFLAB_DISTURBED_ABOVE={t:?}: expected a percentage, e.g. 10"
            ))
        }),
        Err(_) => Ok(None),
    }
}

/// The named study, or a bare workload with three repetitions and nothing else set.
fn base_spec(a: &RunArgs) -> anyhow::Result<ExperimentSpec> {
    Ok(match (&a.study, &a.workload) {
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
            quiet_machine: None,
            disturbed_above: None,
        },
        (None, None) => {
            return Err(input(
                "name a study (`perflab list` shows them) or a workload with --workload",
            ))
        }
    })
}

/// One `--param NAME=VALUE`: a comma list is an axis, except for free-text parameters.
fn param_flag(spec: &mut ExperimentSpec, p: &str) -> anyhow::Result<()> {
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
                        | perflab_core::ParamKind::Env { .. }
                )
        })
    });
    let value = if is_text {
        ParamInput::One(Scalar::Str(v.to_string()))
    } else {
        one_or_list(v)
    };
    spec.params.insert(k, value);
    Ok(())
}

/// `a,b` as a list of values, anything else as one value, trimmed.
fn one_or_list(v: &str) -> ParamInput {
    if v.contains(',') {
        ParamInput::List(
            v.split(',')
                .map(|s| Scalar::Str(s.trim().to_string()))
                .collect(),
        )
    } else {
        ParamInput::One(Scalar::Str(v.trim().to_string()))
    }
}

/// `--duration`, `--size`, `--anchor` and `--partners`: the parameters they stand for
/// (the workload's parameters with the role of the size axis, CPU A and CPU B).
fn shortcut_flags(a: &RunArgs, spec: &mut ExperimentSpec) -> anyhow::Result<()> {
    if let Some(d) = &a.duration {
        spec.params
            .insert("duration".into(), ParamInput::One(Scalar::Str(d.clone())));
    }
    if let Some(size) = &a.size {
        let name = param_with_role(spec, ParamRole::SizeAxis, "--size")?;
        spec.params.insert(name, one_or_list(size));
    }
    if let Some(cpu) = a.anchor {
        let name = param_with_role(spec, ParamRole::CpuA, "--anchor")?;
        spec.params
            .insert(name, ParamInput::One(Scalar::Int(cpu as i64)));
    }
    if let Some(p) = &a.partners {
        let name = param_with_role(spec, ParamRole::CpuB, "--partners")?;
        let anchor = param_with_role(spec, ParamRole::CpuA, "--partners")?;
        spec.params.insert(name, partners(p, anchor)?);
    }
    Ok(())
}

/// The parameter of the spec's workload that has `role`, which `flag` sets; an input
/// error for a workload without one.
fn param_with_role(spec: &ExperimentSpec, role: ParamRole, flag: &str) -> anyhow::Result<String> {
    let roles = perflab_workloads::by_name(&spec.workload)
        .map(|w| ParamRoles::from_specs(w.info().params))
        .unwrap_or_default();
    let what = match role {
        ParamRole::SizeAxis => "size to scan",
        ParamRole::CpuA => "first CPU of a pair",
        _ => "second CPU of a pair",
    };
    roles.name_of(role).map(str::to_string).ok_or_else(|| {
        input(format!(
            "{flag} sets the {what}; workload {} has none",
            spec.workload
        ))
    })
}

/// `--partners per-core|all` (of the anchor CPU), or an explicit CPU list.
fn partners(p: &str, anchor: String) -> anyhow::Result<ParamInput> {
    Ok(match p {
        "per-core" | "all" => ParamInput::Partners(PartnersSpec {
            partners_of: anchor,
            mode: p.to_string(),
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
    })
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
