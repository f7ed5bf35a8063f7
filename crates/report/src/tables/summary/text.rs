//! The cells and words of the single-run summary, which its blocks are made of.

use std::fmt::Write as _;

use crate::fmt;
use crate::tables::compare::text::better_text;
use crate::tables::summary::{SummaryRow, SummaryTable};

/// Outlier repetitions are named up to this many; more are only counted.
const NAMED_OUTLIERS: usize = 3;

/// What the figures are and how they were computed.
pub(crate) fn header(t: &SummaryTable) -> String {
    let mut out = String::new();
    match &t.metric {
        Some(m) => {
            let unit = m.unit.symbol();
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" [{unit}]")
            };
            let _ = writeln!(
                out,
                "run {}: median {}{unit}, {}",
                t.run,
                m.name,
                better_text(m.better)
            );
        }
        // Measurements that ran but were left out (disturbed, ineffective) did not fail:
        // the notes say what became of them.
        None if t.rows.iter().all(|r| r.failed == 0) && !t.rows.is_empty() => {
            let _ = writeln!(out, "run {}: no value to summarize (see the notes)", t.run);
        }
        None => {
            let _ = writeln!(out, "run {}: no successful measurement", t.run);
        }
    }
    let _ = writeln!(
        out,
        "{} CI of the median by percentile bootstrap; CV = stddev / mean; \
         outliers by Tukey's fences (marked, not removed)",
        t.config.confidence_label()
    );
    out
}

/// What the `!` mark means, when a row carries it.
pub(crate) fn spread_legend(t: &SummaryTable) -> Option<&'static str> {
    t.rows
        .iter()
        .any(|r| r.warning.is_some())
        .then_some("!: the spread is too wide to conclude anything; see below")
}

/// The header row and one row of cells per summary row, with the left-aligned columns.
pub(crate) fn rows_cells(t: &SummaryTable, show_variant: bool) -> (Vec<Vec<String>>, Vec<usize>) {
    let first = if !t.rows.is_empty() && t.rows.iter().all(|r| r.pair.is_some()) {
        "pair"
    } else {
        "point"
    };
    let ci_head = format!("{} CI", t.config.confidence_label());
    let mut header = vec![first.to_string()];
    if show_variant {
        header.push("variant".into());
    }
    for h in ["ok", "failed", "median", &ci_head, "CV %", "outliers", ""] {
        header.push(h.to_string());
    }
    let mut lines = vec![header];
    for r in &t.rows {
        let mut cells = vec![r.label.clone()];
        if show_variant {
            cells.push(r.variant.clone());
        }
        cells.push(r.n_ok.to_string());
        cells.push(r.failed.to_string());
        match &r.summary {
            Some(s) => {
                cells.push(fmt::value(s.median));
                cells.push(if s.median_ci_degenerate {
                    "n/a".into()
                } else {
                    fmt::value_ci(s.median_ci)
                });
                cells.push(format!("{:.2}", s.cv * 100.0));
                cells.push(outliers_cell(r));
            }
            None => cells.extend(["-", "-", "-", "-"].map(String::from)),
        }
        cells.push(if r.warning.is_some() { "!" } else { "" }.into());
        lines.push(cells);
    }
    let last = lines[0].len() - 1;
    let left = if show_variant {
        vec![0, 1, last]
    } else {
        vec![0, last]
    };
    (lines, left)
}

fn outliers_cell(r: &SummaryRow) -> String {
    match r.outlier_reps.len() {
        0 => "0".into(),
        n if n <= NAMED_OUTLIERS => {
            let reps: Vec<String> = r.outlier_reps.iter().map(u32::to_string).collect();
            let word = if n == 1 { "rep" } else { "reps" };
            format!("{n} ({word} {})", reps.join(", "))
        }
        n => n.to_string(),
    }
}

/// The per-row words, unindented.
pub(crate) fn row_note_items(t: &SummaryTable, show_variant: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for r in &t.rows {
        let who = if show_variant {
            format!("{} {}", r.label, r.variant)
        } else {
            r.label.clone()
        };
        if let Some(w) = &r.warning {
            lines.push(format!("{who}: {w}"));
        }
        if r.summary.is_none() && t.metric.is_some() {
            let mut parts = Vec::new();
            if r.failed > 0 {
                parts.push(format!("{} failed", r.failed));
            }
            if r.missing > 0 {
                parts.push(format!("{} without the metric", r.missing));
            }
            let first = r
                .first_error
                .as_ref()
                .map(|e| format!("; first: {e}"))
                .unwrap_or_default();
            lines.push(format!(
                "{who}: no successful value ({}){first}",
                parts.join(", ")
            ));
        }
    }
    lines
}
