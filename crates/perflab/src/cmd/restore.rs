//! `perflab restore`: replay the knob journal after perflab was killed (SIGKILL, power
//! loss), writing every original value back, and remove the ftrace instances and tracefs
//! mounts the `trace` monitor of a dead perflab left.

use crate::cli::{Global, RestoreArgs};
use crate::cmd::common;

pub fn run(g: &Global, a: RestoreArgs) -> anyhow::Result<i32> {
    let path = common::journal_path(g);
    // Instances are journaled (replayed below); the sweep also finds, by pid, the
    // private tracefs mounts a killed perflab left and instances nothing journaled.
    let mut traces_clean = true;
    if !a.dry_run {
        let sys = common::sysroot(g)?;
        for line in perflab_monitors::trace::tracefs::sweep_stale(&sys) {
            match line {
                Ok(done) => crate::stdout_guard::line(done)?,
                Err(e) => {
                    traces_clean = false;
                    eprintln!("{e}");
                }
            }
        }
    }
    let pending = perflab_knobs::pending(&path)?;
    if pending.is_empty() {
        // A killed run leaves a lock file on every target it claimed, journaled or not;
        // those whose holder is gone and whose original is back go now.
        if !a.dry_run {
            let removed = perflab_knobs::target_lock::sweep_left();
            if removed > 0 {
                crate::stdout_guard::line(format!(
                    "removed {removed} lock file(s) left by perflab processes that did not finish"
                ))?;
            }
        }
        crate::stdout_guard::line(format!(
            "nothing to restore ({} has no pending settings)",
            path.display()
        ))?;
        return Ok(if traces_clean {
            0
        } else {
            crate::exit::FAILURE
        });
    }
    if a.dry_run {
        crate::stdout_guard::line(format!(
            "{} setting(s) would be restored from {}:",
            pending.len(),
            path.display()
        ))?;
        for e in &pending {
            crate::stdout_guard::line(format!("  {}", e.describe()))?;
        }
        return Ok(0);
    }
    let report = perflab_knobs::restore_pending(&path)?;
    for line in report.lines() {
        crate::stdout_guard::line(line)?;
    }
    Ok(if report.is_clean() && traces_clean {
        0
    } else {
        crate::exit::FAILURE
    })
}
