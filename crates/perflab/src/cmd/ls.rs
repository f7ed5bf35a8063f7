//! `perflab ls`: the stored runs, newest first (`perflab_report::views::ls`).

use crate::cli::{Global, LsArgs};
use crate::cmd::{common, envelope, hint};

pub fn run(g: &Global, a: LsArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    // A run whose row does not read back is not fatal: read_store's warning named it,
    // and the others are listed.
    let (runs, _bad) = store.readable_runs()?;
    let view =
        perflab_report::views::ls::view(&runs, &store.location().to_string(), &hint::db_flag(g))?;
    if a.format.is_json() {
        envelope::print(&view.json())?;
    } else {
        print!("{}", view.text());
    }
    Ok(0)
}
