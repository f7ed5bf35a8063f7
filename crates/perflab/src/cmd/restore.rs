//! `perflab restore`: replay the knob journal after perflab was killed (SIGKILL, power
//! loss), writing every original value back.

use crate::cli::{Global, RestoreArgs};
use crate::cmd::common;

pub fn run(g: &Global, a: RestoreArgs) -> anyhow::Result<i32> {
    let path = common::journal_path(g);
    let pending = perflab_knobs::pending(&path)?;
    if pending.is_empty() {
        println!(
            "nothing to restore ({} has no pending settings)",
            path.display()
        );
        return Ok(0);
    }
    if a.dry_run {
        println!(
            "{} setting(s) would be restored from {}:",
            pending.len(),
            path.display()
        );
        for e in &pending {
            println!("  {}", e.describe());
        }
        return Ok(0);
    }
    let report = perflab_knobs::restore_pending(&path)?;
    for line in report.lines() {
        println!("{line}");
    }
    Ok(if report.is_clean() {
        0
    } else {
        crate::exit::FAILURE
    })
}
