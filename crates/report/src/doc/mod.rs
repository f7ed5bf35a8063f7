//! A report as a list of blocks (headings, paragraphs, tables, lists, figures), so that
//! one assembly renders four ways: the terminal, Markdown, a mail no wider than 72
//! columns, and a self-contained HTML page.

mod fit;
pub mod html;
pub mod markdown;
pub mod text;
mod wrap;

pub use fit::fit_table;
pub use wrap::wrap;

/// One piece of a report.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Level 1 is the report's title, 2 a section, 3 a sub-section.
    Heading { level: u8, text: String },
    /// Prose: re-wrapped to the width of a mail, one paragraph in Markdown and HTML.
    Para(String),
    Table(Table),
    /// A titled list; nothing is rendered when it has no items.
    List { title: String, items: Vec<String> },
    /// An inline `<figure>` (see `crate::plot`); only the HTML page shows it.
    Figure(String),
}

/// Cells of a table: `head` then `rows`; the columns in `left` are names (left-aligned),
/// the rest numbers (right-aligned).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub left: Vec<usize>,
}

impl Table {
    pub fn new(head: Vec<String>, rows: Vec<Vec<String>>, left: Vec<usize>) -> Self {
        Self { head, rows, left }
    }
}

impl Block {
    pub fn heading(level: u8, text: impl Into<String>) -> Self {
        Block::Heading {
            level,
            text: text.into(),
        }
    }

    pub fn para(text: impl Into<String>) -> Self {
        Block::Para(text.into())
    }

    pub fn list<T: ToString>(title: impl Into<String>, items: impl IntoIterator<Item = T>) -> Self {
        Block::List {
            title: title.into(),
            items: items.into_iter().map(|i| i.to_string()).collect(),
        }
    }
}
