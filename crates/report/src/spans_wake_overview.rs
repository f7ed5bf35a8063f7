//! Every CPU pair of seed 004's wake-up table at a glance: one row per pair and variant,
//! the whole wake-up's p50 and each part's, and the idle state most of the pair's IPI'd
//! wake-ups found the target in. On a machine of hundreds of CPUs an idle-ipi study visits
//! tens of pairs; their tables follow one per pair, and this is what is read first.
//!
//! ```text
//! CPU pair  variant    (0) whole  (1) to IPI  (2) to idle exit  (3) to task  (2) mostly left
//! 0-1       poll-only  3.11       none        none              1.41         -
//!           all        6.01       1.21        2.01              2.01         C1 (100%)
//! ```

use crate::doc::{Block, Table};
use crate::fmt;
use crate::spans_wake::{WakeCell, WakePair, WakeTable, PARTS, SET, WHOLE};

/// The overview's blocks, where the table has two pairs or more (one pair's own table
/// says it all).
pub fn overview(t: &WakeTable) -> Vec<Block> {
    if t.pairs.len() < 2 {
        return Vec::new();
    }
    let head: Vec<String> = [
        "CPU pair",
        "variant",
        "(0) whole",
        "(1) to IPI",
        "(2) to idle exit",
        "(3) to task",
        "(2) mostly left",
    ]
    .map(String::from)
    .to_vec();
    let whole = format!("{SET}.{WHOLE}");
    let mut rows = Vec::new();
    for p in &t.pairs {
        for (v, variant) in t.variants.iter().enumerate() {
            let mut row = vec![
                if v == 0 {
                    p.label.clone()
                } else {
                    String::new()
                },
                variant.clone(),
                p50(p, &whole, v),
            ];
            row.extend(PARTS.iter().map(|part| p50(p, &format!("{SET}.{part}"), v)));
            row.push(mostly_left(p, v));
            rows.push(row);
        }
    }
    vec![
        Block::para(
            "All pairs at a glance: p50 in usec of the whole wake-up and of each part, per \
             pair and variant (the medians over the repetitions that traced; none = no \
             event matched, - = not recorded); (2) mostly left: the idle state most of the \
             pair's IPI'd wake-ups found the target in, and their share. Each pair's table \
             below has the shares of the whole, the counts and every state.",
        ),
        Block::Table(Table::new(head, rows, vec![0, 1, 6])),
    ]
}

/// Span `key`'s p50 in column `v`, as the pair's table writes it without its shares.
fn p50(p: &WakePair, key: &str, v: usize) -> String {
    match p.rows.iter().find(|r| r.key == key).map(|r| &r.cells[v]) {
        Some(WakeCell::Value { us, .. }) => fmt::value(*us),
        Some(WakeCell::None) => "none".into(),
        Some(WakeCell::Missing) | None => "-".into(),
    }
}

/// The idle state that most of part (2)'s matches left in column `v`: `C6 (79%)`.
fn mostly_left(p: &WakePair, v: usize) -> String {
    let prefix = format!("{SET}.{}@", PARTS[1]);
    let most = p
        .rows
        .iter()
        .filter(|r| r.key.starts_with(&prefix))
        .filter_map(|r| match (&r.state, &r.cells[v]) {
            (
                Some(s),
                WakeCell::Value {
                    matches, share_pct, ..
                },
            ) if *matches > 0.0 => Some((s, *matches, *share_pct)),
            _ => None,
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match most {
        Some((state, _, Some(share))) => format!("{state} ({share:.0}%)"),
        Some((state, _, None)) => state.clone(),
        None => "-".into(),
    }
}
