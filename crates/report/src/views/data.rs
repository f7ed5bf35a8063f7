//! A section made of given parts, and the selection of a view's sections by id.

use crate::error::ReportError;
pub use crate::section::data::Data;
use crate::section::{self, Section};

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
    use crate::section::SectionId;
    use crate::section::{render, Format};

    #[test]
    fn lines_print_as_written_and_empty_ones_print_nothing() {
        let d = Data::lines(
            SectionId::Runs,
            "Runs",
            "a  b\n  c\n",
            serde_json::Value::Null,
        );
        assert_eq!(render(&[&d], Format::Text), "a  b\n  c\n");
        let none = Data::lines(SectionId::Runs, "Runs", "", serde_json::Value::Null);
        assert_eq!(render(&[&none], Format::Text), "");
        assert_eq!(none.json(), Some(serde_json::Value::Null));
    }

    #[test]
    fn an_unknown_id_is_an_error_naming_the_known_ones() {
        let d = Data::lines(SectionId::Runs, "Runs", "x", serde_json::Value::Null);
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
