//! `perflab man`: the manual page in roff, generated from the clap definitions: the
//! top-level page on standard output, or with `--out DIR` one page per subcommand
//! (`perflab.1`, `perflab-run.1`, `perflab-fleet-run.1`, …) for a package to install.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};
use crate::exit::input;

pub fn run(a: ManArgs) -> anyhow::Result<i32> {
    let cmd = Cli::command();
    match &a.out {
        None => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cmd).render(&mut out)?;
        }
        Some(dir) => {
            check_dir(dir)?;
            clap_mangen::generate_to(cmd, dir)
                .map_err(|e| anyhow::anyhow!("cannot write the pages in {}: {e}", dir.display()))?;
            eprintln!("manual pages written to {}/", dir.display());
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
