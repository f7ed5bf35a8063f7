//! `perflab man`: the manual page in roff, generated from the clap definitions and the
//! sections `man_page` adds: the top-level page on standard output, or with `--out DIR`
//! one page per subcommand (`perflab.1`, `perflab-run.1`, `perflab-fleet-run.1`, …) for a
//! package to install.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};
use crate::cmd::man_page;
use crate::exit::input;

pub fn run(a: ManArgs) -> anyhow::Result<i32> {
    let cmd = man_page::prepared(Cli::command());
    match &a.out {
        None => crate::stdout_guard::print(man_page::page(&cmd, None)?.roff)?,
        Some(dir) => {
            check_dir(dir)?;
            let pages = man_page::pages(&cmd)?;
            for p in &pages {
                let path = dir.join(&p.file);
                std::fs::write(&path, &p.roff)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            }
            eprintln!("{} manual pages written to {}/", pages.len(), dir.display());
        }
    }
    Ok(0)
}

/// As `report --html`, the directory must exist: a typo is an input error, not a tree of
/// new directories.
fn check_dir(dir: &Path) -> anyhow::Result<()> {
    match super::common::missing_dir(dir) {
        None => Ok(()),
        Some(why) => Err(input(format!("--out {}: {why}", dir.display()))),
    }
}
