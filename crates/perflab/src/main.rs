//! perflab: a command-line lab for Linux platform performance experiments.
//!
//! `main` only parses, dispatches and turns errors into messages and exit codes; the
//! codes and what each means are in `exit.rs`, the one list `--help` and the manual read.

mod cli;
mod cli_bisect;
mod cli_fleet;
mod cli_format;
mod cli_history;
mod cli_report;
mod cmd;
mod exit;
mod progress;
mod run_ref;
mod stdout_guard;
mod terminal;

use clap::Parser;

/// Set (to anything) in the environment, perflab parses its command line and exits 0
/// without doing anything, or 2 with the one-line error: how the test of the documented
/// command lines checks those that cannot be dry-run (`restore`, `serve`, `report RUN`).
const CHECK_ARGS_ONLY: &str = "PERFLAB_CHECK_ARGS_ONLY";

fn main() {
    // A write to a pipe whose reader is gone (a helper process that died, `| head` that
    // closed) fails with EPIPE where it is made, so a measurement can fail with its reason
    // instead of perflab being killed mid-run with nothing restored (issue 31 item 15).
    // Children started with Command get SIGPIPE's default back (std resets it).
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    stdout_guard::install();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit::clap_error(e),
    };
    if std::env::var_os(CHECK_ARGS_ONLY).is_some() {
        std::process::exit(exit::SUCCESS);
    }
    // The report words a run by its workload's and monitors' descriptors and does not
    // link the workloads or the monitors.
    perflab_workloads::install_catalog();
    perflab_monitors::install_catalog();
    perflab_lab::void::install_catalog();
    perflab_core::catalog::install_import_roles(perflab_parsers::param_roles);
    // Text fits the terminal it is printed on; in a pipe every table stays whole.
    perflab_report::doc::text::set_terminal_width(terminal::stdout_columns());
    let result = stdout_guard::run(|| cmd::dispatch(cli));
    // A failed write to standard output is the one thing said, whatever the command made
    // of it (an error of its own, or nothing at all).
    let code = match (stdout_guard::failure(), result) {
        (Some(line), _) => {
            if let Some(line) = line {
                eprintln!("perflab: {line}");
            }
            exit::FAILURE
        }
        (None, Ok(code)) => code,
        (None, Err(err)) => {
            eprintln!("perflab: {}", exit::message(&err));
            exit::code(&err)
        }
    };
    std::process::exit(code);
}
