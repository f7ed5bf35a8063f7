//! `perflab completions SHELL`: the shell's completion script, generated from the same
//! clap definitions that parse the command line, so it never lists a flag that is gone,
//! with the names of the registered workloads, monitors and parsers offered as values, and
//! the built-in studies after `run`.

use clap::builder::PossibleValuesParser;
use clap::{Command, CommandFactory};

use crate::cli::{Cli, CompletionsArgs};

pub fn run(a: CompletionsArgs) -> anyhow::Result<i32> {
    let mut cmd = with_plugin_names(Cli::command());
    // Generated whole first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "perflab", &mut script);
    std::io::Write::write_all(&mut crate::stdout_guard::Stdout, &script)?;
    Ok(0)
}

/// The command with the registries' names as the values of `run --workload`, `run
/// --monitors` and `import --parser`. Only the script sees them: parsing keeps its own
/// checks and their one-line errors.
fn with_plugin_names(cmd: Command) -> Command {
    let workloads = perflab_workloads::names();
    let monitors: Vec<&str> = perflab_monitors::names().to_vec();
    let mut parsers = perflab_parsers::names();
    parsers.push(super::import_json::NAME);
    // A path to a TOML file is a study too: the bash script registers `-o default`, so
    // where no study name matches, the shell completes file names as before.
    let studies = perflab_lab::presets::names();
    cmd.mut_subcommand("run", |c| {
        c.mut_arg("study", |a| {
            a.value_parser(PossibleValuesParser::new(studies))
        })
        .mut_arg("workload", |a| {
            a.value_parser(PossibleValuesParser::new(workloads))
        })
        .mut_arg("monitors", |a| {
            a.value_parser(PossibleValuesParser::new(monitors))
        })
    })
    .mut_subcommand("import", |c| {
        c.mut_arg("parser", |a| {
            a.value_parser(PossibleValuesParser::new(parsers))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_values_come_from_the_registries() {
        let cmd = with_plugin_names(Cli::command());
        let run = cmd.find_subcommand("run").unwrap();
        let values = |c: &Command, arg: &str| -> Vec<String> {
            let a = c.get_arguments().find(|a| a.get_id() == arg).unwrap();
            a.get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect()
        };
        assert_eq!(values(run, "workload"), perflab_workloads::names());
        assert_eq!(values(run, "study"), perflab_lab::presets::names());
        assert!(values(run, "monitors").contains(&"cpuidle".to_string()));
        let import = cmd.find_subcommand("import").unwrap();
        assert!(values(import, "parser").contains(&"fio".to_string()));
    }
}
