//! The section trait and how a list of sections is rendered: what every table
//! implements, apart from the lists of ids the commands print (`section/mod.rs`), which
//! read the tables' registry; the tables read this file only, so the two do not import
//! each other.

use crate::doc::{self, Block};
use crate::section::id::SectionId;

/// How a list of sections is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The terminal: tables as wide as they need.
    Text,
    /// Plain text no wider than 72 columns, for a mailing-list reply.
    Mail,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// A self-contained HTML page.
    Html,
}

/// A part of a report.
pub trait Section {
    /// The stable name a reader selects the section by (`--section`), e.g. `summary`.
    fn id(&self) -> SectionId;
    /// What the section holds, in words (the HTML page's title when it stands alone).
    fn title(&self) -> String;
    /// The section's content, the single description every format renders.
    fn blocks(&self) -> Vec<Block>;
    /// The section's JSON form, where it has one.
    fn json(&self) -> Option<serde_json::Value> {
        None
    }
    /// This section alone in `format`.
    fn render(&self, format: Format) -> String
    where
        Self: Sized,
    {
        render(&[self as &dyn Section], format)
    }
}

/// `sections` one after the other, a blank line between them, in `format`; the HTML page
/// is titled by the first section.
pub fn render(sections: &[&dyn Section], format: Format) -> String {
    let blocks: Vec<Block> = sections.iter().flat_map(|s| s.blocks()).collect();
    match format {
        Format::Text => doc::text::render(&blocks, doc::text::terminal_width()),
        Format::Mail => doc::text::render(&blocks, Some(doc::text::MAIL_WIDTH)),
        Format::Markdown => doc::markdown::render(&blocks),
        Format::Html => {
            let title = sections
                .first()
                .map_or_else(|| "perflab".into(), |s| s.title());
            doc::html::render(&title, &blocks)
        }
    }
}
