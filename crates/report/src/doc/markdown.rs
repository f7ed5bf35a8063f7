//! Blocks as GitHub-flavoured Markdown.

use std::fmt::Write as _;

use crate::doc::Block;

pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        let part = match b {
            Block::Heading { level, text } => {
                format!("{} {}\n", "#".repeat((*level).clamp(1, 6) as usize), text)
            }
            Block::Para(text) | Block::Note(text) => {
                format!("{}\n", escape(text).replace('\n', "\n\n"))
            }
            Block::Pre(text) => format!("```text\n{text}\n```\n"),
            Block::Caption(text) => format!("**{}**\n", escape(text)),
            Block::Table(t) => {
                // One header row: each unit after its name, as `size KiB`.
                let head: Vec<String> = t
                    .head
                    .iter()
                    .enumerate()
                    .map(|(i, h)| match t.units.get(i) {
                        Some(u) if !u.is_empty() => format!("{h} {u}"),
                        _ => h.clone(),
                    })
                    .collect();
                pipe_table(&head, &t.rows, &t.left)
            }
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

/// A pipe table: `head` then `rows`; the columns in `left` left-aligned (names), the rest
/// right-aligned (numbers). Pipes inside cells are escaped.
pub(crate) fn pipe_table(head: &[String], rows: &[Vec<String>], left: &[usize]) -> String {
    let esc = |c: &String| c.replace('|', "\\|");
    let head: Vec<String> = head.iter().map(esc).collect();
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(esc).collect()).collect();
    let cols = rows
        .iter()
        .map(Vec::len)
        .chain([head.len()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .chain([&head])
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .chain([3])
                .max()
                .unwrap_or(3)
        })
        .collect();
    let line = |cells: &[String], out: &mut String| {
        out.push('|');
        for (i, w) in widths.iter().enumerate() {
            let c = cells.get(i).map_or("", String::as_str);
            if left.contains(&i) {
                let _ = write!(out, " {c:<w$} |");
            } else {
                let _ = write!(out, " {c:>w$} |");
            }
        }
        out.push('\n');
    };
    let mut out = String::new();
    line(&head, &mut out);
    let rule: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if left.contains(&i) {
                format!(":{}", "-".repeat(w - 1))
            } else {
                format!("{}:", "-".repeat(w - 1))
            }
        })
        .collect();
    line(&rule, &mut out);
    for r in &rows {
        line(r, &mut out);
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
    fn pipe_tables_align_and_escape() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let t = pipe_table(&s(&["a", "bb"]), &[s(&["x|y", "1"]), s(&["z"])], &[0]);
        assert_eq!(
            t,
            "| a    |  bb |\n| :--- | --: |\n| x\\|y |   1 |\n| z    |     |\n"
        );
    }

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

    #[test]
    fn listings_are_fenced_and_captions_bold() {
        let out = render(&[
            Block::pre("> 100 : 4-0*"),
            Block::caption("variant=4k"),
            Block::note("n: a legend"),
        ]);
        assert_eq!(
            out,
            "```text\n> 100 : 4-0*\n```\n\n**variant=4k**\n\nn: a legend\n"
        );
    }
}
