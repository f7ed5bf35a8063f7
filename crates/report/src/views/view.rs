//! What every command's view is: sections in order, the ids `--section` may pick among
//! them, and what is printed whatever it picks. Rendering and JSON are the same for all
//! views, so they are written once here; a view that lays its text out its own way (the
//! scan in the comparison's place, the span comparisons left out) still takes its
//! sections and its JSON from here.

use serde_json::{Map, Value};

use crate::error::ReportError;
use crate::section::{self, Format, Section, SectionId};
use crate::views::data::pick;

/// A command's view (`show`, `compare`, `report`, the end of `run`, `ls`, `list`,
/// `doctor`).
pub trait View {
    /// What is printed before the sections whatever `--section` picks: a run's header,
    /// the report's title, the setup differences of two runs.
    fn preamble(&self) -> Vec<&dyn Section> {
        Vec::new()
    }
    /// Every section the view holds, in order.
    fn sections(&self) -> Vec<&dyn Section>;
    /// The ids `--section` may name; a view with none takes no `--section`.
    fn known(&self) -> &'static [&'static str] {
        &[]
    }
    /// The ids the view may hold several times: a list in JSON.
    fn many(&self) -> &'static [SectionId] {
        &[]
    }
    /// The preamble, then the sections `wanted` names (all when empty); an id not in
    /// [`View::known`] is an error that lists them.
    fn picked(&self, wanted: &[String]) -> Result<Vec<&dyn Section>, ReportError> {
        let mut out = self.preamble();
        out.extend(pick(self.sections(), wanted, self.known())?);
        Ok(out)
    }
    /// [`View::picked`] in `format`.
    fn render_picked(&self, format: Format, wanted: &[String]) -> Result<String, ReportError> {
        Ok(section::render(&self.picked(wanted)?, format))
    }
    /// [`View::picked`] keyed by id.
    fn json_picked(&self, wanted: &[String]) -> Result<Map<String, Value>, ReportError> {
        Ok(section::json(&self.picked(wanted)?, self.many()))
    }
    /// Every section, the preamble first, as terminal text.
    fn text_all(&self) -> String {
        let mut all = self.preamble();
        all.extend(self.sections());
        section::render(&all, Format::Text)
    }
    /// Every section, the preamble first, keyed by id.
    fn json_all(&self) -> Map<String, Value> {
        let mut all = self.preamble();
        all.extend(self.sections());
        section::json(&all, self.many())
    }
}
