//! `perflab ls`: the stored runs, newest first, and how to resume the interrupted ones.

use perflab_core::record::{RunInfo, RunStatus};
use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::Section;
use crate::section::SectionId;
use crate::views::data::{to_json, Data};
use crate::views::View;

/// The one section of `ls`: `runs`, a line per run in text, the stored runs in JSON.
pub struct LsView {
    pub runs: Data,
}

/// The view of `runs` (newest first) in the store at `location`; `db_flag` (` --db
/// PATH` or nothing) goes into the resume hints.
pub fn view(runs: &[RunInfo], location: &str, db_flag: &str) -> Result<LsView, ReportError> {
    Ok(LsView {
        runs: Data::lines(
            SectionId::Runs,
            "Runs",
            &lines(runs, location, db_flag),
            to_json(&runs)?,
        ),
    })
}

impl View for LsView {
    fn sections(&self) -> Vec<&dyn Section> {
        vec![&self.runs]
    }
}

impl LsView {
    pub fn text(&self) -> String {
        self.text_all()
    }

    pub fn json(&self) -> Map<String, Value> {
        self.json_all()
    }
}

fn lines(runs: &[RunInfo], location: &str, db_flag: &str) -> String {
    if runs.is_empty() {
        return format!("no runs in {location}\n");
    }
    let mut out = format!(
        "{:>4}  {:<19}  {:<12}  {:<11}  {:>9}  {:<20}  label\n",
        "run", "created (UTC)", "study", "status", "done/plan", "host"
    );
    for r in runs {
        out += &format!(
            "{:>4}  {:<19}  {:<12}  {:<11}  {:>9}  {:<20}  {}\n",
            r.id,
            crate::fmt::utc(r.created_at),
            r.study,
            r.status.as_str(),
            format!("{}/{}", r.done, r.planned),
            r.fingerprint.hostname.as_deref().unwrap_or("?"),
            r.label.as_deref().unwrap_or_default()
        );
    }
    // Oldest first, as a person would pick them up again; a killed run is among these
    // (its claim went with its process).
    for r in runs
        .iter()
        .rev()
        .filter(|r| r.status == RunStatus::Interrupted)
    {
        out += &format!(
            "run {} interrupted: resume with: perflab run --resume {}{db_flag}\n",
            r.id, r.id
        );
    }
    out
}
