//! Command-line interface definitions.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use perflab_core::limits;

pub use crate::run_ref::RunRef;

// Shared with `cli_fleet`, which this file's `Command` names: kept apart so the two do not
// import each other.
pub use crate::cli_format::FormatArgs;
pub use crate::cli_report::{ReportFormat, VerdictArgs};

#[derive(Parser, Debug)]
#[command(
    name = "perflab",
    version,
    about = "A command-line lab for Linux platform performance experiments",
    long_about = "perflab runs performance studies with repetitions in interleaved order, \
                  telemetry around every measurement, system settings applied through knobs \
                  that are always restored, results kept in a database, and comparisons with \
                  confidence intervals and significance tests.\n\n\
                  Start with `perflab doctor` to see what this machine supports, then \
                  `perflab run quick`.",
    // Read from the exit codes' definitions (exit.rs), as the manual's EXIT STATUS is.
    after_help = crate::exit::help_text()
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Results database: an SQLite file, or a PostgreSQL server as a
    /// postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE URL [default: $PERFLAB_DB, else
    /// ~/.local/share/perflab/results.db]
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Read and write /proc, /sys and /dev under DIR instead of / (a captured or fake
    /// tree of another machine; workloads still run on this machine's CPUs)
    #[arg(long, global = true, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
    /// Knob journal of original values [default: $PERFLAB_JOURNAL, else
    /// /var/lib/perflab/journal.json as root, ~/.local/state/perflab/journal.json otherwise]
    #[arg(long, global = true, value_name = "PATH")]
    pub journal: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a study (a built-in preset or a TOML file), or resume an interrupted run
    Run(RunArgs),
    /// Show what this machine supports, one line per capability
    Doctor(DoctorArgs),
    /// Put back every setting a killed perflab left changed (replays the knob journal)
    Restore(RestoreArgs),
    /// List stored runs
    Ls(LsArgs),
    /// Show one run: its fingerprint, plan and results, or one CPU pair's drill-down
    Show(ShowArgs),
    /// Export a run's measurements as JSON, CSV or benchstat's input format
    Export(ExportArgs),
    /// Compare two variants of a run, or two runs matched by parameters
    Compare(CompareArgs),
    /// The full report of one or more runs: tables, verdicts, plots (HTML), telemetry
    /// that moved with each difference, and the runs' setups
    Report(ReportArgs),
    /// A figure over the stored runs, one series per study, point, variant, metric and
    /// host, with the change points where it moved (and when several moved together)
    History(crate::cli_history::HistoryArgs),
    /// Which commit moved a figure: bisect a git range, building each commit tested in a
    /// worktree of perflab's own and measuring it against the good and the bad end until
    /// decided
    Bisect(crate::cli_bisect::BisectArgs),
    /// Measure perflab's workloads side by side with peer tools on the same placement; exits
    /// 4 when a ratio or cost is outside its stated tolerance
    Crosscheck(CrosscheckArgs),
    /// Bring a benchmark tool's saved output into the store as a run (e.g. old logs, to
    /// compare with new runs)
    Import(ImportArgs),
    /// Copy runs into another results database (a team's PostgreSQL store, another
    /// file); pushing again adds only what the target lacks
    Push(PushArgs),
    /// List workloads, monitors, knobs, parsers and studies
    List(ListArgs),
    /// Answer `netrr` measurements from another host (the peer of `-p peer=ADDR:PORT`)
    Serve(ServeArgs),
    /// Run a study on many hosts over ssh into one store, and compare the hosts
    Fleet(crate::cli_fleet::FleetArgs),
    /// Print the shell completion script for SHELL, e.g. `perflab completions bash >
    /// ~/.local/share/bash-completion/completions/perflab`
    Completions(CompletionsArgs),
    /// Print the manual page (roff), e.g. `perflab man | man -l -`; --out DIR writes one
    /// page per subcommand
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write perflab.1 and one page per subcommand (perflab-run.1, …) into DIR instead
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// A built-in study (`perflab list`) or a path to an experiment TOML file
    #[arg(value_name = "STUDY|FILE")]
    pub study: Option<String>,
    /// Finish an interrupted run without redoing finished measurements (RUN: its number,
    /// `last` or `last~N`)
    #[arg(long, value_name = "RUN", conflicts_with = "study")]
    pub resume: Option<RunRef>,
    /// Run a workload directly instead of a study
    #[arg(long, value_name = "NAME", conflicts_with = "study")]
    pub workload: Option<String>,
    /// Set a parameter; a comma list makes it a grid axis (repeatable): -p cpu_b=1,2,3
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Add a variant: NAME, or NAME:SETTING[;SETTING] where a SETTING is knob=value or
    /// param=value for a parameter of the workload (repeatable). E.g. `--variant
    /// poll:cpuidle=poll-only`, or two versions interleaved with `exec`: `--variant
    /// 'old:cmd=/opt/v1/bench {size}' --variant 'new:cmd=/opt/v2/bench {size}'`. A `;`
    /// followed by something other than a known name and `=` stays in the value (a shell
    /// command's own). With a study, NAME alone keeps only the named variants.
    #[arg(long = "variant", value_name = "SPEC")]
    pub variants: Vec<String>,
    /// With `netpaths` (or a study whose variants are network paths): measure only these
    /// paths, e.g. `--paths loopback,veth,vm-tap-novhost`; the same as one `--variant
    /// NAME` per path. `perflab run netpaths --dry-run` lists them all.
    #[arg(long, value_name = "PATH,PATH", value_delimiter = ',')]
    pub paths: Vec<String>,
    /// Repetitions per point and variant (1 to 10000)
    #[arg(long, value_name = "N", value_parser = within::<u32, u32>(limits::REPETITIONS))]
    pub reps: Option<u32>,
    /// Unrecorded warm-up measurements at the start (0 to 1000)
    #[arg(long, value_name = "N", value_parser = within::<u32, u32>(limits::WARMUP))]
    pub warmup: Option<u32>,
    /// Duration of each measurement (sets the workload's `duration`), e.g. 10s, 500ms
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// A short first look: the study's quick settings (fewer sizes, repetitions, shorter
    /// measurements), or 0.5 s measurements; --duration and --reps still apply
    #[arg(long)]
    pub quick: bool,
    /// Buffer sizes of a transfer scan (sets `size`): a range 32K..1G (powers of two), a
    /// list 4K,64K,2M, or one size
    #[arg(long, value_name = "SIZES")]
    pub size: Option<String>,
    /// The fixed CPU of a CPU-pair study (sets `cpu_a`; 0 to 4095, and online)
    #[arg(long, value_name = "CPU", value_parser = within::<u32, u32>(limits::CPU))]
    pub anchor: Option<u32>,
    /// Partner CPUs of a CPU-pair study: per-core (default), all, or a list like 1,4-7
    #[arg(long, value_name = "per-core|all|LIST")]
    pub partners: Option<String>,
    /// Monitors to attach (comma list; default: all available; `none` or an empty list:
    /// none). Monitors that disturb
    /// what they observe (perf counters) run only in telemetry repetitions
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub monitors: Option<Vec<String>>,
    /// Telemetry repetitions per point and variant for the monitors that disturb the
    /// workload (perf counters); their figures are kept but never used as results
    /// (0 to 100) [default: 1 when such a monitor is selected; 0 leaves them out]
    #[arg(long, value_name = "N", value_parser = within::<u32, u32>(limits::TELEMETRY_REPS))]
    pub telemetry_reps: Option<u32>,
    /// Kernel image for the guests of the vm-* network paths [default:
    /// $PERFLAB_GUEST_KERNEL, else the host's /boot/vmlinuz-$(uname -r), else the newest
    /// /boot/vmlinuz-* with modules]
    #[arg(long, value_name = "PATH")]
    pub guest_kernel: Option<PathBuf>,
    /// A label for the run, e.g. "kernel 6.1"
    #[arg(long)]
    pub label: Option<String>,
    /// Directory for the per-pair drill-down [default: drilldown/<study>-<run> beside the
    /// results database, e.g. ~/.local/share/perflab/drilldown/idle-ipi-7]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the expanded experiment and its plan, and run nothing (with --format json:
    /// one JSON document on standard output, notes on standard error)
    #[arg(long, conflicts_with = "resume")]
    pub dry_run: bool,
    /// The new run's uid (32 hex digits), chosen by `fleet run` so it can find the run
    /// on the host again
    #[arg(long, hide = true, value_name = "HEX")]
    pub uid: Option<String>,
    /// Adaptive repetitions: after the planned ones, repeat each point until the
    /// median's 95% interval is within ±PCT% of the median (e.g. 1 or 0.5; above 0, at
    /// most 100), or the cap
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub target_ci: Option<String>,
    /// The cap of --target-ci: at most N repetitions per point and variant, failed ones
    /// included (the planned repetitions to 10000) [default: 30, or the planned repetitions
    /// if more]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_reps: Option<String>,
    /// After the planned repetitions, add repetitions in interleaved rounds to the
    /// comparison rows still undecided, until each reads better, worse or same, or the cap
    /// (--max-reps) is reached; error rates stay valid (alpha spent over a fixed schedule
    /// of looks, docs/METHODOLOGY.md). The file's `until_decided = true`
    #[arg(long)]
    pub until_decided: bool,
    /// What standard output carries: the tables (text), or exactly one JSON document at
    /// the end (json: run id, status, exit code, counts, the comparisons with their
    /// verdicts, the database path); progress and notes go to standard error either way
    #[arg(long, value_enum, default_value = "text")]
    pub format: RunFormat,
    /// When another perflab holds a setting this run changes, wait up to TIME for it
    /// (e.g. 30s, 10m; at most 1d), saying so every 10 s, instead of stopping at once with
    /// exit code 6; nothing is stored or changed while it waits [default:
    /// $PERFLAB_WAIT_LOCK, else no wait]
    #[arg(long, value_name = "TIME", value_parser = wait_time)]
    pub wait_lock: Option<std::time::Duration>,
    /// Before the first measurement, and after any measurement that other work disturbed,
    /// wait until the measured CPUs are quiet (other programs took at most 10% of them over
    /// 1 s), at most TIME in all over the run (default 60s; 0s: never wait), saying what it
    /// waited for and how long; once TIME is spent it measures on and marks the disturbed
    /// measurements, as it always does (docs/METHODOLOGY.md, "A disturbed machine")
    #[arg(long, value_name = "TIME", num_args = 0..=1, default_missing_value = "60s")]
    pub quiet_machine: Option<String>,
    /// Mark a measurement disturbed (kept, shown, never a result; exit code 10) when other
    /// work took more than PCT% of its CPUs, after the accounting's granularity; 100 marks
    /// none [default: $PERFLAB_DISTURBED_ABOVE, else 10]
    #[arg(long, value_name = "PCT")]
    pub disturbed_above: Option<f64>,
}

/// `--wait-lock`'s TIME (and `$PERFLAB_WAIT_LOCK`'s): a duration as `--duration` takes
/// it, at most a day.
pub fn wait_time(text: &str) -> Result<std::time::Duration, String> {
    let seconds = perflab_core::parse_duration(text)?;
    if seconds > 86_400.0 {
        return Err(format!("{text:?} is more than a day (1d)"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunFormat {
    #[default]
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// Show what would be restored without writing anything
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args, Debug)]
pub struct LsArgs {
    /// Only runs of this study (its name as `ls` shows it, e.g. memxfer, import-fio)
    #[arg(long, value_name = "NAME")]
    pub study: Option<String>,
    /// Only runs whose label contains TEXT (in any case)
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Only runs created since TIME: a UTC date as `ls` prints it (2026-11-18, "2026-11-18
    /// 14:05"), or an age (2h, 7d)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// At most N runs, the newest (1 to 4294967295)
    #[arg(long, value_name = "N", value_parser = within::<u32, u32>(1..=u32::MAX))]
    pub limit: Option<u32>,
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub format: FormatArgs,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The run: its number, `last` (the newest) or `last~N` (N before it)
    #[arg(value_name = "RUN")]
    pub run: RunRef,
    /// Drill down into one CPU pair: A,B
    #[arg(long, value_name = "A,B")]
    pub pair: Option<String>,
    /// Per-thread records of one measurement (its seq): CPUs, migrations, interval, bytes
    #[arg(long, value_name = "SEQ")]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Print only these sections (summary, threads, lock-wait, the run's tables: interrupts,
    /// counters, …, then latency, percentiles, spans; a wrong name lists all), in JSON too
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub section: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// Everything: the run and every measurement with its telemetry (docs/export.md)
    Json,
    /// One row per measurement and metric
    Csv,
    /// Go's benchmark format, one line per successful repetition, for `benchstat`
    Benchstat,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The run: its number, `last` (the newest) or `last~N` (N before it)
    #[arg(value_name = "RUN")]
    pub run: RunRef,
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Write to FILE instead of standard output
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFormat {
    Text,
    /// A table to paste into a mail or a pull request
    Markdown,
    Json,
}

#[derive(Args, Debug)]
#[command(after_help = "\
With one RUN the report compares each variant against the study's baseline; with \
several, each later run against the first, point by point. Runs whose setups differ \
(kernel, command line, governor, THP, isolation, perflab version) are compared anyway, \
and the differences head the report.

Examples:
  perflab report 3                         terminal tables
  perflab report 3 4 --format mail         72-column text to paste into a reply
  perflab report 3 4 --html report.html    one offline file with the plots
  perflab report 3 --html - > page.html    the page on standard output")]
pub struct ReportArgs {
    /// Runs to report on: one (its variants) or several (each against the first); a
    /// number, `last` or `last~N`
    #[arg(required = true, num_args = 1.., value_name = "RUN")]
    pub runs: Vec<RunRef>,
    /// Write a self-contained HTML page with the plots to FILE (`-`: to standard output,
    /// and nothing else goes there)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// What to print on standard output [default: text, or nothing with --html]
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// The metric to compare [default: the workload's primary metric]
    #[arg(long)]
    pub metric: Option<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    /// Telemetry rows named under each significant difference ("what changed with it"; 0
    /// to 100)
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = within::<usize, u64>(0..=100))]
    pub changes: usize,
    /// Print only these parts (environment, runs, comparison, quality, latency, spans,
    /// threads, lock-wait, counters, how-to-read); JSON keeps them all
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub section: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// One run (compare its variants) or two runs (A then B, matched by parameters); a
    /// number, `last` or `last~N` (`compare last~1 last`: the two newest)
    #[arg(required = true, num_args = 1..=2, value_name = "RUN")]
    pub runs: Vec<RunRef>,
    /// Variants to compare within one run: BASELINE,OTHER [default: the study's baseline
    /// against the next variant]
    #[arg(long, value_name = "A,B")]
    pub variants: Option<String>,
    /// The metric to compare [default: the workload's primary metric]
    #[arg(long)]
    pub metric: Option<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextFormat,
    /// Also write the per-pair drill-down directory here
    #[arg(long, value_name = "DIR")]
    pub drilldown: Option<PathBuf>,
    /// Print only these sections (comparison, scan, distribution, percentiles); JSON keeps
    /// them all
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub section: Vec<String>,
    /// A CI gate: exit 7 when any row reads one of these verdicts (comma-separated:
    /// worse, better, changed = any move, undecided), the rows that did listed last on
    /// stderr; the tables print as usual
    #[arg(long, value_name = "VERDICTS", value_delimiter = ',', value_enum)]
    pub fail_on: Vec<FailOn>,
}

/// A verdict `compare --fail-on` fails on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// WORSE rows.
    Worse,
    /// better rows.
    Better,
    /// Any row that moved: better, WORSE or changed.
    Changed,
    /// Rows the data could not decide (no spread included).
    Undecided,
}

#[derive(Args, Debug)]
pub struct CrosscheckArgs {
    /// What to check: ctxsw (against `perf bench sched pipe -T` on the same CPUs), memcpy
    /// (xfer's memcpy engine against `perf bench mem memcpy` at the same sizes), netrr (UDP
    /// round trips against `sockperf ping-pong` on 127.0.0.1; --pairs are client,server CPUs,
    /// --sizes message sizes [default: 64]), runner (perflab's own cost over 1,000 null
    /// measurements), report (`perflab report`, `compare` and `export`: time and memory in
    /// every format over runs of 10,000 and 50,000 measurements and a compare over 1,000
    /// points; exits 4 outside issue 24's targets; about 2 minutes on 2 CPUs, most of it
    /// storing the runs, and 2 GB of temporary files), monitors (each workload with each monitor
    /// set on against none, interleaved, as a ratio; exits 4 when a set that runs around
    /// headline figures moves them by more than --tolerance), gpu (gpuxfer against a plain
    /// CUDA-events loop, h2d and d2h, host memory 4k, thp, 2m, pinned, at --sizes; 6 to 24
    /// interleaved pairs per row, so give a short duration, e.g. --duration=0.2s), trace (the
    /// trace monitor's BPF backend against its tracefs text backend on loopback netrr at 1000
    /// requests/s: per span of netrx the medians side by side, held to 1 µs or 5 %, sub-µs
    /// values, the spans' sum against the round trip; --pairs one client,server pair, as many
    /// rounds per backend as asked; root), verdicts (a seeded simulation of the verdicts'
    /// false-verdict rates, power and `same` rate, and what --until-decided spends; exits 4
    /// when a false-verdict rate exceeds its bound; no root, a few seconds), bisect (a
    /// seeded simulation of `perflab bisect` over 1,024 commits: the right commit, the
    /// measurements against a fixed-repetition bisection, "no difference", two changes
    /// flagged; exits 4 when a target is missed; no root, about 20 s), or history
    /// (`perflab history`'s change points against Apache Otava's on otava-test-data's
    /// series, F1 and false alarms per series kind; exits 4 when a target is missed; needs
    /// python3 with apache-otava and otava-test-data, else it says so and skips; about 3
    /// minutes in a release build). ctxsw, memcpy
    /// and netrr measure the two tools in interleaved pairs, 6 at first and up to 24 while
    /// undecided, and judge the 95% interval of the median pair ratio: within, OUTSIDE
    /// (exit 4) or undecided
    #[arg(default_value = "ctxsw")]
    pub workload: String,
    /// CPU pairs A,B separated by spaces [default: 0,0 and 0,<first CPU of another core>]
    #[arg(long, value_name = "A,B", num_args = 1..)]
    pub pairs: Vec<String>,
    /// Buffer sizes for the memcpy and gpu checks [default: 64K,1M,16M,256M]
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Time per measurement of each tool (above 0, at most a day)
    #[arg(long, default_value = "5s")]
    pub duration: String,
    /// trace: rounds of alternating measurements per backend (1 to 1000); the ratio checks
    /// add pairs until decided instead
    #[arg(long, default_value_t = 3, value_parser = within::<u32, u32>(1..=1000u32))]
    pub rounds: u32,
    /// monitors: the monitor sets to check, separated by spaces, monitors of a set by
    /// commas; `default` is what a run uses when none is named; `trace` (span tracing)
    /// disturbs, so like the counters its ratio is reported apart, as telemetry only
    #[arg(
        long,
        value_name = "SETS",
        default_value = "default counters counters-cpu trace"
    )]
    pub monitor_sets: String,
    /// monitors: the workloads to check (ctxsw, xfer, netrr, null)
    #[arg(long, value_name = "LIST", default_value = "ctxsw,xfer,netrr")]
    pub workloads: String,
    /// monitors: the fewest pairs of measurements (one off, one on) per workload and set
    /// (2 to 10000)
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = within::<u32, u32>(2..=10_000u32))]
    pub monitor_pairs: u32,
    /// monitors: the most pairs per workload and set; pairs are added until the median
    /// ratio's 95% CI is within a quarter of --tolerance (2 to 10000)
    #[arg(long, value_name = "N", default_value_t = 120, value_parser = within::<u32, u32>(2..=10_000u32))]
    pub max_pairs: u32,
    /// monitors: length of each measurement (above 0, at most a day) [default: 0.3s]
    #[arg(long, value_name = "TIME")]
    pub measure: Option<String>,
    /// Hold the ratios to within ±PCT% of 1 instead of the check's stated tolerance (ctxsw
    /// and memcpy 3, netrr's p50 5, monitors 1; 0 to 100, above 0 for monitors); runner and
    /// report have fixed cost targets
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub tolerance: Option<f64>,
    /// verdicts: families simulated per line of the table (1 to 100000); bisect: a fifth as
    /// many bisections per line
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub families: u32,
    /// verdicts and bisect: the seed of the simulation (the documented tables use 2026)
    #[arg(long, value_name = "N", default_value_t = 2026)]
    pub seed: u64,
    /// What standard output carries: the check's tables (text), or one JSON document at
    /// the end with every number checked, its tolerance and whether it held (json; the
    /// tables go to standard error then)
    #[arg(long, value_enum, default_value = "text")]
    pub format: crate::cli_format::DataFormat,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; measurement traffic is answered on the same address
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub listen: String,
    /// Control port (0 to 65535; 0: any free port, printed at start)
    #[arg(long, default_value_t = 7700)]
    pub port: u16,
    /// Shared token clients must prove they hold (it never crosses the wire). Prefer
    /// --token-file or $PERFLAB_SERVE_TOKEN: a token on the command line is visible to
    /// every user of this host in `ps` and /proc/PID/cmdline [default:
    /// $PERFLAB_SERVE_TOKEN, else a random one, printed at start]
    #[arg(long, conflicts_with = "token_file")]
    pub token: Option<String>,
    /// Read the token from FILE (its first line; keep it mode 0600): the way to give a
    /// token that no other user of this host can see
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Serve with a token under 128 bits (refused otherwise: anyone who reaches the port
    /// can try tokens; each peer is refused for a while after 5 failed tries)
    #[arg(long)]
    pub allow_weak_token: bool,
    /// Sessions served at once; more are refused with "busy" (1 to 1024)
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = within::<usize, u64>(1..=1024))]
    pub max_sessions: usize,
    /// Longest a session may last; its measurement traffic is no longer answered after
    /// (above 0, at most a day)
    #[arg(long, default_value = "10m", value_name = "TIME")]
    pub session_time: String,
    /// Time from a connection's accept to its authenticated open; a client that takes
    /// longer is cut off without ever holding a session slot (above 0, at most a day)
    #[arg(long, default_value = "5s", value_name = "TIME")]
    pub handshake_time: String,
}

#[derive(Args, Debug)]
pub struct PushArgs {
    /// The runs to copy (numbers in the --db database, `last` or `last~N`)
    #[arg(value_name = "RUN", conflicts_with = "all")]
    pub runs: Vec<RunRef>,
    /// Copy every run
    #[arg(long)]
    pub all: bool,
    /// The target: a postgres:// URL or an SQLite file (created if missing)
    #[arg(long, value_name = "URL|PATH")]
    pub to: PathBuf,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The tool's output format (`perflab list` shows the parsers), or `perflab-json`
    /// for a `perflab export --format json` document (the run comes back whole, with its
    /// uid, so importing it again adds nothing)
    #[arg(long)]
    pub parser: String,
    /// The saved output; `-` reads standard input
    pub file: PathBuf,
    /// A label for the run, e.g. "veos 1.2.2"
    #[arg(long)]
    pub label: Option<String>,
    /// The study name the run is filed under [default: import-<parser>]
    #[arg(long)]
    pub study: Option<String>,
    /// What standard output carries: nothing (text: the run's line goes to standard
    /// error), or one JSON document naming the run made
    #[arg(long, value_enum, default_value = "text")]
    pub format: crate::cli_format::DataFormat,
}

/// A clap parser of an unsigned number held to `range`: out of it is exit 2 with one line
/// naming the flag and the range (see `main`).
pub fn within<T, R>(range: std::ops::RangeInclusive<R>) -> RangedU64ValueParser<T>
where
    T: TryFrom<u64> + Send + Sync + Clone + 'static,
    <T as TryFrom<u64>>::Error: std::error::Error + Send + Sync + 'static,
    R: Into<u64> + Copy,
{
    RangedU64ValueParser::<T>::new().range((*range.start()).into()..=(*range.end()).into())
}
