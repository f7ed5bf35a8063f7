//! `perflab report` (and `fleet report`): everything known about one or more runs, built
//! by [`crate::full::build_report`] as parts, each part here a section keyed by its id in
//! every format, JSON included.

use serde_json::{Map, Value};

use crate::doc::Block;
use crate::error::ReportError;
use crate::full::{build_report, ReportOptions, RunData};
use crate::section::SectionId;
use crate::section::{self, Format, Section};
use crate::views::data::Data;
use crate::views::View;

pub struct ReportView {
    /// The report's title heading (`title` in JSON); the HTML page is named by it.
    pub title: Data,
    /// One section per id of [`section::REPORT`], in that order; a part the runs have
    /// nothing for has no blocks.
    pub parts: Vec<Data>,
}

/// The report of `runs`: with one run, its variants against the baseline; with several,
/// each later run against the first.
pub fn view(runs: &[RunData], opts: &ReportOptions) -> Result<ReportView, ReportError> {
    let full = build_report(runs, opts)?;
    // The full report cuts one part per id of section::REPORT, in its order.
    debug_assert!(full.parts.iter().map(|p| p.id).eq(section::REPORT_IDS));
    Ok(ReportView {
        title: Data {
            id: SectionId::Title,
            title: full.title.clone(),
            blocks: vec![Block::heading(1, full.title.clone())],
            json: Some(Value::String(full.title)),
        },
        parts: full.parts,
    })
}

impl View for ReportView {
    fn preamble(&self) -> Vec<&dyn Section> {
        vec![&self.title]
    }
    fn sections(&self) -> Vec<&dyn Section> {
        self.parts.iter().map(|p| p as &dyn Section).collect()
    }
    fn known(&self) -> &'static [&'static str] {
        section::REPORT
    }
}

impl ReportView {
    /// The title and the parts `wanted` names (all when empty), in `format`.
    pub fn render(&self, format: Format, wanted: &[String]) -> Result<String, ReportError> {
        self.render_picked(format, wanted)
    }

    /// The title and the parts `wanted` names (all when empty) by id.
    pub fn json(&self, wanted: &[String]) -> Result<Map<String, Value>, ReportError> {
        self.json_picked(wanted)
    }
}
