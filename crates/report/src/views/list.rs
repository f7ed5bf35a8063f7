//! `perflab list`: the plug-ins and studies this perflab knows, one section per kind,
//! from the entries the binary read off the registries' descriptors.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::Section;
use crate::section::SectionId;
use crate::views::data::{to_json, Data};
use crate::views::View;

/// One plug-in or study: its name, the first line of its help, and a workload's
/// parameters.
#[derive(Serialize)]
pub struct Entry {
    pub name: &'static str,
    pub summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Param>,
}

#[derive(Serialize)]
pub struct Param {
    pub name: &'static str,
    pub help: &'static str,
    /// As the text says it: `integer 1..64`, `duration`, `a|b`.
    pub kind: String,
    pub default: Option<&'static str>,
}

/// Every kind of entry, in the text's order.
pub struct Listing {
    pub studies: Vec<Entry>,
    pub workloads: Vec<Entry>,
    pub monitors: Vec<Entry>,
    pub parsers: Vec<Entry>,
    pub knobs: Vec<Entry>,
}

/// The sections of `list`, one per kind: `studies`, `workloads`, `monitors`, `parsers`,
/// `knobs`.
pub struct ListView {
    pub sections: Vec<Data>,
}

pub fn view(l: &Listing) -> Result<ListView, ReportError> {
    let kinds: [(SectionId, &str, &[Entry]); 5] = [
        (
            SectionId::Studies,
            "Studies (perflab run STUDY)",
            &l.studies,
        ),
        (
            SectionId::Workloads,
            "Workloads (perflab run --workload NAME -p param=value)",
            &l.workloads,
        ),
        (
            SectionId::Monitors,
            "Monitors (--monitors a,b)",
            &l.monitors,
        ),
        (
            SectionId::Parsers,
            "Parsers (exec -p parser=NAME, perflab import --parser NAME)",
            &l.parsers,
        ),
        (
            SectionId::Knobs,
            "Knobs (--variant NAME:knob=value)",
            &l.knobs,
        ),
    ];
    let mut sections = Vec::new();
    for (id, title, entries) in kinds {
        sections.push(Data::lines(
            id,
            title,
            &lines(title, entries),
            to_json(&entries)?,
        ));
    }
    Ok(ListView { sections })
}

impl View for ListView {
    fn sections(&self) -> Vec<&dyn Section> {
        self.sections.iter().map(|s| s as &dyn Section).collect()
    }
}

impl ListView {
    pub fn text(&self) -> String {
        self.text_all()
    }

    pub fn json(&self) -> Map<String, Value> {
        self.json_all()
    }
}

/// `Title:`, then `  NAME         first line of its help` per entry, a workload's
/// parameters under it.
fn lines(title: &str, entries: &[Entry]) -> String {
    let mut out = format!("{title}:\n");
    for e in entries {
        out += &format!("  {:<12} {}\n", e.name, e.summary);
        for p in &e.params {
            let default = p
                .default
                .map(|d| format!(" [default: {d}]"))
                .unwrap_or_default();
            out += &format!("      {:<12} {} ({}){default}\n", p.name, p.help, p.kind);
        }
    }
    out
}
