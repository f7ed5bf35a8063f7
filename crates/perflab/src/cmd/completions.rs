//! `perflab completions SHELL`: the shell's completion script, generated from the same
//! clap definitions that parse the command line, so it never lists a flag that is gone.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub fn run(a: CompletionsArgs) -> anyhow::Result<i32> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "perflab", &mut out);
    Ok(0)
}
