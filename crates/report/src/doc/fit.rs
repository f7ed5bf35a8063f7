//! Tables as aligned plain text, narrowed to a width when one is given (a mail).
//!
//! The aligned table is kept when it fits. Otherwise the first column (the point's name,
//! usually the widest) moves onto a line of its own above the row's figures; and when
//! even the figures do not fit, each row becomes a small record of `name: value` lines.
//! Every step keeps every cell: a mail reader gets the same numbers as the terminal.

use crate::doc::wrap::wrap;
use crate::doc::Table;
use crate::table_text::align;

/// The table's lines, no wider than `width` when it is given.
pub fn fit_table(t: &Table, width: Option<usize>) -> String {
    let mut lines = vec![t.head.clone()];
    lines.extend(t.rows.iter().cloned());
    let aligned = align(&lines, &t.left);
    let Some(width) = width else {
        return aligned;
    };
    if widest(&aligned) <= width {
        return aligned;
    }
    if let Some(stacked) = stacked(t, width) {
        return stacked;
    }
    records(t, width)
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The first column on its own line, the other columns aligned under it, indented.
fn stacked(t: &Table, width: usize) -> Option<String> {
    let rest = |cells: &[String]| cells.iter().skip(1).cloned().collect::<Vec<_>>();
    let mut lines = vec![rest(&t.head)];
    lines.extend(t.rows.iter().map(|r| rest(r)));
    let left: Vec<usize> = t.left.iter().filter(|&&i| i > 0).map(|i| i - 1).collect();
    let body = align(&lines, &left);
    let body: Vec<&str> = body.lines().collect();
    if body.iter().any(|l| l.chars().count() + 2 > width) {
        return None;
    }
    let mut out = String::new();
    let head = t.head.first().map(String::as_str).unwrap_or("");
    push_wrapped(&mut out, head, width, "");
    out.push_str(&format!("  {}\n", body[0]));
    for (row, figures) in t.rows.iter().zip(&body[1..]) {
        let name = row.first().map(String::as_str).unwrap_or("");
        push_wrapped(&mut out, name, width, "");
        out.push_str(&format!("  {figures}\n"));
    }
    Some(out)
}

/// Each row as its name, then one `column: value` line per other cell.
fn records(t: &Table, width: usize) -> String {
    let mut out = String::new();
    for row in &t.rows {
        let name = row.first().map(String::as_str).unwrap_or("");
        push_wrapped(&mut out, name, width, "");
        for (i, cell) in row.iter().enumerate().skip(1) {
            let head = t.head.get(i).map(String::as_str).unwrap_or("");
            let line = if head.is_empty() {
                cell.clone()
            } else {
                format!("{head}: {cell}")
            };
            push_wrapped(&mut out, &line, width, "  ");
        }
    }
    out
}

/// `text` wrapped to `width` with every line after `lead`; continuation lines are
/// indented two more columns.
fn push_wrapped(out: &mut String, text: &str, width: usize, lead: &str) {
    let room = width.saturating_sub(lead.chars().count());
    for line in wrap(text, room, "  ") {
        out.push_str(lead);
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_table_that_fits_is_left_alone() {
        let t = Table::new(s(&["point", "median"]), vec![s(&["a", "1.00"])], vec![0]);
        assert_eq!(fit_table(&t, Some(72)), fit_table(&t, None));
        assert_eq!(fit_table(&t, None), "point  median\na        1.00\n");
    }

    #[test]
    fn a_long_name_moves_onto_its_own_line() {
        let name = "engine=memcpy size=33554432 state=unpinned backing=4k extra=1";
        let t = Table::new(
            s(&["point", "median A", "median B", "change"]),
            vec![s(&[name, "1638.34", "8154.82", "+397.74%"])],
            vec![0],
        );
        let out = fit_table(&t, Some(72));
        assert!(out.lines().all(|l| l.chars().count() <= 72), "{out}");
        assert!(out.contains(name), "{out}");
        assert!(out.contains("+397.74%"), "{out}");
        let out = fit_table(&t, Some(20));
        assert!(out.lines().all(|l| l.chars().count() <= 20), "{out}");
        assert!(out.contains("  change: +397.74%"), "{out}");
    }

    proptest::proptest! {
        #[test]
        fn fitted_tables_keep_to_the_width(
            rows in proptest::collection::vec(
                proptest::collection::vec("[a-z0-9=.+% ]{0,40}", 1..9), 0..6),
            width in 20usize..100,
        ) {
            let head: Vec<String> = (0..8).map(|i| format!("col{i}")).collect();
            let t = Table::new(head, rows, vec![0]);
            let out = fit_table(&t, Some(width));
            for line in out.lines() {
                proptest::prop_assert!(line.chars().count() <= width, "{line:?}\n{out}");
            }
        }
    }
}
