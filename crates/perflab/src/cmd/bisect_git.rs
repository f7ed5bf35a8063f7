//! The repository side of `perflab bisect`: the commits between good and bad, and each
//! commit built once in a worktree of perflab's own under the cache directory (`git
//! worktree add --detach`), never in the user's working tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::exit::input;

/// A repository that is there, a git repository, and clean.
pub struct Repo {
    pub top: PathBuf,
}

impl Repo {
    /// Refuses a missing directory, one that is not in a git repository, or a working tree
    /// with uncommitted changes to tracked files (what is bisected is the commits; edits
    /// would be in none of them).
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        if !dir.is_dir() {
            return Err(input(format!(
                "--repo {}: no such directory",
                dir.display()
            )));
        }
        let top = git(dir, &["rev-parse", "--show-toplevel"])
            .map_err(|_| input(format!("--repo {}: not a git repository", dir.display())))?;
        let repo = Self {
            top: PathBuf::from(top.trim()),
        };
        let dirty = repo.git(&["status", "--porcelain", "--untracked-files=no"])?;
        if let Some(first) = dirty.lines().next() {
            return Err(input(format!(
                "--repo {}: the working tree has uncommitted changes ({}{}); commit or stash \
                 them: a bisection tests commits",
                dir.display(),
                first.trim(),
                if dirty.lines().count() > 1 {
                    ", …"
                } else {
                    ""
                }
            )));
        }
        Ok(repo)
    }

    pub fn git(&self, args: &[&str]) -> anyhow::Result<String> {
        git(&self.top, args)
    }

    /// The full hash of `rev`, or a one-line refusal naming the flag.
    pub fn commit(&self, flag: &str, rev: &str) -> anyhow::Result<String> {
        let spec = format!("{rev}^{{commit}}");
        self.git(&["rev-parse", "--verify", "--quiet", &spec])
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                input(format!(
                    "--{flag} {rev}: no such commit in {}",
                    self.top.display()
                ))
            })
    }

    /// The commits from `good` to `bad` along the first-parent line, both included, good
    /// first; refuses swapped ends and ends on different lines.
    pub fn range(&self, good: &str, bad: &str) -> anyhow::Result<Vec<String>> {
        if good == bad {
            return Err(input(
                "--good and --bad are the same commit: nothing to bisect",
            ));
        }
        if !self.is_ancestor(good, bad) {
            return Err(input(if self.is_ancestor(bad, good) {
                "--good and --bad are swapped: --good must be the older commit (an ancestor \
                 of --bad)"
            } else {
                "--good is not an ancestor of --bad: a bisection needs both on one line of \
                 history"
            }));
        }
        let list = self.git(&[
            "rev-list",
            "--reverse",
            "--first-parent",
            &format!("{good}..{bad}"),
        ])?;
        let mut out = vec![good.to_string()];
        out.extend(list.lines().map(|l| l.trim().to_string()));
        if out.last().map(String::as_str) != Some(bad) {
            return Err(input(
                "--bad is not on --good's first-parent line: bisect from a commit on it",
            ));
        }
        Ok(out)
    }

    fn is_ancestor(&self, a: &str, b: &str) -> bool {
        Command::new("git")
            .arg("-C")
            .arg(&self.top)
            .args(["merge-base", "--is-ancestor", a, b])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The first line of a commit's message.
    pub fn subject(&self, sha: &str) -> String {
        self.git(&["log", "-1", "--format=%s", sha])
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow::anyhow!("git: {e}"))?;
    if !out.status.success() {
        anyhow::bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What building a commit gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Built {
    /// The build directory (the commit's worktree), what `{build}` becomes.
    Dir(PathBuf),
    /// The build failed: why, with the log's path.
    Failed(String),
}

/// Builds kept per commit under `cache`: `<sha>/` the worktree, `<sha>.log` the build's
/// output, `<sha>.ok` or `<sha>.failed` its outcome, so a commit is built once across
/// reruns of the same bisection.
pub struct Builds<'a> {
    pub repo: &'a Repo,
    pub cache: PathBuf,
    pub cmd: String,
    /// Builds run by this process (not found in the cache).
    pub built: usize,
}

impl Builds<'_> {
    pub fn get(&mut self, sha: &str) -> anyhow::Result<Built> {
        let dir = self.cache.join(sha);
        let log = self.cache.join(format!("{sha}.log"));
        let ok = self.cache.join(format!("{sha}.ok"));
        let failed = self.cache.join(format!("{sha}.failed"));
        if ok.exists() && dir.is_dir() {
            return Ok(Built::Dir(dir));
        }
        if failed.exists() {
            return Ok(Built::Failed(failure(&failed, &log)));
        }
        std::fs::create_dir_all(&self.cache)
            .map_err(|e| anyhow::anyhow!("bisect cache {}: {e}", self.cache.display()))?;
        if !dir.is_dir() {
            let path = dir.to_string_lossy().into_owned();
            self.repo
                .git(&["worktree", "add", "--detach", "--force", &path, sha])?;
        }
        let logf = std::fs::File::create(&log)
            .map_err(|e| anyhow::anyhow!("build log {}: {e}", log.display()))?;
        let status = Command::new("/bin/sh")
            .arg("-c")
            .arg(&self.cmd)
            .current_dir(&dir)
            .env("PERFLAB_BISECT_COMMIT", sha)
            .stdin(Stdio::null())
            .stdout(logf.try_clone()?)
            .stderr(logf)
            .status()
            .map_err(|e| anyhow::anyhow!("--build: /bin/sh: {e}"))?;
        self.built += 1;
        // Killed by a signal (Ctrl-C): not a failed build, so nothing is cached for it.
        if status.code().is_none() {
            anyhow::bail!("the build of {} was interrupted ({status})", &sha[..12]);
        }
        if status.success() {
            std::fs::write(&ok, "")?;
            Ok(Built::Dir(dir))
        } else {
            std::fs::write(&failed, format!("{status}"))?;
            Ok(Built::Failed(failure(&failed, &log)))
        }
    }
}

/// "exit status: 1 (log: PATH: last line)".
fn failure(marker: &Path, log: &Path) -> String {
    let status = std::fs::read_to_string(marker).unwrap_or_default();
    let last = std::fs::read_to_string(log)
        .ok()
        .and_then(|t| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_default();
    format!(
        "the build failed ({}; log {}{}{})",
        status.trim(),
        log.display(),
        if last.is_empty() { "" } else { ": " },
        last.trim()
    )
}

/// The default cache: ~/.cache/perflab/bisect/<name of the repository>-<hash of its path>.
pub fn default_cache(repo: &Repo) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let name = repo
        .top
        .file_name()
        .map_or("repo".into(), |n| n.to_string_lossy().into_owned());
    base.join("perflab").join("bisect").join(format!(
        "{name}-{}",
        &super::bisect_key::hex(&[&repo.top.to_string_lossy()])[..8]
    ))
}
