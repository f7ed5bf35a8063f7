//! `perflab bisect`'s oracle: rounds of a commit measured by `perflab run` itself — the
//! study with three variants, `good`, `commit` and `bad`, each setting exec's `args` to
//! `build=DIR` so that `{build}` in the command line is that commit's build — interleaved
//! (good, commit, bad at every repetition), stored as runs labelled with the bisection's
//! key and the commit. Before measuring, the runs already stored under that label are read
//! back, and an interrupted one is resumed (`run --resume`): a rerun of the same bisection
//! measures nothing twice.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use perflab_bisect::retry::{self, worse, Short, Slot};
use perflab_bisect::{Measured, Oracle, OracleError, Round};
use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::Better;
use perflab_store::RunStatus;

use crate::cli::Global;
use crate::cmd::bisect_git::{Builds, Built};
use crate::cmd::bisect_key::hex;
use crate::cmd::common;
use crate::exit;

pub const INTERRUPTED: &str = "interrupted: run the same `perflab bisect` again to resume it \
                           (nothing measured is measured again)";

/// What the oracle runs, and where it reads it back.
pub struct StoreOracle<'a> {
    pub global: &'a Global,
    pub study: String,
    /// `--metric`; `None` reads the study's primary (first) metric.
    pub metric: Option<String>,
    /// The metric's name as measured.
    pub metric_seen: Option<String>,
    pub point: u32,
    /// The bisection's key: labels and uids derive from it.
    pub key: String,
    pub commits: &'a [String],
    pub builds: Builds<'a>,
    /// The metric's better direction, from the first measurement read.
    pub better: Option<Better>,
    /// Runs started by this process, and measurements they took.
    pub runs_started: usize,
    pub measured_now: usize,
    /// Progress lines go to standard error.
    pub quiet: bool,
    /// A `perflab run` it started was interrupted (Ctrl-C, SIGTERM): the bisection stops
    /// with exit 130, to be resumed by the same command.
    pub interrupted: bool,
    /// Set by SIGINT, SIGTERM or SIGHUP (perflab's own handler): the run in progress stops
    /// itself, resumably, and no other is started.
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl StoreOracle<'_> {
    /// The label of a commit's runs (`ends` for the ends alone).
    pub fn label(&self, commit: Option<usize>) -> String {
        let tag = commit.map_or("ends".to_string(), |i| self.commits[i][..12].to_string());
        format!("bisect {} {tag}", &self.key[..12])
    }

    fn build(&mut self, i: usize) -> Result<Built, OracleError> {
        let built = self.builds.get(&self.commits[i]);
        self.interrupted |= self.stop.load(std::sync::atomic::Ordering::SeqCst);
        built.map_err(|e| OracleError(format!("{e:#}")))
    }

    /// `perflab run` as a child, with this process's database, journal and sysroot.
    fn perflab(&mut self, args: &[String]) -> Result<(), OracleError> {
        if self.stop.load(std::sync::atomic::Ordering::SeqCst) {
            self.interrupted = true;
            return Err(OracleError(INTERRUPTED.into()));
        }
        let exe = std::env::current_exe().map_err(|e| OracleError(format!("perflab: {e}")))?;
        let mut cmd = Command::new(exe);
        let g = self.global;
        for (flag, value) in [
            ("--db", &g.db),
            ("--journal", &g.journal),
            ("--sysroot", &g.sysroot),
        ] {
            if let Some(v) = value {
                cmd.arg(flag).arg(v);
            }
        }
        let out = cmd
            .args(args)
            // Its `run --resume` is of that run alone, not of this bisection.
            .env(crate::cmd::bisect::resume::CHILD_ENV, "1")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| OracleError(format!("perflab run: {e}")))?;
        match out.status.code() {
            // The run completed, some of its measurements not counting (failed,
            // ineffective, disturbed by other work) or its own comparisons void: the
            // rounds they leave out are measured again.
            Some(
                exit::SUCCESS
                | exit::SOME_FAILED
                | exit::INEFFECTIVE
                | exit::VOID
                | exit::DISTURBED,
            ) => Ok(()),
            code => {
                self.interrupted |= matches!(code, Some(130) | None);
                let text = String::from_utf8_lossy(&out.stderr);
                let last = text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                Err(OracleError(match code {
                    Some(130) | None => INTERRUPTED.to_string(),
                    Some(c) => format!("perflab run exited {c}: {}", last.trim()),
                }))
            }
        }
    }

    /// Every round stored under `label`, run by run, and why the repetitions that gave no
    /// round gave none; resumes interrupted runs first.
    fn stored(&mut self, label: &str, with_commit: bool) -> Result<Stored, OracleError> {
        let err = |e: anyhow::Error| OracleError(format!("{e:#}"));
        let runs: Vec<perflab_core::record::RunInfo> = match common::read_store(self.global) {
            Ok(store) => store
                .runs()
                .map_err(|e| err(e.into()))?
                .into_iter()
                .filter(|r| r.label.as_deref() == Some(label))
                .collect(),
            // No database yet: nothing stored.
            Err(_) => Vec::new(),
        };
        if runs.is_empty() {
            return Ok((Vec::new(), None));
        }
        let unfinished: Vec<i64> = runs
            .iter()
            .filter(|r| r.status != RunStatus::Complete)
            .map(|r| r.id)
            .collect();
        for id in &unfinished {
            self.perflab(&["run".into(), "--resume".into(), id.to_string()])?;
        }
        let store = common::read_store(self.global).map_err(err)?;
        let (mut rounds, mut short) = (Vec::new(), None);
        for r in &runs {
            let ms = store.measurements(r.id).map_err(|e| err(e.into()))?;
            let (of_run, short_of_run) = self.rounds_of(&ms, with_commit);
            rounds.extend(of_run);
            short = worse(short, short_of_run);
        }
        Ok((rounds, short))
    }

    /// The rounds of one run: for each repetition, the metric of each variant at the point;
    /// and why the repetitions that gave no round gave none (only disturbed measurements,
    /// or a failure among them).
    fn rounds_of(&mut self, ms: &[MeasurementRecord], with_commit: bool) -> Stored {
        use std::collections::BTreeMap;
        // Per repetition, per slot (good, commit, bad): the figure, or whether other work
        // disturbed it.
        let mut by_rep: BTreeMap<u32, [Slot; 3]> = BTreeMap::new();
        for m in ms
            .iter()
            .filter(|m| m.is_headline() && m.point == self.point)
        {
            let slot = match m.variant.as_str() {
                "good" => 0,
                "commit" => 1,
                "bad" => 2,
                _ => continue,
            };
            let cell = &mut by_rep.entry(m.rep).or_default()[slot];
            if matches!(m.status, MeasurementStatus::Disturbed(_)) {
                cell.disturbed = true;
            }
            if !m.is_result() {
                continue;
            }
            // Without --metric the study's primary metric: the exec workload names it
            // only in its output (`metric = "time_us"`), so the first metric stands for it.
            let found = match &self.metric {
                Some(name) => m.output.metric(name),
                None => m.output.metrics.first(),
            };
            let Some(metric) = found else {
                continue;
            };
            self.metric_seen.get_or_insert_with(|| metric.name.clone());
            self.better.get_or_insert(metric.better);
            cell.value = Some(metric.value);
        }
        retry::rounds_of(by_rep.into_values(), with_commit)
    }

    /// The `run` command line of `reps` repetitions of these builds.
    /// With `quiet`, the run first waits (bounded) for the measured CPUs to be quiet: the
    /// last run's rounds were disturbed by other work.
    fn run_args(
        &self,
        builds: &[(&str, &Path)],
        reps: usize,
        uid: &str,
        label: &str,
        quiet: bool,
    ) -> Vec<String> {
        let mut a: Vec<String> = vec!["run".into(), self.study.clone()];
        for (name, dir) in builds {
            a.push("--variant".into());
            a.push(format!("{name}:args=build={}", dir.display()));
        }
        a.extend(
            [
                "--reps",
                &reps.to_string(),
                // The disturbance monitor alone: what took the measured CPUs is how a
                // round is known to be disturbed (`--monitors none` judges none).
                "--monitors",
                perflab_monitors::disturbance::NAME,
                "--uid",
                uid,
                "--label",
                label,
                "--format",
                "json",
            ]
            .map(String::from),
        );
        if quiet {
            a.push(format!("--quiet-machine={QUIET_WAIT}"));
        }
        a
    }

    fn end_dirs(&mut self) -> Result<(PathBuf, PathBuf), OracleError> {
        let last = self.commits.len() - 1;
        match (self.build(0)?, self.build(last)?) {
            (Built::Dir(g), Built::Dir(b)) => Ok((g, b)),
            (Built::Failed(why), _) | (_, Built::Failed(why)) => {
                Err(OracleError(format!("an end does not build: {why}")))
            }
        }
    }
}

impl Oracle for StoreOracle<'_> {
    fn rounds(&mut self, commit: Option<usize>, n: usize) -> Result<Measured, OracleError> {
        let dir = match commit {
            Some(i) => match self.build(i)? {
                Built::Dir(d) => Some(d),
                Built::Failed(why) => return Ok(Measured::Skipped(why)),
            },
            None => None,
        };
        let label = self.label(commit);
        let stored = self.stored(&label, commit.is_some())?;
        let mut last_short = stored.1;
        // A repetition whose measurement failed or was disturbed leaves no round: ask
        // again, a bounded number of times (perflab_bisect::retry).
        let got = retry::gather(n, stored, |attempt, reps| {
            let (good, bad) = self.end_dirs()?;
            let mut builds: Vec<(&str, &Path)> = vec![("good", good.as_path())];
            if let Some(d) = &dir {
                builds.push(("commit", d.as_path()));
            }
            builds.push(("bad", bad.as_path()));
            let have = n - reps;
            let uid = hex(&[
                &self.key,
                &label,
                &have.to_string(),
                &n.to_string(),
                &attempt.to_string(),
            ]);
            if !self.quiet {
                eprintln!(
                    "perflab bisect: {}: {} more round(s), {} so far{}",
                    commit.map_or("the ends".to_string(), |i| format!(
                        "commit {}",
                        &self.commits[i][..12]
                    )),
                    reps,
                    have,
                    match last_short {
                        Some(Short::Disturbed) if attempt > 0 => format!(
                            " (run {} of at most {}: the last one's were disturbed by other \
                             work; waiting up to {QUIET_WAIT} for a quiet machine)",
                            attempt + 1,
                            retry::DISTURBED_ATTEMPTS
                        ),
                        _ => String::new(),
                    }
                );
            }
            let quiet = attempt > 0 && last_short == Some(Short::Disturbed);
            let args = self.run_args(&builds, reps, &uid, &label, quiet);
            self.perflab(&args)?;
            self.runs_started += 1;
            self.measured_now += reps * builds.len();
            let now = self.stored(&label, commit.is_some())?;
            last_short = now.1;
            Ok(now)
        })?;
        if got.rounds.len() < n {
            let why = format!(
                "the study gave no {} at point {} in {} of the rounds asked (see `perflab show` \
                 of the runs labelled \"{label}\"){}",
                self.metric
                    .as_ref()
                    .map_or("metric".to_string(), |m| format!("metric {m:?}")),
                self.point,
                n - got.rounds.len(),
                got.why_skipped()
            );
            // A commit whose measurements fail (it crashes, or does not boot) is skipped, as
            // one that does not build; the ends must measure.
            return match commit {
                Some(_) => Ok(Measured::Skipped(why)),
                None => Err(OracleError(why)),
            };
        }
        Ok(Measured::Rounds(got.rounds))
    }
}

/// The rounds stored under a label, and why the repetitions that gave none gave none.
type Stored = (Vec<Round>, Option<Short>);

/// How long a run after disturbed rounds waits for the measured CPUs to be quiet
/// (`run --quiet-machine`): bounded, since the bisection runs a commit up to
/// `retry::DISTURBED_ATTEMPTS` times.
const QUIET_WAIT: &str = "10s";
