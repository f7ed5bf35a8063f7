//! Blocks as plain text: the terminal (no width) and mail (72 columns).

use crate::doc::fit::fit_table;
use crate::doc::wrap::wrap;
use crate::doc::Block;

/// The width of a mailing-list reply.
pub const MAIL_WIDTH: usize = 72;

/// Renders `blocks` as plain text; with `width`, no line is wider than it.
pub fn render(blocks: &[Block], width: Option<usize>) -> String {
    let mut out = String::new();
    let mut tight = false;
    for b in blocks {
        let part = match b {
            Block::Heading { level, text } => heading(*level, text, width),
            Block::Para(text) | Block::Caption(text) | Block::Note(text) => {
                lines(text, width, "", "")
            }
            // Each line on its own: only the continuation of a wrapped one is indented.
            Block::Pre(text) => text
                .split('\n')
                .map(|l| lines(l, width, "", "  "))
                .collect(),
            Block::Table(t) => fit_table(t, width),
            Block::List { title, items } => {
                if items.is_empty() {
                    continue;
                }
                let mut s = lines(&format!("{title}:"), width, "", "");
                for item in items {
                    s.push_str(&lines(item, width, "  ", "  "));
                }
                s
            }
            Block::Figure(_) => continue,
        };
        if !out.is_empty() && !tight && !matches!(b, Block::Note(_)) {
            out.push('\n');
        }
        tight = matches!(b, Block::Caption(_));
        out.push_str(&part);
    }
    out
}

/// `text` after `lead`; with a width, wrapped so that every line fits, continuation
/// lines indented by `more` beyond the lead.
fn lines(text: &str, width: Option<usize>, lead: &str, more: &str) -> String {
    let mut out = String::new();
    match width {
        Some(w) => {
            let room = w.saturating_sub(lead.chars().count());
            for l in wrap(text, room, more) {
                out.push_str(lead);
                out.push_str(l.trim_end());
                out.push('\n');
            }
        }
        None => {
            out.push_str(lead);
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

/// Level 1 between two rules of `=`, level 2 underlined with `-`, level 3 as is.
fn heading(level: u8, text: &str, width: Option<usize>) -> String {
    let body = lines(text, width, "", "");
    let rule_len = body.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    match level {
        1 => {
            let rule = "=".repeat(rule_len);
            format!("{rule}\n{body}{rule}\n")
        }
        2 => format!("{body}{}\n", "-".repeat(rule_len)),
        _ => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Table;

    #[test]
    fn blocks_are_separated_by_one_blank_line() {
        let blocks = vec![
            Block::heading(1, "perflab report"),
            Block::para("two runs"),
            Block::list("Notes", ["a"]),
            Block::list("Empty", Vec::<String>::new()),
            Block::Figure("<figure></figure>".into()),
            Block::Table(Table::new(vec!["x".into()], vec![vec!["1".into()]], vec![])),
        ];
        assert_eq!(
            render(&blocks, None),
            "==============\nperflab report\n==============\n\ntwo runs\n\nNotes:\n  a\n\nx\n1\n"
        );
    }

    #[test]
    fn a_listing_keeps_its_lines_and_indents_only_what_mail_wraps() {
        let listing = Block::pre(format!("> 100 : 0\n{}", "x ".repeat(40)));
        assert_eq!(
            render(std::slice::from_ref(&listing), None),
            format!("> 100 : 0\n{}\n", "x ".repeat(40))
        );
        let mail = render(&[listing], Some(MAIL_WIDTH));
        let lines: Vec<&str> = mail.lines().collect();
        assert_eq!(lines[0], "> 100 : 0");
        assert!(
            lines[1].starts_with("x x") && lines[2].starts_with("  x"),
            "{mail}"
        );
        assert!(
            lines.iter().all(|l| l.chars().count() <= MAIL_WIDTH),
            "{mail}"
        );
    }

    #[test]
    fn mail_wraps_prose_and_lists() {
        let long = "word ".repeat(40);
        let out = render(
            &[Block::para(long.clone()), Block::list("Notes", [long])],
            Some(MAIL_WIDTH),
        );
        assert!(
            out.lines().all(|l| l.chars().count() <= MAIL_WIDTH),
            "{out}"
        );
        assert!(out.lines().any(|l| l.starts_with("    word")), "{out}");
    }
}
