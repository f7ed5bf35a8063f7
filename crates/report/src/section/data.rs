//! A section made of given blocks and JSON: what a view or the full report assembles
//! from data that has no table type of its own.

use crate::doc::Block;
use crate::section::Section;
use crate::section::SectionId;

/// A section whose blocks and JSON a view gives: its own data (the stored run, the list
/// of runs, a registry's entries) beside the tables that have types of their own.
#[derive(Clone, Debug)]
pub struct Data {
    pub id: SectionId,
    pub title: String,
    pub blocks: Vec<Block>,
    pub json: Option<serde_json::Value>,
}

impl Data {
    /// A section of lines laid out as written (`lines` without a final newline; none
    /// at all when empty), with `json` as its JSON form.
    pub fn lines(id: SectionId, title: &str, lines: &str, json: serde_json::Value) -> Self {
        let lines = lines.strip_suffix('\n').unwrap_or(lines);
        Self {
            id,
            title: title.into(),
            blocks: if lines.is_empty() {
                Vec::new()
            } else {
                vec![Block::Pre(lines.into())]
            },
            json: Some(json),
        }
    }
}

impl Section for Data {
    fn id(&self) -> SectionId {
        self.id
    }
    fn title(&self) -> String {
        self.title.clone()
    }
    fn blocks(&self) -> Vec<Block> {
        self.blocks.clone()
    }
    fn json(&self) -> Option<serde_json::Value> {
        self.json.clone()
    }
}
