//! GitHub-flavoured Markdown: pipe tables padded to line up in the raw text, so the same
//! output reads well pasted into a mail and rendered in a pull request.

use std::fmt::Write as _;

use crate::compare::{ComparisonTable, UnavailableNote};
use crate::distribution::Distribution;
use crate::table_text::{
    cells, footnotes, headed_list, header_lines, row_notes, unavailable_items, unmatched_items,
};

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

/// A bold title and a bullet list after a blank line, or nothing without items.
pub(crate) fn list<T: std::fmt::Display>(
    title: &str,
    items: impl IntoIterator<Item = T>,
) -> String {
    headed_list(&format!("\n**{title}:**\n"), "- ", items)
}

pub(crate) fn unavailable_list(unavailable: &[UnavailableNote]) -> String {
    list(
        "Variants not measured on this machine",
        unavailable_items(unavailable),
    )
}

/// Lines kept apart when rendered: one paragraph each, which reads the same in a mail
/// as in a rendered pull request (a backslash hard break would show in the mail).
pub(crate) fn lines_paragraph(lines: &[String]) -> String {
    let mut out = lines.join("\n\n");
    out.push('\n');
    out
}

impl ComparisonTable {
    /// The comparison table as Markdown: the header lines, the pipe table, then what
    /// could not be compared, notes and unavailable variants as lists.
    pub fn render_markdown(&self) -> String {
        let mut out = lines_paragraph(&header_lines(self));
        out.push('\n');
        let (lines, left) = cells(self);
        let (head, rows) = lines
            .split_first()
            .map_or((&[][..], &[][..]), |(h, r)| (&h[..], r));
        out.push_str(&pipe_table(head, rows, &left));
        let notes = footnotes(self);
        if !notes.is_empty() {
            out.push('\n');
            out.push_str(&lines_paragraph(
                &notes.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            ));
        }
        out.push_str(&list("Not compared", unmatched_items(self)));
        out.push_str(&list("Notes", self.notes.iter().chain(&row_notes(self))));
        out.push_str(&unavailable_list(&self.unavailable));
        out
    }
}

impl Distribution {
    /// The bucket counts as one pipe table, rows of each bucket named (`*` = adjusted
    /// p < alpha).
    pub fn render_markdown(&self) -> String {
        let mut out = format!(
            "**Regression of {}: {} vs {}** ({}; positive = worse), {} instances\n\n",
            self.metric,
            self.b_label,
            self.a_label,
            self.design.name(),
            self.total
        );
        let head: Vec<String> = [
            "regression %",
            "instances",
            "significant",
            &format!("rows (* = adjusted p < {})", self.alpha),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rows = self.bucket_rows();
        out.push_str(&pipe_table(&head, &rows, &[0, 3]));
        if !self.unclassified.is_empty() {
            let _ = writeln!(
                out,
                "\nNot classified (baseline median 0, change in percent undefined): {}",
                self.unclassified.join(" ")
            );
        }
        out.push_str(&list("Not compared", &self.unmatched));
        out.push_str(&unavailable_list(&self.unavailable));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_tables_align_and_escape() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let t = pipe_table(&s(&["a", "bb"]), &[s(&["x|y", "1"]), s(&["z"])], &[0]);
        assert_eq!(
            t,
            "| a    |  bb |\n| :--- | --: |\n| x\\|y |   1 |\n| z    |     |\n"
        );
        assert_eq!(list("T", Vec::<String>::new()), "");
        assert_eq!(list("T", ["a"]), "\n**T:**\n\n- a\n");
        assert_eq!(lines_paragraph(&s(&["a", "b"])), "a\n\nb\n");
    }
}
