//! Tables as aligned plain text, narrowed to a width when one is given (a mail).
//!
//! In order, the first form that fits is used:
//! 1. the aligned table, two spaces between columns, then one;
//! 2. when the first column is a long name: the name on a line of its own, the row's
//!    figures aligned under it;
//! 3. the columns split into several narrower tables, each repeating the key columns
//!    (the leading name columns), as R prints a wide data frame;
//! 4. each row as a small record of `column: value` lines.
//!
//! Every form keeps every cell: a mail reader gets the same numbers as the terminal.

use crate::doc::wrap::wrap;
use crate::doc::Table;
use crate::fmt;

/// A first column narrower than this is not worth a line of its own.
const NAME_ON_ITS_OWN_LINE: usize = 12;
const GAPS: [&str; 2] = ["  ", " "];

/// The table's lines, no wider than `width` when it is given.
pub fn fit_table(t: &Table, width: Option<usize>) -> String {
    let all: Vec<usize> = (0..columns(t)).collect();
    let Some(width) = width else {
        return aligned(t, &all, GAPS[0]);
    };
    for gap in GAPS {
        let text = aligned(t, &all, gap);
        if widest(&text) <= width {
            return text;
        }
    }
    if column_width(t, 0) >= NAME_ON_ITS_OWN_LINE {
        for gap in GAPS {
            if let Some(text) = stacked(t, width, gap) {
                return text;
            }
        }
    }
    if let Some(text) = split(t, width) {
        return text;
    }
    records(t, width)
}

fn columns(t: &Table) -> usize {
    t.rows
        .iter()
        .map(Vec::len)
        .chain([t.head.len(), t.units.len()])
        .max()
        .unwrap_or(0)
}

fn cell(cells: &[String], i: usize) -> String {
    cells.get(i).cloned().unwrap_or_default()
}

fn column_width(t: &Table, i: usize) -> usize {
    std::iter::once(&t.head)
        .chain(std::iter::once(&t.units))
        .chain(&t.rows)
        .map(|r| cell(r, i).chars().count())
        .max()
        .unwrap_or(0)
}

/// The columns `cols` of the table (header, units row when there is one, rows), aligned.
fn aligned(t: &Table, cols: &[usize], gap: &str) -> String {
    let pick = |cells: &[String]| cols.iter().map(|&i| cell(cells, i)).collect::<Vec<_>>();
    let mut lines = vec![pick(&t.head)];
    if !t.units.is_empty() {
        lines.push(pick(&t.units));
    }
    lines.extend(t.rows.iter().map(|r| pick(r)));
    let left: Vec<usize> = cols
        .iter()
        .enumerate()
        .filter(|(_, c)| t.left.contains(c))
        .map(|(i, _)| i)
        .collect();
    align_with(&lines, &left, gap)
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The first column on its own line, the other columns aligned under it, indented.
fn stacked(t: &Table, width: usize, gap: &str) -> Option<String> {
    let rest: Vec<usize> = (1..columns(t)).collect();
    let body = aligned(t, &rest, gap);
    let body: Vec<&str> = body.lines().collect();
    if body.iter().any(|l| l.chars().count() + 2 > width) {
        return None;
    }
    let heads = 1 + usize::from(!t.units.is_empty());
    let mut out = String::new();
    push_wrapped(&mut out, &cell(&t.head, 0), width, "");
    for line in &body[..heads] {
        out.push_str(&format!("  {line}\n"));
    }
    for (row, figures) in t.rows.iter().zip(&body[heads..]) {
        push_wrapped(&mut out, &cell(row, 0), width, "");
        out.push_str(&format!("  {figures}\n"));
    }
    Some(out)
}

/// Several tables of consecutive columns, each after the key columns; `None` when the key
/// columns with a single other column are already too wide.
fn split(t: &Table, width: usize) -> Option<String> {
    let n = columns(t);
    let keys = (0..n).take_while(|i| t.left.contains(i)).count().max(1);
    let key: Vec<usize> = (0..keys).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for c in keys..n {
        let mut trial = key.clone();
        trial.extend(&current);
        trial.push(c);
        if widest(&aligned(t, &trial, GAPS[1])) <= width {
            current.push(c);
        } else if current.is_empty() {
            return None;
        } else {
            groups.push(std::mem::take(&mut current));
            current.push(c);
            let mut alone = key.clone();
            alone.push(c);
            if widest(&aligned(t, &alone, GAPS[1])) > width {
                return None;
            }
        }
    }
    if !current.is_empty() {
        groups.push(current);
    }
    let tables: Vec<String> = groups
        .into_iter()
        .map(|g| {
            let mut cols = key.clone();
            cols.extend(g);
            GAPS.iter()
                .map(|gap| aligned(t, &cols, gap))
                .find(|text| widest(text) <= width)
                .unwrap_or_default()
        })
        .collect();
    Some(tables.join("\n"))
}

/// Each row as its name, then one `column: value` line per other cell.
fn records(t: &Table, width: usize) -> String {
    let mut out = String::new();
    for row in &t.rows {
        let name = row.first().map(String::as_str).unwrap_or("");
        push_wrapped(&mut out, name, width, "");
        for (i, cell) in row.iter().enumerate().skip(1) {
            let head = match (t.head.get(i), t.units.get(i)) {
                (Some(h), Some(u)) if !u.is_empty() => format!("{h} ({u})"),
                (Some(h), _) => h.clone(),
                (None, _) => String::new(),
            };
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

/// Aligns cells into columns: the columns in `left` left-aligned (names), the rest
/// right-aligned (numbers).
pub fn align(lines: &[Vec<String>], left: &[usize]) -> String {
    align_with(lines, left, "  ")
}

/// [`align`] with `gap` between columns.
pub fn align_with(lines: &[Vec<String>], left: &[usize], gap: &str) -> String {
    let cols = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        let cells: Vec<String> = l
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if left.contains(&i) {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    fmt::right(c, widths[i])
                }
            })
            .collect();
        out.push_str(cells.join(gap).trim_end());
        out.push('\n');
    }
    out
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
