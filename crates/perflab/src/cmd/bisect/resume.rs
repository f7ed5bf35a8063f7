//! `perflab run --resume RUN` where RUN is one of a bisection's runs: the whole bisection
//! is resumed, not that run alone. A bisection leaves its arguments (the ends as full
//! hashes, so a branch that moved since does not change them) in its build cache, as
//! `bisect-KEY.json` beside the worktrees; every run it stores names a worktree there in
//! its variants' `args=build=DIR`, so the run leads to the file, on any store.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use perflab_core::record::RunInfo;

use crate::cli::{Global, RunFormat};
use crate::cli_bisect::BisectArgs;
use crate::exit::input;

/// Set on the `perflab run` children of a bisection: their `--resume` is of the run alone
/// (the bisection is the parent).
pub const CHILD_ENV: &str = "PERFLAB_BISECT_CHILD";

/// What `perflab bisect` was given, as a resume needs it.
#[derive(Serialize, Deserialize)]
struct Saved {
    study: String,
    repo: PathBuf,
    good: String,
    bad: String,
    build: String,
    metric: Option<String>,
    point: u32,
    cache: PathBuf,
    max_rounds: u32,
}

fn file(builds_dir: &Path, key: &str) -> PathBuf {
    builds_dir.join(format!("bisect-{}.json", &key[..12]))
}

/// Writes the bisection's arguments beside its builds (`a.study` made absolute when it is a
/// file; `cache` is the cache directory as given, absolute, before the build command's
/// subdirectory).
pub fn save(
    a: &BisectArgs,
    repo: &Path,
    ends: (&str, &str),
    point: u32,
    cache: &Path,
    builds_dir: &Path,
    key: &str,
) -> anyhow::Result<()> {
    let saved = Saved {
        study: a.study.clone(),
        repo: repo.to_path_buf(),
        good: ends.0.to_string(),
        bad: ends.1.to_string(),
        build: a.build.clone(),
        metric: a.metric.clone(),
        point,
        cache: cache.to_path_buf(),
        max_rounds: a.max_rounds,
    };
    std::fs::create_dir_all(builds_dir)?;
    let path = file(builds_dir, key);
    std::fs::write(&path, serde_json::to_vec_pretty(&saved)?)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The bisection's key when `info` is one of its runs (labelled `bisect KEY …`), unless
/// this process is itself a bisection's child.
pub fn key_of(info: &RunInfo) -> Option<String> {
    if std::env::var_os(CHILD_ENV).is_some() {
        return None;
    }
    let mut words = info.label.as_deref()?.split(' ');
    (words.next() == Some("bisect")).then_some(())?;
    let key = words.next()?;
    (key.len() == 12 && key.chars().all(|c| c.is_ascii_hexdigit())).then(|| key.to_string())
}

/// Resumes the bisection run `info` belongs to (its key: [`key_of`]).
pub fn resume(g: &Global, info: &RunInfo, key: &str, format: RunFormat) -> anyhow::Result<i32> {
    let builds_dir = info
        .spec
        .variants
        .iter()
        .filter_map(|v| v.params.get("args"))
        .find_map(|a| a.text().strip_prefix("build=").map(PathBuf::from))
        .and_then(|dir| dir.parent().map(Path::to_path_buf))
        .ok_or_else(|| {
            input(format!(
                "run {} is labelled as a bisection's but names no build: run the `perflab \
                 bisect` command again",
                info.id
            ))
        })?;
    let path = file(&builds_dir, key);
    let text = std::fs::read(&path).map_err(|e| {
        input(format!(
            "run {} belongs to bisection {key}, whose arguments ({}) cannot be read ({e}): \
             run the `perflab bisect` command again",
            info.id,
            path.display()
        ))
    })?;
    let s: Saved =
        serde_json::from_slice(&text).map_err(|e| input(format!("{}: {e}", path.display())))?;
    eprintln!(
        "perflab: run {} is one of bisection {key}'s: resuming the bisection ({} from {} to {})",
        info.id,
        s.repo.display(),
        &s.good[..s.good.len().min(12)],
        &s.bad[..s.bad.len().min(12)]
    );
    // `perflab bisect` itself takes over this process: what it prints is a bisect's
    // (its JSON's `command` included), and Ctrl-C stops it as it stops a bisect.
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    for (flag, value) in [
        ("--db", &g.db),
        ("--journal", &g.journal),
        ("--sysroot", &g.sysroot),
    ] {
        if let Some(v) = value {
            cmd.arg(flag).arg(v);
        }
    }
    cmd.arg("bisect")
        .arg("--repo")
        .arg(&s.repo)
        .args(["--good", &s.good, "--bad", &s.bad, "--build", &s.build])
        .arg("--cache")
        .arg(&s.cache)
        .args(["--point", &s.point.to_string()])
        .args(["--max-rounds", &s.max_rounds.to_string()]);
    if let Some(m) = &s.metric {
        cmd.args(["--metric", m]);
    }
    let format = match format {
        RunFormat::Json => "json",
        RunFormat::Text => "text",
    };
    cmd.args(["--format", format, "--", &s.study]);
    let err = std::os::unix::process::CommandExt::exec(&mut cmd);
    Err(anyhow::anyhow!("perflab bisect: {err}"))
}
