//! One file per subcommand.

mod bisect;
mod bisect_git;
mod bisect_key;
mod bisect_oracle;
mod bisect_report;
mod common;
mod compare;
mod compare_void;
mod completions;
mod crosscheck;
mod doctor;
mod drilldown_dir;
mod envelope;
mod export;
mod export_csv;
mod export_record;
mod export_stream;
mod export_visit;
mod fail_on;
mod fleet;
mod fleet_doctor;
mod fleet_hosts;
mod hint;
mod history;
mod import;
mod import_items;
mod import_json;
mod import_lines;
mod import_stream;
mod import_summary;
mod key_file;
mod list;
mod ls;
mod ls_filter;
mod man;
mod man_env;
mod man_page;
mod private_data;
mod push;
mod report;
mod restore;
mod run;
mod run_end;
mod run_lock;
mod run_spec;
mod run_view;
mod serve;
mod show;
mod sudo_db;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    envelope::set_command(name(&cli.command));
    let g = cli.global;
    // A child started outside a run's knobs (the KVM probe's QEMU, in an availability
    // check or `doctor`) is journaled where `perflab restore` looks.
    perflab_knobs::child::journal_children_in(common::journal_path(&g));
    key_file::install(&g);
    // Restore reads the journal itself; completions and the manual touch nothing of the
    // machine's and must print only what they generate.
    if !matches!(
        cli.command,
        Command::Restore(_) | Command::Completions(_) | Command::Man(_)
    ) {
        common::warn_pending_journal(&g);
    }
    match cli.command {
        Command::Run(a) => run::run(&g, a),
        Command::Doctor(a) => doctor::run(&g, a),
        Command::Restore(a) => restore::run(&g, a),
        Command::Ls(a) => ls::run(&g, a),
        Command::Show(a) => show::run(&g, a),
        Command::Export(a) => export::run(&g, a),
        Command::Compare(a) => compare::run(&g, a),
        Command::Report(a) => report::run(&g, a),
        Command::Crosscheck(a) => crosscheck::run(&g, a),
        Command::History(a) => history::run(&g, a),
        Command::Bisect(a) => bisect::run(&g, a),
        Command::Import(a) => import::run(&g, a),
        Command::Push(a) => push::run(&g, a),
        Command::List(a) => list::run(a),
        Command::Serve(a) => serve::run(&g, a),
        Command::Fleet(a) => fleet::run(&g, a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
    }
}

/// The command as typed, for the `command` of its JSON document.
fn name(c: &Command) -> &'static str {
    use crate::cli_fleet::FleetCommand as F;
    match c {
        Command::Run(_) => "run",
        Command::Doctor(_) => "doctor",
        Command::Restore(_) => "restore",
        Command::Ls(_) => "ls",
        Command::Show(_) => "show",
        Command::Export(_) => "export",
        Command::Compare(_) => "compare",
        Command::Report(_) => "report",
        Command::Crosscheck(_) => "crosscheck",
        Command::History(_) => "history",
        Command::Bisect(_) => "bisect",
        Command::Import(_) => "import",
        Command::Push(_) => "push",
        Command::List(_) => "list",
        Command::Serve(_) => "serve",
        Command::Completions(_) => "completions",
        Command::Man(_) => "man",
        Command::Fleet(f) => match f.command {
            F::Run(_) => "fleet run",
            F::Resume(_) => "fleet resume",
            F::Doctor(_) => "fleet doctor",
            F::Report(_) => "fleet report",
            F::Ls(_) => "fleet ls",
            F::Agent(_) => "fleet agent",
        },
    }
}
