//! The flags of `perflab bisect`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BisectFormat {
    /// Aligned tables for the terminal
    #[default]
    Text,
    /// GitHub-flavoured Markdown
    Markdown,
    /// Plain text no wider than 72 columns, for a mailing-list reply
    Mail,
    /// One JSON document (docs/json.md)
    Json,
}

#[derive(Args, Debug)]
pub struct BisectArgs {
    /// The study to run at each commit (a preset or a TOML file); `{build}` in an exec
    /// command line is the tested commit's build directory
    #[arg(value_name = "STUDY|FILE")]
    pub study: String,
    /// The git repository (its working tree is never touched: each commit is checked out
    /// in a worktree of perflab's own)
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,
    /// A commit where the figure is as it should be
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A later commit where it is not
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// Builds a commit, run by /bin/sh in its worktree (the build directory); exit status 0
    /// is a build, anything else a skipped commit, as `git bisect skip`
    #[arg(long, value_name = "CMD")]
    pub build: String,
    /// The metric bisected [default: the study's primary metric]
    #[arg(long, value_name = "M")]
    pub metric: Option<String>,
    /// The point bisected, by its number as `perflab show` lists it [default: the study's
    /// only point]
    #[arg(long, value_name = "P")]
    pub point: Option<u32>,
    /// Where worktrees, builds and their logs are kept [default:
    /// ~/.cache/perflab/bisect/<repository>]
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// The most rounds (good, commit, bad) measured for one commit before it is left
    /// undecided (4 to 200)
    #[arg(long, value_name = "N", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(4..=200))]
    pub max_rounds: u32,
    #[arg(long, value_enum, default_value = "text")]
    pub format: BisectFormat,
}
