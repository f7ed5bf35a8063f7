//! What a reader must know about the rows of one comparison decided together: how many
//! rows read each verdict, which are undecided and about how many repetitions would
//! decide them, and which fell back to a rank test because their spread did not fit.

use perflab_stats::{Comparison, DisagreementCause, FamilyAdjustment, Method, Verdict};

/// Undecided rows named in the note before the rest are counted (a mail is read in a
/// minute: the JSON has every row's repetitions to decide).
const NAMED: usize = 2;

/// The table-wide notes on the rows of one family, each row with its label.
pub(crate) fn notes<'a>(
    adj: &FamilyAdjustment,
    rows: impl Iterator<Item = (String, &'a Comparison)>,
) -> Vec<String> {
    let rows: Vec<(String, &Comparison)> = rows.collect();
    let mut out = Vec::new();
    let count = |v: Verdict| rows.iter().filter(|(_, c)| c.verdict == v).count();
    if adj.rows > 1 {
        out.push(format!(
            "{} rows decided together: {} WORSE, {} better, {} same, {} undecided{}",
            adj.rows,
            count(Verdict::Regressed),
            count(Verdict::Improved),
            count(Verdict::Same),
            count(Verdict::Undecided),
            match count(Verdict::Changed) {
                0 => String::new(),
                n => format!(", {n} changed"),
            }
        ));
    }
    // The void rows are counted by the table's void note, with their reasons.
    out.extend(undecided_note(&rows));
    let odd = |rank: bool| -> Vec<String> {
        rows.iter()
            .filter(|(_, c)| {
                matches!(c.decision.method, Method::SignedRank | Method::RankSum) == rank
            })
            .filter_map(|(l, c)| {
                c.decision
                    .fallback
                    .as_ref()
                    .map(|why| format!("{l} ({why})"))
            })
            .collect()
    };
    let ranked = odd(true);
    if !ranked.is_empty() {
        out.push(format!(
            "read with a rank test instead of the t, as their repetitions do not look like \
             one bell: {}",
            ranked.join(", ")
        ));
    }
    let own = odd(false);
    if !own.is_empty() {
        out.push(format!(
            "read with their own variance only: {}",
            own.join(", ")
        ));
    }
    if adj.lost > 0 {
        out.push(format!(
            "{} of {} rows would be decided read alone but not among the rows of this \
             comparison",
            adj.lost, adj.rows
        ));
    }
    out
}

/// What a row's decision says about its own evidence, as notes beside the row (grouped
/// with the other rows' by the views: labels in a table, sizes in a scan): no spread to
/// judge by (no verdict, and no advice on repetitions: more identical values would not
/// help), or a spread borrowed from the rows with repetitions. A change that disagrees
/// with its medians has figures of its own: [`disagreement_note`] says those of all rows
/// in one line.
pub(crate) fn decision_notes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = c.decision.no_spread {
        out.push(format!("undecided, {}", why.reason()));
    }
    if c.decision.spread_borrowed {
        out.push(
            "one value per side, read with the spread of the rows that have repetitions \
             (borrowed, not measured)"
                .to_string(),
        );
    }
    out
}

/// The undecided rows that more repetitions could decide, each with about how many.
fn undecided_note(rows: &[(String, &Comparison)]) -> Option<String> {
    let undecided: Vec<String> = rows
        .iter()
        .filter(|(_, c)| {
            c.verdict == Verdict::Undecided
                && c.decision.evidence.is_some()
                && c.decision.no_spread.is_none()
        })
        .map(|(l, c)| match c.decision.reps_to_decide {
            Some(n) => format!("{l} (about {n})"),
            None => format!("{l} (not soon)"),
        })
        .collect();
    if undecided.is_empty() {
        return None;
    }
    let more = undecided.len().saturating_sub(NAMED);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "undecided; about how many repetitions per side would decide each, if its change \
         and spread hold (--until-decided adds them): {}{tail}",
        undecided[..undecided.len().min(NAMED)].join(", ")
    ))
}

/// The rows whose change disagrees with their medians, in one line naming the first
/// [`NAMED`] with their figures and counting the rest (each such row carries `!`; the
/// JSON has every row's `decision.disagreement`). One line, however many: which rows
/// disagree is noise, run to run, and a mail has a budget (issue 34 item 3).
pub(crate) fn disagreement_note<'a>(
    rows: impl IntoIterator<Item = (String, &'a Comparison)>,
) -> Option<String> {
    let rows: Vec<(String, perflab_stats::Disagreement)> = rows
        .into_iter()
        .filter_map(|(l, c)| Some((l, c.decision.disagreement?)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let named: Vec<String> = rows
        .iter()
        .take(NAMED)
        .map(|(l, d)| {
            let why = match d.cause {
                DisagreementCause::WildRepetition => "a far repetition pulls the change",
                DisagreementCause::Shape => "a side is not one bell",
            };
            format!(
                "{l} {:+.2}% vs {:+.2}% ({why})",
                d.medians_pct, d.change_pct
            )
        })
        .collect();
    let more = match rows.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let n = rows.len();
    Some(format!(
        "! {n} row{} whose medians' ratio and change disagree (verdicts stand): {}{more}",
        if n == 1 { "" } else { "s" },
        named.join("; ")
    ))
}
