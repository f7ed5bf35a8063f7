//! Blocks as plain text: the terminal (its width when the binary sets one, else as wide
//! as the tables need) and mail (72 columns).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::doc::fit::fit_table;
use crate::doc::wrap::wrap;
use crate::doc::Block;

/// The width of a mailing-list reply.
pub const MAIL_WIDTH: usize = 72;

/// The narrowest terminal text is fitted to: below it a table's records would be mostly
/// wrapped names.
pub const MIN_TERMINAL_WIDTH: usize = 40;

/// The width of the terminal that [`crate::Format::Text`] goes to, 0 for none. Set once by
/// the binary when its standard output is a terminal (issue 34 item 5: `doctor`, `list`
/// and `report` printed lines of 659 to 864 columns there); everything a command prints
/// goes to that one output, so it is the process's, not a parameter of every view. In a
/// pipe, a file or a test it stays 0: tables as wide as they need, for scripts and diffs.
static TERMINAL_WIDTH: AtomicUsize = AtomicUsize::new(0);

/// Fits terminal text to `width` columns (at least [`MIN_TERMINAL_WIDTH`]), or with
/// `None` lets it be as wide as it needs.
pub fn set_terminal_width(width: Option<usize>) {
    TERMINAL_WIDTH.store(stored_width(width), Ordering::Relaxed);
}

fn stored_width(width: Option<usize>) -> usize {
    width.map_or(0, |w| w.max(MIN_TERMINAL_WIDTH))
}

/// The width [`set_terminal_width`] set, if any.
pub fn terminal_width() -> Option<usize> {
    match TERMINAL_WIDTH.load(Ordering::Relaxed) {
        0 => None,
        w => Some(w),
    }
}

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
            // Each line on its own, as written where it fits (its columns aligned); a
            // wrapped one keeps its indent, its continuation two columns deeper (a hint
            // under a doctor line).
            Block::Pre(text) => text
                .split('\n')
                .map(|l| match width {
                    Some(w) if l.chars().count() > w => {
                        let body = l.trim_start_matches(' ');
                        lines(body, width, &l[..l.len() - body.len()], "  ")
                    }
                    _ => format!("{l}\n"),
                })
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
        // A caption sits on its block; so does a section under its rule (a blank line
        // there was one line more per section, issue 34 item 3).
        tight = matches!(b, Block::Caption(_) | Block::Heading { level: 1 | 2, .. });
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

/// Level 1 underlined with `=`, level 2 with `-`, level 3 as is.
fn heading(level: u8, text: &str, width: Option<usize>) -> String {
    let body = lines(text, width, "", "");
    let rule_len = body.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    match level {
        1 => format!("{body}{}\n", "=".repeat(rule_len)),
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
            "perflab report\n==============\ntwo runs\n\nNotes:\n  a\n\nx\n1\n"
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

    /// A terminal's text: lines laid out as written stay so where they fit, aligned; a
    /// longer one wraps under its own indent; a wide table is split as a mail's is.
    #[test]
    fn terminal_text_fits_its_width_and_keeps_what_fits() {
        let listing = format!("run  study\n  1  null\n    hint: {}", "word ".repeat(30));
        let table = Table::new(
            (0..12).map(|i| format!("column{i}")).collect(),
            vec![(0..12).map(|i| format!("{}", i * 1000)).collect()],
            vec![0],
        );
        let blocks = [Block::pre(listing), Block::Table(table)];
        let out = render(&blocks, Some(60));
        assert!(out.lines().all(|l| l.chars().count() <= 60), "{out}");
        assert!(
            out.starts_with("run  study\n  1  null\n    hint: word"),
            "{out}"
        );
        assert!(
            out.lines()
                .nth(3)
                .is_some_and(|l| l.starts_with("      word")),
            "{out}"
        );
        assert!(out.contains("column11") && out.contains("11000"), "{out}");
        // No width: as wide as it needs.
        assert!(render(&blocks, None)
            .lines()
            .any(|l| l.chars().count() > 100));
        assert_eq!(stored_width(None), 0);
        assert_eq!(stored_width(Some(10)), MIN_TERMINAL_WIDTH);
        assert_eq!(stored_width(Some(132)), 132);
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
