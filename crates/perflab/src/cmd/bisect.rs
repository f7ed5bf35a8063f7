//! `perflab bisect`: which commit moved a figure. The commits from `--good` to `--bad` are
//! bisected with perflab's verdict as the oracle ([`perflab_bisect`]): each tested commit
//! is built once in a worktree of perflab's own, measured by the study interleaved with the
//! good and the bad end until decided, and stored as runs (see [`super::bisect_oracle`]).
//! Everything the user can get wrong — the repository, the revisions, the study, a build
//! that fails at an end — is refused before anything is stored.

pub mod resume;

use std::time::Instant;

use perflab_bisect::search::Settings;
use perflab_bisect::{bisect, Bisection};
use perflab_stats::decide::sequential::Schedule;

use crate::cli::Global;
use crate::cli_bisect::BisectArgs;
use crate::cmd::bisect_git::{default_cache, Builds, Built, Repo};
use crate::cmd::bisect_key::hex;
use crate::cmd::bisect_oracle::StoreOracle;
use crate::cmd::bisect_report::{render, Report, TestedCommit};
use crate::cmd::common;
use crate::exit::input;

pub fn run(g: &Global, mut a: BisectArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    common::check_db(g)?;
    // A study file by its absolute path: the runs, the key and a resume from another
    // directory (`run --resume`) all find the same file; the report shows it as given.
    let shown = a.study.clone();
    if let Ok(abs) = std::path::absolute(&a.study) {
        if abs.is_file() {
            a.study = abs.to_string_lossy().into_owned();
        }
    }
    let repo = Repo::open(&a.repo)?;
    let good = repo.commit("good", &a.good)?;
    let bad = repo.commit("bad", &a.bad)?;
    let commits = repo.range(&good, &bad)?;
    let point = check_study(g, &a)?;
    let (mut builds, key) = builds_and_key(&a, &repo, &commits, point)?;
    // After the checks, before anything is measured: what `run --resume` of one of its
    // runs needs to resume the whole bisection.
    resume::save(
        &a,
        &repo.top,
        (&commits[0], &commits[commits.len() - 1]),
        point,
        &cache_base(&a, &repo)?,
        &builds.cache,
        &key,
    )?;
    // Ctrl-C reaches the run in progress too (one process group): it stops itself,
    // resumably, and the bisection starts nothing more.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _signals = perflab_knobs::signals::install(stop.clone())?;
    // The ends must build: a bisection with an end that does not has nothing to compare.
    for (flag, sha) in [("good", &good), ("bad", &bad)] {
        if let Built::Failed(why) = builds.get(sha)? {
            return Err(input(format!("--{flag} {}: {why}", &sha[..12])));
        }
    }
    let mut oracle = StoreOracle {
        global: g,
        study: a.study.clone(),
        metric: a.metric.clone(),
        metric_seen: None,
        point,
        key,
        commits: &commits,
        builds,
        better: None,
        runs_started: 0,
        measured_now: 0,
        quiet: false,
        interrupted: false,
        stop: stop.clone(),
    };
    let bisection = settings(&mut oracle, 2, a.max_rounds as usize).and_then(|settings| {
        bisect(commits.len(), &mut oracle, &settings).map_err(|e| {
            anyhow::anyhow!(
                "bisect: {e} (what was measured is stored; the same command resumes it)"
            )
        })
    });
    let b = match bisection {
        Ok(b) => b,
        // Ctrl-C reached the run it had started: stop as a run does, resumable.
        Err(_) if oracle.interrupted => {
            eprintln!(
                "perflab: bisect: {}",
                crate::cmd::bisect_oracle::INTERRUPTED
            );
            return Ok(crate::exit::INTERRUPTED);
        }
        Err(e) => return Err(e),
    };
    let mut report = make_report(&a, &repo, &oracle, b, started);
    report.study = shown;
    crate::stdout_guard::print(render(&report, a.format))?;
    Ok(0)
}

/// The builds, kept per build command under the cache (another command builds another
/// thing; absolute, as git and the build run in other directories), and the bisection's
/// key: what a rerun of the same bisection finds its runs by.
fn builds_and_key<'a>(
    a: &BisectArgs,
    repo: &'a Repo,
    commits: &[String],
    point: u32,
) -> anyhow::Result<(Builds<'a>, String)> {
    let cache = cache_base(a, repo)?.join(&hex(&[&a.build])[..12]);
    let key = hex(&[
        &repo.top.to_string_lossy(),
        &commits[0],
        &commits[commits.len() - 1],
        &a.build,
        &a.study,
        a.metric.as_deref().unwrap_or(""),
        &point.to_string(),
    ]);
    let builds = Builds {
        repo,
        cache,
        cmd: a.build.clone(),
        built: 0,
    };
    Ok((builds, key))
}

/// The cache directory, absolute, before the build command's subdirectory.
fn cache_base(a: &BisectArgs, repo: &Repo) -> anyhow::Result<std::path::PathBuf> {
    Ok(std::path::absolute(
        a.cache.clone().unwrap_or_else(|| default_cache(repo)),
    )?)
}

fn make_report(
    a: &BisectArgs,
    repo: &Repo,
    oracle: &StoreOracle<'_>,
    b: Bisection,
    started: Instant,
) -> Report {
    let commits = oracle.commits;
    Report {
        repo: repo.top.display().to_string(),
        study: a.study.clone(),
        metric: oracle
            .metric_seen
            .clone()
            .or(a.metric.clone())
            .unwrap_or_default(),
        point: oracle.point,
        commits: commits.len(),
        good: commits[0].clone(),
        bad: commits[commits.len() - 1].clone(),
        tested: b
            .steps
            .iter()
            .map(|s| TestedCommit {
                sha: commits[s.commit].clone(),
                subject: repo.subject(&commits[s.commit]),
                step: s.clone(),
            })
            .collect(),
        first_bad: first_bad(&b, commits, repo),
        bisection: b,
        builds_run: oracle.builds.built,
        runs_started: oracle.runs_started,
        measured_now: oracle.measured_now,
        label: oracle.label(None).trim_end_matches(" ends").to_string(),
        elapsed_s: started.elapsed().as_secs_f64(),
        shas: commits.to_vec(),
    }
}

/// The first bad commit's hash and subject, when one was named.
fn first_bad(b: &Bisection, commits: &[String], repo: &Repo) -> Option<(String, String)> {
    match b.outcome {
        perflab_bisect::Outcome::FirstBad { commit, .. } => {
            Some((commits[commit].clone(), repo.subject(&commits[commit])))
        }
        _ => None,
    }
}

/// The bisection's settings; the metric's direction comes from the ends' first rounds
/// (measured now, and found again by the search's first question).
fn settings(oracle: &mut StoreOracle<'_>, planned: usize, cap: usize) -> anyhow::Result<Settings> {
    let defaults = Settings::default();
    let ends = Schedule::new(defaults.ends.planned, defaults.ends.cap);
    use perflab_bisect::Oracle;
    oracle
        .rounds(None, ends.planned)
        .map_err(|e| anyhow::anyhow!("bisect: the ends: {e}"))?;
    let better = oracle.better.unwrap_or(perflab_core::Better::Lower);
    Ok(Settings {
        better,
        ends,
        commit: Schedule::new(planned, cap),
        ..defaults
    })
}

/// Checks the study with the three variants (`run --dry-run`), before anything is built or
/// stored; returns the point bisected.
fn check_study(g: &Global, a: &BisectArgs) -> anyhow::Result<u32> {
    let exe = std::env::current_exe()?;
    let mut cmd = std::process::Command::new(exe);
    if let Some(s) = &g.sysroot {
        cmd.arg("--sysroot").arg(s);
    }
    cmd.args([
        "run",
        &a.study,
        "--dry-run",
        "--format",
        "json",
        "--monitors",
        "none",
    ]);
    for v in ["good", "commit", "bad"] {
        cmd.arg("--variant")
            .arg(format!("{v}:args=build=/nonexistent"));
    }
    let out = cmd.stdin(std::process::Stdio::null()).output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(input(format!(
            "study {}: {}",
            a.study,
            line.trim()
                .trim_start_matches("perflab: ")
                .trim_start_matches("error: ")
        )));
    }
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| anyhow::anyhow!("study {}: its plan does not read: {e}", a.study))?;
    let spec = &doc["spec"];
    let points = spec["points"].as_array().map_or(0, Vec::len) as u32;
    let point = match a.point {
        Some(p) if p < points => p,
        Some(p) => {
            return Err(input(format!(
                "--point {p}: study {} has {points} point(s), numbered from 0",
                a.study
            )))
        }
        None if points == 1 => 0,
        None => {
            return Err(input(format!(
                "study {} has {points} points: name the one to bisect with --point (0 to {})",
                a.study,
                points.saturating_sub(1)
            )))
        }
    };
    Ok(point)
}
