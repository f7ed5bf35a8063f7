//! perflab: a command-line lab for Linux platform performance experiments.
//!
//! `main` only parses, dispatches and turns errors into messages and exit codes:
//! 0 success, 1 a failure while running (or a run with no successful measurement), 2 bad
//! input (nothing was changed), 3 a run completed with some measurements failed, 4 a
//! cross-check outside its tolerance, 5 a run that could not compare as planned (a variant
//! was unavailable), 6 busy (another perflab holds a setting the run changes), 130 stopped
//! by a signal (everything measured so far is kept). See `exit.rs`.

mod cli;
mod cli_fleet;
mod cli_format;
mod cli_report;
mod cmd;
mod exit;
mod progress;

use clap::Parser;

fn main() {
    // Output piped into `head` or `less` that closes early ends perflab quietly, as it
    // does any Unix filter, instead of panicking on a failed print.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit::clap_error(e),
    };
    // The report words a run by its workload's and monitors' descriptors and does not
    // link the workloads or the monitors.
    perflab_workloads::install_catalog();
    perflab_monitors::install_catalog();
    let code = match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("perflab: {}", exit::message(&err));
            exit::code(&err)
        }
    };
    std::process::exit(code);
}
