//! What a finished run shows: its view (`perflab_report::views::after_run`), the drill-down
//! written beside it, printed as text or as the JSON document.

use std::path::Path;

use perflab_report::views::after_run::{AfterRun, EndDoc, EndView};
use perflab_store::{MeasurementRecord, RunInfo, Store};

use crate::cmd::drilldown_dir;
use crate::cmd::run_end::RunEnd;

/// Prints the end of run `info` (`ms` its measurements): its view as text, or with
/// `json` the document that holds it and how the run ended (`end`); writes the
/// drill-down first, to `out` or beside the database. `db_flag` is ` --db PATH` when one
/// was given, for the commands the text names.
pub fn print(
    store: &Store,
    (info, ms): (&RunInfo, &[MeasurementRecord]),
    out: Option<&Path>,
    end: &RunEnd,
    json: bool,
    db_flag: &str,
) -> anyhow::Result<()> {
    let after = AfterRun::of(info, ms, out, || {
        drilldown_dir::default_dir(&info.study, info.id, store.path())
    })?;
    let cap = match json {
        true => usize::MAX,
        false => perflab_report::spans::ab::MAX_COMPARISONS,
    };
    let view = EndView::of(info, ms, after, (cap, db_flag))?;
    let drilldown = view.write_drilldown(info, ms)?;
    if !json {
        crate::stdout_guard::print(view.text(drilldown.as_deref()))?;
        return Ok(());
    }
    let doc = EndDoc {
        end: end.clone(),
        message: end.last_line(db_flag),
        database: database_location(store),
        study: &info.study,
        workload: &info.workload,
        label: info.label.as_deref(),
        unavailable: &info.unavailable,
        comparisons: view.comparisons_json(),
        drilldown,
        sections: view.sections_json(),
        adaptive: perflab_lab::adaptive::report(&info.spec, ms),
    };
    crate::cmd::envelope::print(&doc)
}

/// Where the run's results are: the database file, absolute so a script (or a person
/// reading the end of a run) can open it from anywhere, or the server's location.
pub fn database_location(store: &Store) -> String {
    match store.path() {
        Some(p) => std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.into())
            .display()
            .to_string(),
        None => store.location().to_string(),
    }
}
