//! Blocks as GitHub-flavoured Markdown.

use crate::doc::Block;
use crate::markdown::pipe_table;

pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        let part = match b {
            Block::Heading { level, text } => {
                format!("{} {}\n", "#".repeat((*level).clamp(1, 6) as usize), text)
            }
            Block::Para(text) => format!("{}\n", escape(text).replace('\n', "\n\n")),
            Block::Table(t) => pipe_table(&t.joined_head(), &t.rows, &t.left),
            Block::List { title, items } => {
                if items.is_empty() {
                    continue;
                }
                let mut s = format!("**{}:**\n\n", escape(title));
                for i in items {
                    s.push_str(&format!("- {}\n", escape(i)));
                }
                s
            }
            Block::Figure(_) => continue,
        };
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&part);
    }
    out
}

/// Keeps `*` marks from turning into emphasis, and a `<` that could open an HTML tag
/// from vanishing; `p < 0.05` and `<= 1` stay as they are, readable in the raw text.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push_str("\\*"),
            '<' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) =>
            {
                out.push_str("&lt;")
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Table;

    #[test]
    fn headings_lists_and_tables() {
        let out = render(&[
            Block::heading(2, "Scan"),
            Block::para("4K* differs <5% p < 0.05 <b>"),
            Block::list("Notes", ["a"]),
            Block::Table(Table::new(
                vec!["p".into(), "v".into()],
                vec![vec!["a".into(), "1".into()]],
                vec![0],
            )),
        ]);
        assert_eq!(
            out,
            "## Scan\n\n4K\\* differs <5% p < 0.05 &lt;b>\n\n**Notes:**\n\n- a\n\n| p   |   v |\n| :-- | --: |\n| a   |   1 |\n"
        );
    }
}
