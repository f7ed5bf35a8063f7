//! `perflab compare`'s rows that tested nothing (issue 32 item 4): listed after the tables,
//! as `run` lists its void comparisons, and an exit code of their own
//! ([`crate::exit::VOID`]) when a compared variant tested nothing at any row.

use std::collections::BTreeMap;

use perflab_report::ComparisonTable;
use perflab_stats::Verdict;

/// The void rows, one line each (`void: B vs A (variant) at ROW: REASON`).
pub fn lines(table: &ComparisonTable) -> Vec<String> {
    table
        .rows
        .iter()
        .filter(|r| r.cmp.verdict == Verdict::Void)
        .map(|r| {
            let variant = r
                .variant
                .as_ref()
                .map(|v| format!(" ({v})"))
                .unwrap_or_default();
            let at = match r.label.is_empty() {
                true => String::new(),
                false => format!(" at {}", r.label),
            };
            format!(
                "void: {} vs {}{variant}{at}: {}",
                table.b_label,
                table.a_label,
                r.cmp.decision.void.as_deref().unwrap_or("")
            )
        })
        .collect()
}

/// The void rows under a heading, printed after the tables; none without one.
pub fn listing(table: &ComparisonTable) -> Option<String> {
    let lines = lines(table);
    if lines.is_empty() {
        return None;
    }
    let mut s = String::from(
        "Void comparisons (tested nothing: what the variant's settings are meant to move \
         did not move; no verdict):\n",
    );
    for l in lines {
        s.push_str(&format!("  {l}\n"));
    }
    Some(s)
}

/// Whether some variant compared tested nothing at every row it has (the table's one
/// variant pair, or of two runs each variant): then `compare` exits
/// [`crate::exit::VOID`]. A void row among others is listed, not an exit, as in `run`.
pub fn throughout(table: &ComparisonTable) -> bool {
    let mut by_variant: BTreeMap<Option<&str>, (usize, usize)> = BTreeMap::new();
    for r in &table.rows {
        let e = by_variant.entry(r.variant.as_deref()).or_default();
        e.0 += 1;
        e.1 += usize::from(r.cmp.verdict == Verdict::Void);
    }
    by_variant
        .values()
        .any(|&(rows, void)| void > 0 && void == rows)
}

/// The last line (stderr) of a comparison that tested nothing of a variant.
pub fn last_line(table: &ComparisonTable) -> String {
    let void = lines(table).len();
    format!(
        "perflab: {} vs {}: {void} of {} rows tested nothing (void: a setting changed nothing \
         its telemetry shows, listed above; more repetitions would not help)",
        table.b_label,
        table.a_label,
        table.rows.len()
    )
}
