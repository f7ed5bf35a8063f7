//! `perflab push RUN... --to URL|PATH`: copies runs from this database into another (a
//! team's PostgreSQL store, another file), idempotently: the copy is found again by the
//! run's uid, and only what the target lacks is added.

use perflab_store::{copy_run, Location, Store};

use crate::cli::{Global, PushArgs};
use crate::cmd::common;
use crate::exit::input;

pub fn run(g: &Global, a: PushArgs) -> anyhow::Result<i32> {
    let src = common::read_store(g)?;
    let ids: Vec<i64> = if a.all {
        let mut ids: Vec<i64> = src.runs()?.iter().map(|r| r.id).collect();
        ids.reverse(); // oldest first, so the target numbers them in the same order
        ids
    } else if a.runs.is_empty() {
        return Err(input("push: name the runs to push (RUN...) or give --all"));
    } else {
        // Every run is checked before anything is copied: a typo copies nothing.
        let ids = crate::run_ref::resolve_all(&src, &a.runs)?;
        for &id in &ids {
            src.run(id)?;
        }
        ids
    };
    let to = Location::from_os(a.to.as_os_str());
    if to == *src.location() {
        return Err(input(format!(
            "push: --to {to} is the database the runs are read from"
        )));
    }
    let mut dst = Store::open_location(&to)?;
    let (mut runs, mut total) = (0, 0);
    for id in ids {
        let r = copy_run(&src, id, &mut dst)?;
        let what = if r.created {
            "created".to_string()
        } else if r.appended > 0 {
            format!("{} more planned", r.appended)
        } else {
            "there already".to_string()
        };
        crate::stdout_guard::line(format!(
            "run {id} -> run {} in {}: {what}, {} ({} there already)",
            r.run,
            dst.location(),
            new_measurements(r.copied),
            r.skipped
        ))?;
        runs += 1;
        total += r.copied;
    }
    if runs > 1 {
        crate::stdout_guard::line(format!("{runs} runs pushed: {}", new_measurements(total)))?;
    }
    Ok(0)
}

fn new_measurements(n: u32) -> String {
    if n == 1 {
        "1 new measurement".into()
    } else {
        format!("{n} new measurements")
    }
}
