//! `perflab show`: one run — fingerprint, plan status, results — or one CPU pair's
//! drill-down, or one measurement's threads (`perflab_report::views::show`).

use perflab_report::views::show;

use crate::cli::{Global, ShowArgs};
use crate::cmd::{common, envelope, hint};
use crate::exit::input;

pub fn run(g: &Global, a: ShowArgs) -> anyhow::Result<i32> {
    perflab_report::section::check_ids(&a.section, perflab_report::section::SHOW).map_err(input)?;
    if a.format.is_json() && (a.pair.is_some() || a.threads.is_some()) {
        // Said, not ignored: a script asking for JSON must not get text.
        return Err(input(
            "--format json shows the whole run; --pair and --threads print text only",
        ));
    }
    let store = common::read_store(g)?;
    let id = crate::run_ref::resolve(&store, a.run)?;
    let info = store.run(id)?;
    // Read as `report` reads a run, folded record by record as the store streams them
    // (perflab_report::slim): a run of 50,000 measurements loaded whole took seconds and
    // gigabytes. Metrics and threads are kept whole, histograms summed per cell, and
    // telemetry kept for each cell's first repetitions.
    let ms = common::report_records(&store, id, true)?;
    if let Some(pair) = &a.pair {
        let (x, y) = common::parse_pair("--pair", pair)?;
        crate::stdout_guard::line(show::pair(&info, &ms, x, y)?)?;
    } else if let Some(seq) = a.threads {
        crate::stdout_guard::print(show::threads(&info, &ms, seq)?)?;
    } else if a.format.is_json() {
        // The text's sections, every span comparison included.
        let view = show::view(&info, &ms, usize::MAX, &hint::db_flag(g))?;
        let adaptive = perflab_lab::adaptive::report(&info.spec, &ms);
        envelope::print(&view.document(&a.section, adaptive)?)?;
    } else {
        let cap = perflab_report::spans::ab::MAX_COMPARISONS;
        let view = show::view(&info, &ms, cap, &hint::db_flag(g))?;
        crate::stdout_guard::print(view.text(&a.section)?)?;
    }
    Ok(0)
}
