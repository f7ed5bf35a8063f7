//! `perflab doctor`: what this machine supports, from the findings the binary collected
//! (`perflab_doctor::examine`, which walks the registries this crate does not link) and
//! their text.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::Section;
use crate::section::SectionId;
use crate::views::data::{to_json, Data};
use crate::views::View;

/// The one section of `doctor`: `checks`, a line per capability in text, the findings
/// in JSON.
pub struct DoctorView {
    pub checks: Data,
}

/// The view of `findings`, `text` their lines as the doctor words them; `tree` is the
/// system tree read instead of this machine's, when one was.
pub fn view<F: Serialize>(
    findings: &[F],
    text: &str,
    tree: Option<&Path>,
) -> Result<DoctorView, ReportError> {
    let lines = match tree {
        Some(t) => format!("(reading the tree at {})\n{text}", t.display()),
        None => text.to_string(),
    };
    Ok(DoctorView {
        checks: Data::lines(
            SectionId::Checks,
            "Capabilities",
            &lines,
            to_json(&findings)?,
        ),
    })
}

impl View for DoctorView {
    fn sections(&self) -> Vec<&dyn Section> {
        vec![&self.checks]
    }
}

impl DoctorView {
    pub fn text(&self) -> String {
        self.text_all()
    }

    /// `fleet doctor` reads `checks` of each host's document.
    pub fn json(&self) -> Map<String, Value> {
        self.json_all()
    }
}
