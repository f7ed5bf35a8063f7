//! The cells and words of the comparison table, which its blocks (`crate::tables::blocks`) are
//! made of, and the titled lists of the drill-down files.

use std::fmt::Write as _;

use perflab_core::Better;
use perflab_stats::fmt_p;

use crate::fmt;
pub(crate) use crate::tables::compare::verdict::verdict_rule;
use crate::tables::compare::verdict::{level_label, spread_wide, wide, wide_note};
use crate::tables::compare::{ComparisonTable, TableKind, UnavailableNote};

/// What is compared, how A and B are named, what the comparison rests on (its design and,
/// for separate runs, the drift guard), and how to read the figures.
pub(crate) fn header_lines(t: &ComparisonTable) -> Vec<String> {
    let unit = t.unit.symbol();
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" [{unit}]")
    };
    let what = match &t.kind {
        TableKind::Variants { run, .. } => format!("run {run}"),
        TableKind::Runs { a, b } => format!("run {b} vs run {a}"),
    };
    let mut lines = vec![
        format!(
            "{what}: median {}{unit}, {}",
            t.metric,
            better_text(t.better)
        ),
        format!("A = {}, B = {}", t.a_label, t.b_label),
        t.design.line(),
    ];
    lines.extend(t.drift.iter().flat_map(|d| d.lines()));
    let all_void = !t.rows.is_empty()
        && t.rows
            .iter()
            .all(|r| r.cmp.verdict == perflab_stats::Verdict::Void);
    lines.push(match all_void {
        // Not "see Not compared": the rows are there, each void with its reason.
        true => "no row could be compared (every row void: see the notes), no verdict".into(),
        false => verdict_rule(&t.config, &t.p_adjustment, t.design, shown_level(t)),
    });
    lines
}

/// The header row and one row of cells per compared point, with the indices of the
/// left-aligned (name) columns.
pub(crate) fn cells(t: &ComparisonTable) -> (Vec<Vec<String>>, Vec<usize>) {
    let by_run = matches!(t.kind, TableKind::Runs { .. });
    let first = if t.rows.iter().all(|r| r.pair.is_some()) && !t.rows.is_empty() {
        "pair"
    } else {
        "point"
    };
    let mut header = vec![first.to_string()];
    if by_run {
        header.push("variant".into());
    }
    let ci_head = format!("{} CI", level_label(shown_level(t)));
    for h in [
        "n A", "n B", "median A", "median B", "change", &ci_head, "p", "p adj", "verdict",
    ] {
        header.push(h.to_string());
    }
    let mut lines = vec![header];
    for r in &t.rows {
        let c = &r.cmp;
        let mut cells = vec![r.label.clone()];
        if by_run {
            cells.push(r.variant.clone().unwrap_or_default());
        }
        cells.push(with_failed(c.a.n, r.failed_a));
        cells.push(with_failed(c.b.n, r.failed_b));
        cells.push(fmt::value(c.a.median));
        cells.push(fmt::value(c.b.median));
        cells.push(c.change_pct.map_or("n/a".into(), fmt::pct));
        let ci = c.change_ci_pct.map_or("n/a".into(), fmt::pct_ci);
        cells.push(if wide(c, &t.config) {
            format!("{ci}!")
        } else {
            ci
        });
        cells.push(fmt_p(c.p_value));
        cells.push(fmt_p(c.p_adjusted));
        cells.push(c.symbol().to_string());
        lines.push(cells);
    }
    let last = lines[0].len() - 1;
    let left: Vec<usize> = if by_run {
        vec![0, 1, last]
    } else {
        vec![0, last]
    };
    (lines, left)
}

/// What the table's marks mean, for the marks it uses.
pub(crate) fn footnotes(t: &ComparisonTable) -> Vec<&'static str> {
    let mut out = Vec::new();
    if t.rows.iter().any(|r| r.failed_a + r.failed_b > 0) {
        out.push("n: successful measurements (+failed ones, not counted)");
    }
    if t.rows.iter().any(|r| wide(&r.cmp, &t.config)) {
        out.push("!: a spread too wide to decide, or a change unlike its medians (notes)");
    }
    // A void row shows no interval (n/a), so its level is nobody's business.
    if t.rows
        .iter()
        .filter(|r| r.cmp.verdict != perflab_stats::Verdict::Void)
        .any(|r| (r.cmp.decision.level - shown_level(t)).abs() > 1e-12)
    {
        out.push(
            "CI: rows at another level than the column's (`same` rows: two one-sided tests; \
             rows measured until decided: their look's share) are at their own (JSON: \
             decision.level)",
        );
    }
    out
}

pub(crate) fn unmatched_items(t: &ComparisonTable) -> impl Iterator<Item = String> + '_ {
    t.unmatched.iter().map(|u| {
        let v = u
            .variant
            .as_ref()
            .map(|v| format!(" [{v}]"))
            .unwrap_or_default();
        format!("{}{v}: {}", u.label, u.reason)
    })
}

fn with_failed(n: usize, failed: u32) -> String {
    if failed > 0 {
        format!("{n}+{failed}")
    } else {
        n.to_string()
    }
}

pub(crate) fn better_text(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
        Better::Neither => "no better direction",
    }
}

/// Row notes, each said once with the rows it applies to (a 40-pair run with 3
/// repetitions would otherwise repeat the same caveat 40 times).
pub(crate) fn row_notes(t: &ComparisonTable) -> Vec<String> {
    let wide_rows = t
        .rows
        .iter()
        .filter(|r| spread_wide(&r.cmp, &t.config))
        .map(|r| wide_note(&r.label, &r.cmp, &t.config));
    let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
    for r in &t.rows {
        let own = crate::tables::compare::family::decision_notes(&r.cmp);
        for n in r.cmp.notes.iter().chain(&own) {
            match grouped.iter_mut().find(|(text, _)| text == n) {
                Some((_, labels)) => labels.push(r.label.clone()),
                None => grouped.push((n.clone(), vec![r.label.clone()])),
            }
        }
    }
    grouped
        .into_iter()
        .map(|(text, labels)| {
            let who = if labels.len() == t.rows.len() && labels.len() > 1 {
                "all rows".to_string()
            } else {
                labels.join(", ")
            };
            format!("{who}: {text}")
        })
        .chain(crate::tables::compare::family::disagreement_note(
            t.rows.iter().map(|r| (r.label.clone(), &r.cmp)),
        ))
        .chain(wide_rows)
        .collect()
}

pub(crate) fn unavailable_text(unavailable: &[UnavailableNote]) -> String {
    titled_list(
        "Variants not measured on this machine",
        unavailable_items(unavailable),
    )
}

/// A titled, indented list after a blank line (`\nNotes:\n  …`), or nothing when there
/// are no items; for the drill-down files.
pub(crate) fn titled_list<T: std::fmt::Display>(
    title: &str,
    items: impl IntoIterator<Item = T>,
) -> String {
    let mut out = String::new();
    for item in items {
        if out.is_empty() {
            let _ = writeln!(out, "\n{title}:");
        }
        let _ = writeln!(out, "  {item}");
    }
    out
}

/// The lines of the "Variants not measured" list, in text and Markdown alike.
pub(crate) fn unavailable_items(
    unavailable: &[UnavailableNote],
) -> impl Iterator<Item = String> + '_ {
    unavailable
        .iter()
        .map(|u| format!("{} (run {}): {}", u.variant, u.run, u.reason))
}

/// The level the CI column is headed with: the one most rows that are not `same` share
/// (the family's 1 - R*alpha/m, or a look's share of it in a run measured until decided).
fn shown_level(t: &ComparisonTable) -> f64 {
    let moved: Vec<f64> = t
        .rows
        .iter()
        .filter(|r| r.cmp.verdict != perflab_stats::Verdict::Same)
        .map(|r| r.cmp.decision.level)
        .collect();
    let levels: Vec<f64> = if moved.is_empty() {
        t.rows.iter().map(|r| r.cmp.decision.level).collect()
    } else {
        moved
    };
    let mut best = (t.p_adjustment.level, 0);
    for &l in &levels {
        let n = levels.iter().filter(|&&x| (x - l).abs() < 1e-12).count();
        if n > best.1 {
            best = (l, n);
        }
    }
    best.0
}
