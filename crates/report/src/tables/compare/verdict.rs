//! How a table explains its verdicts (better / WORSE / same / undecided, docs/METHODOLOGY.md
//! "Verdicts that decide"), and the "!" of a comparison row whose repetitions spread too
//! widely to decide it, with the repetitions that would.

use perflab_stats::{Comparison, FamilyAdjustment, StatsConfig, Summary};

use crate::tables::compare::design::Design;

/// A confidence level for a column head: 0.95 → "95%", 0.99875 → "99.88%".
pub(crate) fn level_label(level: f64) -> String {
    let pct = level * 100.0;
    let s = if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}")
    } else if pct < 99.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.2}")
    };
    format!("{s}%")
}

/// The sentence under a table on how its intervals and verdicts are read: the interval's
/// level for the rows decided together, and the verdict rule. How the change is made for
/// the table's design (paired log-ratios within a run, mean logs across runs), how the
/// level follows from the rows (Benjamini-Hochberg), the moderated variance and the p
/// columns are defined once, in docs/METHODOLOGY.md, which the report's footer names.
///
/// `shown` is the level of the table's CI column: where most rows read `same`, that is the
/// two one-sided tests' 1 - 2α, not the family's level, and the sentence names both so the
/// header and the column never disagree (it said "CI at 95%" over a "90% CI" column).
pub(crate) fn verdict_rule(
    cfg: &StatsConfig,
    adj: &FamilyAdjustment,
    _design: Design,
    shown: f64,
) -> String {
    let rows = adj.rows;
    if rows == 0 {
        return "no row could be compared, so there is no verdict (see Not compared)".into();
    }
    let together = if rows == 1 {
        "1 row".to_string()
    } else {
        format!("{rows} rows decided together")
    };
    let level = if (shown - adj.level).abs() < 1e-12 {
        format!("{} ({together})", level_label(adj.level))
    } else {
        format!(
            "{} ({together} at {}; a `same` row's CI, of two one-sided tests, is at \
             1 - 2 alpha)",
            level_label(shown),
            level_label(adj.level)
        )
    };
    format!(
        "change = B/A - 1; CI at {level}; better/WORSE: CI beyond ±{}%, same: inside, \
         undecided: across",
        cfg.noise_pct
    )
}

/// The half-width of a side's median interval in percent of its median.
fn half_width_pct(s: &Summary) -> Option<f64> {
    if s.median_ci_degenerate || s.median == 0.0 {
        return None;
    }
    let hw = (s.median_ci.1 - s.median_ci.0) / 2.0 / s.median.abs() * 100.0;
    hw.is_finite().then_some(hw)
}

/// True when the row needs the reader's eye: its repetitions spread too widely to decide
/// it (see [`spread_wide`]), or its change disagrees with its medians.
pub(crate) fn wide(c: &Comparison, cfg: &StatsConfig) -> bool {
    spread_wide(c, cfg) || c.decision.disagreement.is_some()
}

/// True when its interval was widened for lack of repetitions, or it is undecided and a
/// side's median interval is wider than the threshold (the single-variant rows' "!" rule,
/// issue 21 item 16).
pub(crate) fn spread_wide(c: &Comparison, cfg: &StatsConfig) -> bool {
    let spread = [&c.a, &c.b]
        .iter()
        .filter_map(|s| half_width_pct(s))
        .any(|hw| hw > cfg.noise_pct);
    // A void row's spread is beside the point: no repetitions would decide it.
    c.verdict != perflab_stats::Verdict::Void
        && (c.decision.widened
            || (spread && !c.verdict.moved() && c.verdict != perflab_stats::Verdict::Same))
}

/// The note of a "!" row: how wide its sides spread and about how many repetitions would
/// decide it.
pub(crate) fn wide_note(label: &str, c: &Comparison, cfg: &StatsConfig) -> String {
    let hw = |s: &Summary| half_width_pct(s).map_or("n/a".to_string(), |h| format!("+/-{h:.1}%"));
    let now = c.decision.evidence.as_ref().map_or(c.a.n, |e| e.n);
    let advice = match c.decision.reps_to_decide {
        Some(n) => format!("about {n} repetitions per side (now {now}) would decide it"),
        None if c.decision.widened => {
            "too few repetitions for the rank test this row fell back to; add repetitions"
                .to_string()
        }
        None => format!(
            "repetitions will not settle it soon (over {}); look for the cause of the spread",
            perflab_stats::PRACTICAL_REPS
        ),
    };
    format!(
        "{label}: ! the repetitions spread widely (median CI A {}, B {}, beyond the \
         +/-{}% threshold; range A {}..{}, B {}..{}); {advice}",
        hw(&c.a),
        hw(&c.b),
        cfg.noise_pct,
        crate::fmt::value(c.a.min),
        crate::fmt::value(c.a.max),
        crate::fmt::value(c.b.min),
        crate::fmt::value(c.b.max),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_read_as_people_write_them() {
        assert_eq!(level_label(0.95), "95%");
        assert_eq!(level_label(0.99875), "99.88%");
        assert_eq!(level_label(0.9675), "96.8%");
    }
}
