//! `perflab fleet …`: the command-line definitions of fleet runs.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::cli_format::FormatArgs;
use crate::cli_report::{ReportFormat, VerdictArgs};

#[derive(Args, Debug)]
pub struct FleetArgs {
    #[command(subcommand)]
    pub command: FleetCommand,
}

#[derive(Subcommand, Debug)]
pub enum FleetCommand {
    /// Run a study on every host at once over ssh, streaming each host's measurements into
    /// the store (--db) as they are committed there; prints one report comparing the hosts
    Run(FleetRunArgs),
    /// Go on with a fleet run: reconnect to hosts that dropped, resume runs that stopped,
    /// collect what was measured meanwhile (nothing is measured or stored twice)
    Resume(FleetResumeArgs),
    /// Each host's `perflab doctor`, side by side, differences first
    Doctor(FleetDoctorArgs),
    /// The report of a fleet run: its hosts compared like variants, matched by parameters,
    /// with the differences of the hosts' setups first
    Report(FleetReportArgs),
    /// List the fleet runs started from this machine
    Ls(FleetLsArgs),
    /// The side of a fleet run that runs on each host (started by `fleet run` over ssh)
    #[command(hide = true)]
    Agent(FleetAgentArgs),
}

/// How to reach the hosts.
#[derive(Args, Debug, Clone)]
pub struct HostArgs {
    /// Hosts as ssh destinations, comma-separated; NAME=DEST names one (e.g.
    /// `arm=root@10.0.0.7,x86-a,x86-b`). Your ssh config, keys and agent apply
    #[arg(long, value_name = "LIST", required_unless_present = "hosts_file")]
    pub hosts: Option<String>,
    /// A file of hosts, one per line (# comments)
    #[arg(long, value_name = "FILE", conflicts_with = "hosts")]
    pub hosts_file: Option<PathBuf>,
    /// The ssh config file to use instead of ~/.ssh/config (ssh -F)
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// An ssh option (ssh -o), repeatable: -o Port=2222
    #[arg(short = 'o', long = "ssh-option", value_name = "OPTION")]
    pub ssh_options: Vec<String>,
    /// How long one ssh connection attempt may take (above 0, at most a day)
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub connect_timeout: String,
    /// Which perflab to run on the hosts: auto (a cached copy of this build, else a perflab
    /// on PATH of this version, else copy this binary there when the architecture matches),
    /// copy (always this build), or a path on the hosts
    #[arg(long, value_name = "auto|copy|PATH", default_value = "auto")]
    pub remote_perflab: String,
}

#[derive(Args, Debug)]
pub struct FleetRunArgs {
    /// A built-in study (`perflab list`) or a TOML experiment file here (sent to the hosts)
    pub study: String,
    #[command(flatten)]
    pub hosts: HostArgs,
    /// How long a host may stay unreachable before it is given up for this invocation
    /// (`fleet resume` tries again later); the host's run goes on meanwhile (above 0, at
    /// most a day)
    #[arg(long, value_name = "DURATION", default_value = "2m")]
    pub reconnect_for: String,
    /// The database on each host [default: ~/.local/share/perflab/fleet/<run uid>.db]
    #[arg(long, value_name = "PATH")]
    pub remote_db: Option<String>,
    /// What standard output carries at the end
    #[arg(long, value_enum, default_value = "text")]
    pub format: FleetFormat,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    /// Options of `perflab run` for every host, after `--`: `-- --quick -p duration=1s`
    #[arg(last = true, value_name = "RUN OPTIONS")]
    pub run_args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct FleetResumeArgs {
    /// The fleet run: the id `fleet run` printed (`fleet ls` lists them), `last` or
    /// `last~N`
    pub id: String,
    #[command(flatten)]
    pub reach: ReachArgs,
    #[arg(long, value_name = "DURATION", default_value = "2m")]
    pub reconnect_for: String,
    /// Also retry hosts that failed for another reason than reachability
    #[arg(long)]
    pub retry_failed: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FleetFormat,
    #[command(flatten)]
    pub verdict: VerdictArgs,
}

/// ssh settings for a fleet whose hosts are already known.
#[derive(Args, Debug, Clone)]
pub struct ReachArgs {
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    #[arg(short = 'o', long = "ssh-option", value_name = "OPTION")]
    pub ssh_options: Vec<String>,
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub connect_timeout: String,
    #[arg(long, value_name = "auto|copy|PATH", default_value = "auto")]
    pub remote_perflab: String,
}

#[derive(Args, Debug)]
pub struct FleetDoctorArgs {
    #[command(flatten)]
    pub hosts: HostArgs,
    // json: one document with each host's checks, or why it could not be asked.
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct FleetLsArgs {
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct FleetReportArgs {
    /// The fleet run: its id, `last` or `last~N`
    pub id: String,
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Write a self-contained HTML page with the plots to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The metric to compare [default: the workload's primary metric]
    #[arg(long)]
    pub metric: Option<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
}

#[derive(Args, Debug)]
pub struct FleetAgentArgs {
    /// The run's uid, chosen by the fleet side
    #[arg(long)]
    pub uid: String,
    /// The study's TOML text, when the study is a file on the fleet side
    #[arg(long)]
    pub study_toml: Option<String>,
    #[arg(last = true)]
    pub run_args: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FleetFormat {
    /// The hosts' summary and the report comparing them
    Text,
    /// One JSON document: each host's status, run and counts, and the report
    Json,
}
