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
            Block::Table(t) => pipe_table(&t.head, &t.rows, &t.left),
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

/// Keeps figures like `*` marks and `<=1` from turning into emphasis or HTML.
fn escape(text: &str) -> String {
    text.replace('*', "\\*").replace('<', "&lt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Table;

    #[test]
    fn headings_lists_and_tables() {
        let out = render(&[
            Block::heading(2, "Scan"),
            Block::para("4K* differs <5%"),
            Block::list("Notes", ["a"]),
            Block::Table(Table::new(
                vec!["p".into(), "v".into()],
                vec![vec!["a".into(), "1".into()]],
                vec![0],
            )),
        ]);
        assert_eq!(
            out,
            "## Scan\n\n4K\\* differs &lt;5%\n\n**Notes:**\n\n- a\n\n| p   |   v |\n| :-- | --: |\n| a   |   1 |\n"
        );
    }
}
