//! `perflab ls`: the stored runs, newest first (`perflab_report::views::ls`), those
//! `--study`, `--label`, `--since` and `--limit` pick (`ls_filter`).

use crate::cli::{Global, LsArgs};
use crate::cmd::ls_filter::Filter;
use crate::cmd::{common, envelope, hint};

pub fn run(g: &Global, a: LsArgs) -> anyhow::Result<i32> {
    let filter = Filter::of(&a, perflab_lab::runner::now_epoch())?;
    let store = common::read_store(g)?;
    // A run whose row does not read back is not fatal: read_store's warning named it,
    // and the others are listed.
    let (runs, _bad) = store.readable_runs()?;
    let runs = filter.apply(runs);
    // "no runs in DB matching --study x" when the filters left none.
    let location = format!("{}{}", store.location(), filter.describe(&a));
    let view = perflab_report::views::ls::view(&runs, &location, &hint::db_flag(g))?;
    if a.format.is_json() {
        envelope::print(&view.json())?;
    } else {
        crate::stdout_guard::print(view.text())?;
    }
    Ok(0)
}
