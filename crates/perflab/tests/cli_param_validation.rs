//! Every parameter of every built-in workload is checked when the run is planned: a bad
//! value is one line of bad input and exit 2 on `--dry-run`, before anything is stored.
//! Issue 31 item 9: netrr's `hogs=x`, `hogs=0-99999`, `peer=999.1.1.1:1`, `peer=host:`
//! and a peer without a token passed `--dry-run` and stored a run of failures.
//!
//! The bad values of typed parameters come from their kind (out of range, not a number, not
//! a choice); those of free text are listed here per workload and parameter, and a text
//! parameter with none must say why any text is fine, so a new one cannot be forgotten.

use std::path::PathBuf;

use crate::common;

use common::{text, Lab};
use perflab_core::{format_duration, ParamKind, ParamSpec};

/// Bad values of text parameters whose text means something (a CPU list, an address).
const BAD_TEXT: &[(&str, &str, &[&str])] = &[
    ("xfer", "placement", &["nowhere", "0-99999"]),
    ("exec", "cmd", &[" "]),
    ("exec", "args", &["novalue", "cmd=1"]),
    ("exec", "env", &["novalue", "1X=2"]),
    ("exec", "regex", &["(unclosed", "(a)(b)"]),
    ("exec", "json", &["jobs/0"]),
    ("exec", "parser", &["nonesuch"]),
    ("exec", "bytes", &["lots", "1M*x"]),
    ("exec", "cpus", &["x", "0-99999"]),
    ("netrr", "hogs", &["x", "0-99999"]),
    ("netrr", "peer", &["999.1.1.1:1", "host:", "bad_name:1"]),
    ("dmatest", "channel", &["dma0chan0;x"]),
    ("dmatest", "device", &["a b", "x\ty"]),
];

/// Text parameters any text of their length is right for, and why.
const FREE_TEXT: &[(&str, &str, &str)] = &[
    (
        "exec",
        "metric",
        "any name; one exec reports itself is refused with a regex",
    ),
    (
        "exec",
        "cwd",
        "placeholders expand per point, and an earlier hook may create the directory",
    ),
    ("netrr", "token", "any text is a token"),
];

/// Values that make a workload's required parameters valid.
const REQUIRED: &[(&str, &str, &str)] = &[("exec", "cmd", "true")];

/// Bad values of a typed parameter, from its kind; for text, its length limit.
fn bad_values(spec: &ParamSpec) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    match spec.kind {
        ParamKind::Int { min, max } => {
            v.push("x".into());
            v.extend(min.checked_sub(1).map(|m| m.to_string()));
            v.extend(max.checked_add(1).map(|m| m.to_string()));
        }
        ParamKind::Cpu => v.extend(["x", "-1", "65536", "4095"].map(String::from)),
        ParamKind::Float { min, max } => {
            v.extend(["x", "NaN", "inf"].map(String::from));
            if min > -1e300 {
                v.push(format!("{}", min - 1.0 - min.abs()));
            }
            if max < 1e300 {
                v.push(format!("{}", max + 1.0 + max.abs()));
            } else {
                v.push("1e308".into());
            }
        }
        ParamKind::Duration { min_s, max_s } => {
            v.extend(["x", "-1s"].map(String::from));
            v.push(format_duration(max_s * 2.0));
            if min_s > 0.0 {
                v.push(format_duration(min_s / 2.0));
            }
        }
        ParamKind::Size { min, max } => {
            v.extend(["x", "1.5G"].map(String::from));
            v.extend(max.checked_add(1).map(|m| m.to_string()));
            v.extend(min.checked_sub(1).map(|m| m.to_string()));
        }
        ParamKind::Choice(_) => v.push("no-such-choice".into()),
        ParamKind::Bool => v.push("maybe".into()),
        ParamKind::Text { max_len } | ParamKind::Secret { max_len } => {
            v.push("a".repeat(max_len + 1));
        }
        // Kinds added later (free text in another form) are covered by BAD_TEXT.
        #[allow(unreachable_patterns)]
        _ => {}
    }
    v
}

fn is_text(spec: &ParamSpec) -> bool {
    !matches!(
        spec.kind,
        ParamKind::Int { .. }
            | ParamKind::Cpu
            | ParamKind::Float { .. }
            | ParamKind::Duration { .. }
            | ParamKind::Size { .. }
            | ParamKind::Choice(_)
            | ParamKind::Bool
    )
}

/// The command line of a dry run of `workload` with `name=value`, and the environment
/// it needs (the CUDA stand-in; no token from outside).
struct Case {
    workload: &'static str,
    name: &'static str,
    value: String,
}

struct Setup {
    lab: Lab,
    dma_root: PathBuf,
}

fn setup() -> Setup {
    let lab = Lab::new();
    let dma_root = lab.fixture_copy("dmatest-4chan");
    Setup { lab, dma_root }
}

impl Setup {
    fn run(&self, c: &Case, dry: bool) -> std::process::Output {
        let mut cmd = self.lab.cmd();
        cmd.env_remove("PERFLAB_SERVE_TOKEN")
            .env("PERFLAB_LIBCUDA", perflab_testkit::cuda::standin_library());
        if c.workload == "dmatest" {
            // A machine with four DMA channels: elsewhere dmatest is refused for the
            // machine's sake before its parameters are looked at.
            cmd.arg("--sysroot").arg(&self.dma_root);
        }
        cmd.args(["run", "--workload", c.workload, "--monitors", "cpu_time"]);
        cmd.args(["--reps", "1"]);
        for (w, n, v) in REQUIRED {
            if *w == c.workload && *n != c.name {
                cmd.args(["-p", &format!("{n}={v}")]);
            }
        }
        cmd.args(["-p", &format!("{}={}", c.name, c.value)]);
        if dry {
            cmd.arg("--dry-run");
        }
        cmd.output().expect("run perflab")
    }

    /// Exit 2, one line naming the parameter or its value (never a secret's), nothing
    /// on stdout.
    fn refused(&self, c: &Case, dry: bool) -> Result<(), String> {
        let o = self.run(c, dry);
        let (out, err) = text(&o);
        let shown: String = c.value.chars().take(40).collect();
        let what = format!("{} {}={shown} (dry run: {dry})", c.workload, c.name);
        if o.status.code() != Some(2) {
            return Err(format!("{what}: exit {:?}\n{out}\n{err}", o.status.code()));
        }
        let secret = c.name == "token";
        let named = err.contains(c.name) || (!secret && err.contains(c.value.trim()));
        if err.lines().count() != 1 || !err.starts_with("perflab: ") || !named {
            return Err(format!("{what}: not one line naming it: {err}"));
        }
        if secret && err.contains(&c.value) {
            return Err(format!("{what}: the secret is printed: {err}"));
        }
        if !out.is_empty() {
            return Err(format!("{what}: stdout {out}"));
        }
        Ok(())
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for w in perflab_workloads::registry() {
        let info = w.info();
        for spec in info.params {
            let listed = BAD_TEXT
                .iter()
                .find(|(wl, n, _)| *wl == info.name && *n == spec.name);
            let free = FREE_TEXT
                .iter()
                .any(|(wl, n, _)| *wl == info.name && *n == spec.name);
            assert!(
                !is_text(spec) || listed.is_some() || free,
                "{} {}: a text parameter with no bad values listed here; add them to \
                 BAD_TEXT, or to FREE_TEXT with the reason any text is right",
                info.name,
                spec.name
            );
            let mut values = bad_values(spec);
            values.extend(
                listed
                    .into_iter()
                    .flat_map(|(_, _, b)| b.iter())
                    .map(|b| b.to_string()),
            );
            for value in values {
                cases.push(Case {
                    workload: info.name,
                    name: spec.name,
                    value,
                });
            }
        }
    }
    cases
}

#[test]
fn every_workload_parameter_is_checked_when_the_run_is_planned() {
    let setup = setup();
    let cases = cases();
    assert!(cases.len() > 150, "only {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| setup.refused(c, true).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} bad values were not refused at plan time:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // Text that means something was checked only while measuring: without --dry-run
    // too, nothing is stored.
    let late: Vec<String> = cases
        .iter()
        .filter(|c| {
            BAD_TEXT
                .iter()
                .any(|(w, n, _)| *w == c.workload && *n == c.name)
        })
        .filter_map(|c| setup.refused(c, false).err())
        .collect();
    assert!(late.is_empty(), "{}", late.join("\n"));
    let o = setup.lab.run(&["ls"]);
    assert!(
        !setup.lab.db().exists() || text(&o).0.starts_with("no runs"),
        "a run was stored: {:?}",
        text(&o)
    );
}

/// A peer needs a token (the parameter or PERFLAB_SERVE_TOKEN); without one every
/// measurement failed.
#[test]
fn a_peer_without_a_token_is_refused_when_the_run_is_planned() {
    let setup = setup();
    for dry in [true, false] {
        let c = Case {
            workload: "netrr",
            name: "peer",
            value: "10.0.0.2:7700".into(),
        };
        setup.refused(&c, dry).unwrap();
        let o = setup.run(&c, dry);
        assert!(text(&o).1.contains("needs the token"), "{:?}", text(&o));
    }
    assert!(!setup.lab.db().exists() || text(&setup.lab.run(&["ls"])).0.starts_with("no runs"));
}

/// `-p value=1e308` was refused in a 659-byte line, its bounds written as 301-digit
/// decimals (issue 31 item 12); durations take ns to d, as the help says.
#[test]
fn bounds_read_as_written_and_durations_take_every_unit() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "-p",
        "value=1e308",
        "--dry-run",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err,
        "perflab: parameter value=\"1e308\": must be between -1e300 and 1e300\n"
    );
    // The help says "at most a day": `1d` and `1ns` are durations. The duration is
    // checked first; the pair after it is bad on purpose, so nothing runs.
    for d in ["1ns", "1d"] {
        let o = lab.run(&["crosscheck", "ctxsw", "--duration", d, "--pairs", "x"]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{d}: {err}");
        assert!(
            err.contains("--pairs") && !err.contains("--duration"),
            "{d}: {err}"
        );
    }
    let o = lab.run(&["crosscheck", "ctxsw", "--duration", "2d"]);
    let (_, err) = text(&o);
    assert_eq!(
        err, "perflab: --duration 2d: must be above 0 and at most 1d\n",
        "{:?}",
        o.status
    );
}
