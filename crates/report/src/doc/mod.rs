//! A report as a list of blocks (headings, paragraphs, tables, lists, figures), so that
//! one assembly renders four ways: the terminal, Markdown, a mail no wider than 72
//! columns, and a self-contained HTML page.

mod fit;
pub mod html;
pub mod markdown;
pub mod text;
mod wrap;

pub use fit::{align, fit_table};
pub use wrap::wrap;

/// One piece of a report.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Level 1 is the report's title, 2 a section, 3 a sub-section.
    Heading {
        level: u8,
        text: String,
    },
    /// Prose: re-wrapped to the width of a mail, one paragraph in Markdown and HTML.
    Para(String),
    /// A line said of the next block, a table's name: plain text puts that block right
    /// under it, with no blank line; Markdown sets it in bold.
    Caption(String),
    /// Lines laid out as they are, a seed's own listing: plain text prints them as
    /// written (a mail wraps the long ones), Markdown fences them, HTML sets them in `<pre>`.
    Pre(String),
    /// Lines said of the block above, a table's legend: plain text puts them right under
    /// it, with no blank line; elsewhere they are a paragraph.
    Note(String),
    Table(Table),
    /// A titled list; nothing is rendered when it has no items.
    List {
        title: String,
        items: Vec<String>,
    },
    /// An inline `<figure>` (see `crate::plot`); only the HTML page shows it.
    Figure(String),
}

/// Cells of a table: `head` then `rows`; the columns in `left` are names (left-aligned),
/// the rest numbers (right-aligned).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub head: Vec<String>,
    /// A second header row of units under the names (`MiB/s`), as the seed's scans
    /// print them; empty when the names say it all.
    pub units: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub left: Vec<usize>,
}

impl Table {
    pub fn new(head: Vec<String>, rows: Vec<Vec<String>>, left: Vec<usize>) -> Self {
        Self {
            head,
            units: Vec::new(),
            rows,
            left,
        }
    }

    /// The header with each unit joined to its name, `4k (MiB/s)`, for formats with
    /// one header row.
    pub fn joined_head(&self) -> Vec<String> {
        self.head
            .iter()
            .enumerate()
            .map(|(i, h)| match self.units.get(i) {
                Some(u) if !u.is_empty() => format!("{h} ({u})"),
                _ => h.clone(),
            })
            .collect()
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

    pub fn caption(text: impl Into<String>) -> Self {
        Block::Caption(text.into())
    }

    pub fn pre(text: impl Into<String>) -> Self {
        Block::Pre(text.into())
    }

    pub fn note(text: impl Into<String>) -> Self {
        Block::Note(text.into())
    }

    pub fn list<T: ToString>(title: impl Into<String>, items: impl IntoIterator<Item = T>) -> Self {
        Block::List {
            title: title.into(),
            items: items.into_iter().map(|i| i.to_string()).collect(),
        }
    }
}
