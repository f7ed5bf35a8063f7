//! `perflab ls`: the stored runs, newest first, and how to resume the interrupted ones.

use perflab_core::record::{RunInfo, RunStatus};
use serde_json::{Map, Value};

use crate::doc::{Block, Table};
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
    let json = to_json(&runs)?;
    if runs.is_empty() {
        return Ok(LsView {
            runs: Data::lines(
                SectionId::Runs,
                "Runs",
                &format!("no runs in {location}"),
                json,
            ),
        });
    }
    // A table, so that a terminal narrower than its rows gets it split as a mail does
    // rather than each row wrapped.
    let mut blocks = vec![Block::Table(table(runs))];
    let hints = resume_hints(runs, db_flag);
    if !hints.is_empty() {
        blocks.push(Block::note(hints.trim_end()));
    }
    Ok(LsView {
        runs: Data {
            id: SectionId::Runs,
            title: "Runs".into(),
            blocks,
            json: Some(json),
        },
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

fn table(runs: &[RunInfo]) -> Table {
    let head = [
        "run",
        "created (UTC)",
        "study",
        "status",
        "done/plan",
        "host",
        "label",
    ];
    let rows = runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                crate::fmt::utc(r.created_at),
                r.study.clone(),
                r.status.as_str().to_string(),
                format!("{}/{}", r.done, r.planned),
                r.fingerprint.hostname.as_deref().unwrap_or("?").to_string(),
                r.label.clone().unwrap_or_default(),
            ]
        })
        .collect();
    // The run and its counts are numbers; the rest names, read from the left.
    Table::new(head.map(String::from).to_vec(), rows, vec![1, 2, 3, 5, 6])
}

/// How to resume each interrupted run: oldest first, as a person would pick them up
/// again; a killed run is among these (its claim went with its process).
fn resume_hints(runs: &[RunInfo], db_flag: &str) -> String {
    let mut out = String::new();
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
