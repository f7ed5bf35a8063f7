//! `exec`: any benchmark command (fio, sockperf, cyclictest, `perf bench mem memcpy`, a
//! vendor's script) run as a perflab workload, so it gets perflab's parameter grids,
//! variants, repetitions, telemetry and statistics.
//!
//! One repetition runs `cmd` once through `/bin/sh -c` (see [`child`] for the process
//! group, timeout and stop handling) and takes its number from the output with a regex, a
//! JSON pointer or a built-in parser ([`extract`]). With none of those the command is
//! only timed, as hyperfine does. Every repetition also reports `wall_s`, `user_s`,
//! `sys_s` and `exit_code`.
//!
//! A repetition fails (and the runner goes on with the next) when the command exits
//! non-zero, is killed, times out, or its number cannot be extracted; the error carries
//! the end of its stderr and stdout so the reason is visible in the report.

mod capture;
mod child;
mod env_secret;
mod extract;
mod template;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use perflab_core::{
    format_size, Better, MeasureCtx, Metric, Needs, ParamError, ParamKind, ParamSpec, Params, Unit,
    Workload, WorkloadError, WorkloadInfo, WorkloadOutput,
};
use perflab_core::{Kind, ReportHints, WorkloadHints};

use capture::Captured;
use child::{Ending, Finished, Launch};
use extract::{Extraction, MetricSpec};

/// The exec workload.
#[derive(Debug, Default)]
pub struct Exec;

/// `unit` choices: perflab_core::Unit's serde names.
const UNITS: &[&str] = &[
    "count",
    "per_second",
    "nanoseconds",
    "microseconds",
    "milliseconds",
    "seconds",
    "bytes",
    "bytes_per_second",
    "mib_per_second",
    "percent",
    "ratio",
];

const BETTER: &[&str] = &["higher", "lower", "neither"];
const STREAMS: &[&str] = &["stdout", "stderr", "both"];

const fn text(max_len: usize) -> ParamKind {
    ParamKind::Text { max_len }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "cmd",
        role: perflab_core::ParamRole::Plain,
        help: "the command line, run with /bin/sh -c; {name} is replaced by the value of \
               parameter name (one of exec's or a key of args)",
        kind: text(64 << 10),
        default: None,
    },
    ParamSpec {
        name: "args",
        role: perflab_core::ParamRole::Plain,
        help: "values for cmd's placeholders, k=v;k=v (a list of these makes a grid axis)",
        kind: text(8 << 10),
        default: Some(""),
    },
    ParamSpec {
        name: "env",
        role: perflab_core::ParamRole::Plain,
        help: "environment for the command, K=V;K=V (placeholders allowed in values); a \
               value named like a secret (TOKEN, PASSWORD, SECRET, KEY, CREDENTIAL, AUTH) \
               or a URL with a password is stored and shown as its fingerprint",
        kind: ParamKind::Env { max_len: 8 << 10 },
        default: Some(""),
    },
    ParamSpec {
        name: "duration",
        role: perflab_core::ParamRole::Plain,
        help: "not used by exec itself: for cmd as {duration}, in seconds",
        kind: ParamKind::Duration {
            min_s: 0.0,
            max_s: 604_800.0,
        },
        default: Some("10s"),
    },
    ParamSpec {
        name: "regex",
        role: perflab_core::ParamRole::Plain,
        help: "take the number from the first match: group `value`, else the only group, \
               else the whole match (^ and $ match at line ends)",
        kind: text(4 << 10),
        default: Some(""),
    },
    ParamSpec {
        name: "json",
        role: perflab_core::ParamRole::Plain,
        help: "take the number at this JSON pointer (RFC 6901, e.g. /jobs/0/read/bw) of the \
               output parsed as JSON",
        kind: text(1 << 10),
        default: Some(""),
    },
    ParamSpec {
        name: "parser",
        role: perflab_core::ParamRole::Plain,
        help: "read the output with this built-in parser and report all its metrics",
        kind: text(64),
        default: Some(""),
    },
    ParamSpec {
        name: "from",
        role: perflab_core::ParamRole::Plain,
        help: "the output that regex, json or parser read (both: stdout then stderr)",
        kind: ParamKind::Choice(STREAMS),
        default: Some("stdout"),
    },
    ParamSpec {
        name: "metric",
        role: perflab_core::ParamRole::Plain,
        help: "name of the extracted metric (default value); with parser, the parser's \
               metric to list first (default its first)",
        kind: text(128),
        default: Some(""),
    },
    ParamSpec {
        name: "unit",
        role: perflab_core::ParamRole::Plain,
        help: "unit of the regex or json metric",
        kind: ParamKind::Choice(UNITS),
        default: Some("count"),
    },
    ParamSpec {
        name: "better",
        role: perflab_core::ParamRole::Plain,
        help: "which direction of the regex or json metric is an improvement",
        kind: ParamKind::Choice(BETTER),
        default: Some("higher"),
    },
    ParamSpec {
        name: "timeout",
        role: perflab_core::ParamRole::Plain,
        help: "the repetition fails if the command runs longer (its process group is killed)",
        kind: ParamKind::Duration {
            min_s: 0.001,
            max_s: 604_800.0,
        },
        default: Some("60s"),
    },
    ParamSpec {
        name: "max_output",
        role: perflab_core::ParamRole::Plain,
        help: "bytes of stdout and of stderr kept (the rest is read and dropped)",
        kind: ParamKind::Size {
            min: 0,
            max: 1 << 30,
        },
        default: Some("16M"),
    },
    ParamSpec {
        name: "cwd",
        role: perflab_core::ParamRole::Plain,
        help: "working directory of the command, placeholders allowed (empty: perflab's)",
        kind: text(4 << 10),
        default: Some(""),
    },
    ParamSpec {
        name: "bytes",
        role: perflab_core::ParamRole::Plain,
        help: "bytes the command moves per repetition, placeholders allowed: a size or a \
               product of sizes such as {size}*{loops}. Reported as metric bytes; with a \
               counters monitor, miss counts are also shown per byte moved",
        kind: text(256),
        default: Some(""),
    },
    ParamSpec {
        name: "cpus",
        role: perflab_core::ParamRole::Cpu,
        help: "CPU list the command is pinned to, e.g. 2 or 0-3,8 (empty: not pinned)",
        kind: text(4 << 10),
        default: Some(""),
    },
];

static INFO: WorkloadInfo = WorkloadInfo {
    kind: Kind::Workload,
    name: "exec",
    help: "Any benchmark command run through /bin/sh -c, its number taken with regex, json \
           or parser.\n\
           cmd placeholders: {name} takes the value of exec's parameter name (e.g. \
           {duration}, in seconds) or of key name in args (args = \"size=4K;jobs=2\"); \
           other braces ({print $2}, ${HOME}) are left alone, and {{name}} writes {name}.\n\
           env (\"HUGE=1;X=y\") adds to the command's environment, typically per variant.\n\
           A non-zero exit, a kill, a timeout or a failed extraction fails the repetition, \
           with the end of the command's output in the error. Each repetition also \
           reports wall_s, user_s, sys_s and exit_code.",
    params: PARAMS,
    needs: Needs::NONE,
    report: ReportHints::Workload(WorkloadHints {
        primary_metric: "value",
        result_title: None,
        latency_table: None,
        workers: perflab_core::note::Workers::Threads,
    }),
};

fn failed(msg: impl Into<String>) -> WorkloadError {
    WorkloadError::Failed(format!("exec: {}", msg.into()))
}

impl Workload for Exec {
    fn info(&self) -> &'static WorkloadInfo {
        &INFO
    }

    fn cpus(&self, params: &Params) -> Result<Vec<u32>, ParamError> {
        // A malformed list is refused by validate(); here it pins nothing.
        Ok(perflab_sys::parse_cpu_list(params.str("cpus")?).unwrap_or_default())
    }

    /// Everything a repetition reads from the parameters, checked with the plan: a
    /// malformed `args`, `env`, `bytes` or `cpus`, an empty `cmd`, a regex that does not
    /// compile or an unknown parser is one line of bad input, not a run of failures.
    fn validate(&self, params: &Params) -> Result<(), String> {
        let prepared = prepare(params).map_err(|e| e.to_string())?;
        prepared.how.check().map_err(|e| format!("exec: {e}"))
    }

    fn run(&self, params: &Params, ctx: &MeasureCtx) -> Result<WorkloadOutput, WorkloadError> {
        let prepared = prepare(params)?;
        if ctx.stopping() {
            return Err(WorkloadError::Interrupted);
        }
        let done = child::run(&prepared.launch, ctx).map_err(failed)?;
        ctx.threads.add(done.record.clone());
        match done.ending {
            Ending::Stopped => return Err(WorkloadError::Interrupted),
            Ending::TimedOut => {
                return Err(failed(format!(
                    "`{}` timed out after {} s{}",
                    prepared.launch.script,
                    prepared.launch.timeout.as_secs_f64(),
                    tails(&done)
                )))
            }
            Ending::Exited => {}
        }
        if !done.status.success() {
            return Err(failed(format!(
                "`{}` {}{}",
                prepared.launch.script,
                describe_status(done.status),
                tails(&done)
            )));
        }
        output(&prepared, &done)
    }
}

/// Everything a repetition needs, checked before anything runs.
#[derive(Debug)]
struct Prepared {
    launch: Launch,
    how: Extraction,
    metric: MetricSpec,
    from: String,
    /// What the command moves per repetition, when the user said.
    bytes: Option<u64>,
    notes: Vec<String>,
}

/// Reads and checks what a repetition needs. A parameter the code misspells is its
/// `WorkloadError::Param`; a value the command cannot run with fails as `exec: …`.
fn prepare(params: &Params) -> Result<Prepared, WorkloadError> {
    let given = Given::read(params)?;
    prepare_from(params, &given).map_err(failed)
}

/// exec's parameters as given, read once.
struct Given<'a> {
    args: &'a str,
    cmd: &'a str,
    env: &'a str,
    cwd: &'a str,
    bytes: &'a str,
    cpus: &'a str,
    regex: &'a str,
    json: &'a str,
    parser: &'a str,
    metric: &'a str,
    unit: &'a str,
    better: &'a str,
    from: &'a str,
    timeout_s: f64,
    max_output: i64,
}

impl<'a> Given<'a> {
    fn read(params: &'a Params) -> Result<Self, ParamError> {
        Ok(Self {
            args: params.str("args")?,
            cmd: params.str("cmd")?,
            env: params.str("env")?,
            cwd: params.str("cwd")?,
            bytes: params.str("bytes")?,
            cpus: params.str("cpus")?,
            regex: params.str("regex")?,
            json: params.str("json")?,
            parser: params.str("parser")?,
            metric: params.str("metric")?,
            unit: params.str("unit")?,
            better: params.str("better")?,
            from: params.str("from")?,
            timeout_s: params.seconds("timeout")?,
            max_output: params.int("max_output")?,
        })
    }
}

fn prepare_from(params: &Params, p: &Given) -> Result<Prepared, String> {
    let values = template_values(params, p)?;
    let mut notes = Vec::new();
    let mut expand = |what: &str, text: &str| {
        let e = template::expand(text, &values);
        if !e.unknown.is_empty() {
            notes.push(format!(
                "{what}: {} named no parameter and were left as written",
                e.unknown
                    .iter()
                    .map(|u| format!("{{{u}}}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        e.text
    };
    let script = expand("cmd", p.cmd);
    if script.trim().is_empty() {
        return Err("cmd is empty".into());
    }
    let mut env = Vec::new();
    for (k, v) in template::parse_pairs("env", p.env)? {
        let v = env_secret::value(&k, &v, |n| std::env::var(n).ok())?;
        let v = expand(&format!("env {k}"), &v);
        env.push((k, v));
    }
    let cwd = match p.cwd {
        "" => None,
        dir => Some(PathBuf::from(expand("cwd", dir))),
    };
    let bytes = match p.bytes.trim() {
        "" => None,
        b => Some(product_of_sizes(&expand("bytes", b))?),
    };
    let cpus = perflab_sys::parse_cpu_list(p.cpus)
        .map_err(|e| format!("cpus {:?}: {}", p.cpus, e.reason))?;
    let how = Extraction::from_params(p.regex, p.json, p.parser)?;
    let metric = metric_spec(p, &how)?;
    Ok(Prepared {
        launch: Launch {
            script,
            env,
            cwd,
            cpus,
            timeout: Duration::from_secs_f64(p.timeout_s.max(0.001)),
            max_output: p.max_output.clamp(0, 1 << 30) as usize,
        },
        how,
        metric,
        from: p.from.to_string(),
        bytes,
        notes,
    })
}

/// What `{name}` placeholders expand to: the parameters, and the `args` pairs, which
/// may not shadow one of exec's own parameters.
fn template_values(params: &Params, p: &Given) -> Result<BTreeMap<String, String>, String> {
    let args = template::parse_pairs("args", p.args)?;
    let mut values: BTreeMap<String, String> = params
        .0
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    for (k, v) in args {
        if PARAMS.iter().any(|p| p.name == k) {
            return Err(format!(
                "args: {k} is one of exec's own parameters; set it directly"
            ));
        }
        values.insert(k, v);
    }
    Ok(values)
}

/// The metric a regex or JSON extraction reports, under a name exec does not use itself.
fn metric_spec(p: &Given, how: &Extraction) -> Result<MetricSpec, String> {
    let metric = MetricSpec {
        name: p.metric.trim().to_string(),
        unit: unit(p.unit)?,
        better: better(p.better)?,
    };
    if matches!(how, Extraction::Regex(_) | Extraction::Json(_))
        && OWN_METRICS.contains(&metric.name.as_str())
    {
        return Err(format!(
            "metric {:?} is one exec reports itself; choose another name",
            metric.name
        ));
    }
    Ok(metric)
}

/// `64M*20` → 1342177280: perf-style sizes (`1MB`) allowed, since the factors usually come
/// from the same placeholders as the command's own arguments.
fn product_of_sizes(text: &str) -> Result<u64, String> {
    text.split('*').try_fold(1u64, |acc, factor| {
        let f = perflab_core::parse_size(factor).map_err(|e| format!("bytes {text:?}: {e}"))?;
        acc.checked_mul(f)
            .ok_or_else(|| format!("bytes {text:?} does not fit in 64 bits"))
    })
}

/// Metrics every successful repetition reports.
const OWN_METRICS: &[&str] = &["wall_s", "user_s", "sys_s", "exit_code"];

fn unit(name: &str) -> Result<Unit, String> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|_| format!("unit {name:?} is not one of {}", UNITS.join(", ")))
}

fn better(name: &str) -> Result<Better, String> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|_| format!("better {name:?} is not one of {}", BETTER.join(", ")))
}

fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!(
            "was killed by signal {sig} ({})",
            nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str())
                .unwrap_or("unknown")
        ),
        _ => format!("ended with {s}"),
    }
}

/// How much of each stream's end an error shows.
const TAIL_SHOWN: usize = 1024;

/// The ends of both streams, for an error message.
fn tails(done: &Finished) -> String {
    let mut out = String::new();
    for (name, c) in [("stderr", &done.stderr), ("stdout", &done.stdout)] {
        if c.total == 0 {
            continue;
        }
        let shown = TAIL_SHOWN.min(c.tail.len());
        let which = if (shown as u64) < c.total {
            format!("last {shown} of {} bytes", c.total)
        } else {
            format!("{} bytes", c.total)
        };
        out.push_str(&format!(
            "\n--- {name} ({which}) ---\n{}",
            c.tail_text(TAIL_SHOWN).trim_end()
        ));
    }
    if out.is_empty() {
        out.push_str(" (no output)");
    }
    out
}

fn truncation_note(name: &str, c: &Captured) -> Option<String> {
    c.truncated().then(|| {
        format!(
            "{name} was {} bytes; only the first {} were kept (max_output)",
            c.total,
            format_size(c.head.len() as u64)
        )
    })
}

fn output(p: &Prepared, done: &Finished) -> Result<WorkloadOutput, WorkloadError> {
    let text = match p.from.as_str() {
        "stderr" => done.stderr.text(),
        "both" => done.stdout.text() + &done.stderr.text(),
        _ => done.stdout.text(),
    };
    let found = extract::extract(&p.how, &text, &p.from, &p.metric).map_err(|e| {
        let cut = [("stdout", &done.stdout), ("stderr", &done.stderr)]
            .into_iter()
            .filter(|(name, _)| p.from == *name || p.from == "both")
            .filter_map(|(name, c)| truncation_note(name, c))
            .collect::<Vec<_>>();
        let cut = if cut.is_empty() {
            String::new()
        } else {
            format!(
                " [{}; raise max_output if the number comes later]",
                cut.join("; ")
            )
        };
        failed(format!("`{}`: {e}{cut}{}", p.launch.script, tails(done)))
    })?;

    let mut metrics = found.metrics;
    let mut notes = p.notes.clone();
    notes.extend(found.notes);
    notes.extend(done.notes.iter().cloned());
    notes.extend(truncation_note("stdout", &done.stdout));
    notes.extend(truncation_note("stderr", &done.stderr));
    let own = [
        Metric::new(
            "wall_s",
            done.wall.as_secs_f64(),
            Unit::Seconds,
            Better::Lower,
        ),
        Metric::new("user_s", done.user_s, Unit::Seconds, Better::Neither),
        Metric::new("sys_s", done.sys_s, Unit::Seconds, Better::Neither),
        Metric::new(
            "exit_code",
            done.status.code().unwrap_or(-1) as f64,
            Unit::Count,
            Better::Neither,
        ),
    ]
    .into_iter()
    .chain(
        p.bytes
            .map(|b| Metric::new("bytes", b as f64, Unit::Bytes, Better::Neither)),
    );
    for m in own {
        if metrics.iter().any(|x| x.name == m.name) {
            notes.push(format!(
                "the parser reported its own {}; exec's is left out",
                m.name
            ));
        } else {
            metrics.push(m);
        }
    }
    Ok(WorkloadOutput {
        metrics,
        histograms: found.histograms,
        threads: Vec::new(),
        notes,
    })
}

#[cfg(test)]
mod tests;
