//! A section made of given parts, and the selection of a view's sections by id.

use crate::doc::Block;
use crate::error::ReportError;
use crate::section::{self, Section};

/// A section whose blocks and JSON a view gives: its own data (the stored run, the list
/// of runs, a registry's entries) beside the tables that have types of their own.
pub struct Data {
    pub id: &'static str,
    pub title: String,
    pub blocks: Vec<Block>,
    pub json: Option<serde_json::Value>,
}

impl Data {
    /// A section of lines laid out as written (`lines` without a final newline; none
    /// at all when empty), with `json` as its JSON form.
    pub fn lines(id: &'static str, title: &str, lines: &str, json: serde_json::Value) -> Self {
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
    fn id(&self) -> &'static str {
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

/// `value` as JSON; the views' data are plain structs and maps, which always encode.
pub(crate) fn to_json(value: &impl serde::Serialize) -> Result<serde_json::Value, ReportError> {
    Ok(serde_json::to_value(value)?)
}

/// The sections whose id `wanted` names (all when it is empty), in their order; an id
/// not in `known` (the ids the command prints) is an error that lists them.
pub fn pick<'a>(
    sections: impl IntoIterator<Item = &'a dyn Section>,
    wanted: &[String],
    known: &[&str],
) -> Result<Vec<&'a dyn Section>, ReportError> {
    section::select(sections.into_iter().collect(), wanted, known).map_err(ReportError::Section)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::{render, Format};

    #[test]
    fn lines_print_as_written_and_empty_ones_print_nothing() {
        let d = Data::lines("runs", "Runs", "a  b\n  c\n", serde_json::Value::Null);
        assert_eq!(render(&[&d], Format::Text), "a  b\n  c\n");
        let none = Data::lines("runs", "Runs", "", serde_json::Value::Null);
        assert_eq!(render(&[&none], Format::Text), "");
        assert_eq!(none.json(), Some(serde_json::Value::Null));
    }

    #[test]
    fn an_unknown_id_is_an_error_naming_the_known_ones() {
        let d = Data::lines("runs", "Runs", "x", serde_json::Value::Null);
        let err = pick([&d as &dyn Section], &["nope".into()], &["runs"])
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "--section nope: no such section (known: runs)"
        );
        assert_eq!(pick([&d as &dyn Section], &[], &["runs"]).unwrap().len(), 1);
    }
}
