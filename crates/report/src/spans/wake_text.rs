//! Seed 004's wake-up table as a person reads it: every CPU pair at a glance (one row per
//! pair and variant: the whole wake-up's p50 and each part's, and the idle state most of
//! the pair's IPI'd wake-ups found the target in), then one table per pair with the
//! shares, counts and every state. On a machine of hundreds of CPUs an idle-ipi study
//! visits tens of pairs; the overview is what is read first.
//!
//! ```text
//! CPU pair  variant    (0) whole  (1) to IPI  (2) to idle exit  (3) to task  (2) mostly left
//! 0-1       poll-only  3.11       none        none              1.41         -
//!           all        6.01       1.21        2.01              2.01         C1 (100%)
//! ```

use crate::doc::{Block, Table};
use crate::fmt;
use crate::spans::foreign;
use crate::spans::wake::{WakeCell, WakePair, WakeTable, PARTS, SET, WHOLE};

/// Parts in fewer wake-ups than this (percent) say in how many.
const FEW_PCT: f64 = 50.0;

/// `8.10 (65%)` for a part, `40.58 (854%; in 6 of 88035 wake-ups)` for one most wake-ups
/// do not have, `9.80 (1200 = 79%)` for a state: how often it was left.
fn cell_text(c: &WakeCell, state: bool) -> String {
    match c {
        WakeCell::Value {
            us,
            share_pct,
            matches,
            of_wakeups,
            matched_reps,
            reps,
        } => {
            let share = share_pct.map(|s| format!("{s:.0}%"));
            let some_reps = (matched_reps < reps).then(|| format!("{matched_reps}/{reps} reps"));
            let few = of_wakeups
                .filter(|w| *w > 0.0 && 100.0 * matches / w < FEW_PCT)
                .map(|w| format!("in {} of {} wake-ups", fmt::count(*matches), fmt::count(w)));
            match (state, share) {
                (true, share) => {
                    let n = match share {
                        Some(s) => format!("{} = {s}", fmt::count(*matches)),
                        None => fmt::count(*matches),
                    };
                    let inner: Vec<String> = std::iter::once(n).chain(some_reps).collect();
                    format!("{} ({})", fmt::value(*us), inner.join("; "))
                }
                (false, s) => {
                    let inner: Vec<String> = s.into_iter().chain(few).chain(some_reps).collect();
                    if inner.is_empty() {
                        fmt::value(*us)
                    } else {
                        format!("{} ({})", fmt::value(*us), inner.join("; "))
                    }
                }
            }
        }
        WakeCell::TooFew { matches, .. } => too_few(*matches),
        WakeCell::Contaminated {
            foreign_per_trip,
            expected_per_trip,
            ..
        } => foreign::refusal(*foreign_per_trip, *expected_per_trip),
        WakeCell::None => "none".into(),
        WakeCell::Missing => "-".into(),
    }
}

/// A cell below the floor: its count and the floor, no figure.
fn too_few(matches: f64) -> String {
    format!(
        "too few ({} < {} events)",
        fmt::count(matches),
        perflab_core::span_outline::MIN_SPAN_EVENTS
    )
}

impl WakeTable {
    /// Whether some cell was refused as contaminated (the legend then says what that is).
    fn has_contaminated(&self) -> bool {
        self.pairs
            .iter()
            .flat_map(|p| &p.rows)
            .flat_map(|r| &r.cells)
            .any(|c| matches!(c, WakeCell::Contaminated { .. }))
    }

    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![
            Block::heading(3, "The wake-up in parts, per CPU pair (seed 004)"),
            Block::para(format!(
                "Each figure is a p50 in usec, the median over the repetitions that traced. \
                 A part's (share) is of the whole wake-up's p50 in the same column; shares \
                 need not add up to 100%: medians of the parts are not parts of the median, \
                 and (1) and (2) exist only for wake-ups that sent an IPI (a target polling \
                 in idle sees the flag itself, so none there is expected); a part that \
                 fewer than half the wake-ups have says in how many, per measurement (its \
                 share then describes those few). left STATE: the part for the wake-ups whose target \
                 CPU left that idle state, (n = share) how many per measurement and their \
                 share of the part's. k/n reps: the p50 is of the k repetitions (of n) in \
                 which the span matched, the counts medians over all n. too few (n < 20 \
                 events): the span matched fewer events per measurement than a figure is \
                 read from, so none is shown.{} none = the span matched no event; - = not \
                 recorded.",
                if self.has_contaminated() {
                    " contaminated: a part keyed by CPU (and its states) that matched more \
                     events per round trip than the pair's own wake-ups make, by more than \
                     half of them: other work's, so no figure."
                } else {
                    ""
                }
            )),
        ];
        out.extend(overview(self));
        for p in &self.pairs {
            out.push(Block::heading(4, format!("CPU pair {}", p.label)));
            let mut head = vec!["part (usec)".to_string()];
            head.extend(self.variants.iter().cloned());
            let mut rows: Vec<Vec<String>> = p
                .rows
                .iter()
                .map(|r| {
                    let mut cells = vec![r.label.clone()];
                    cells.extend(r.cells.iter().map(|c| cell_text(c, r.state.is_some())));
                    cells
                })
                .collect();
            let mut reps = vec!["reps".to_string()];
            reps.extend(p.reps.iter().map(usize::to_string));
            rows.push(reps);
            out.push(Block::Table(Table::new(head, rows, vec![0])));
        }
        out
    }
}

/// The overview's blocks, where the table has two pairs or more (one pair's own table
/// says it all).
fn overview(t: &WakeTable) -> Vec<Block> {
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
        Some(WakeCell::TooFew { matches, .. }) => too_few(*matches),
        Some(WakeCell::Contaminated {
            foreign_per_trip,
            expected_per_trip,
            ..
        }) => foreign::refusal(*foreign_per_trip, *expected_per_trip),
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
        Some((state, _, Some(share))) => format!("{} ({share:.0}%)", state.name),
        Some((state, _, None)) => state.name.clone(),
        None => "-".into(),
    }
}
