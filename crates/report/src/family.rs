//! What a reader must know about the rows of one comparison adjusted together
//! (Benjamini-Hochberg): rows that were significant only when read alone, and when the
//! repetitions are too few for a single changed row to show among so many.

use perflab_stats::{
    min_p_value, reps_needed, rows_needed_together, FamilyAdjustment, StatsConfig, Summary,
};

/// The table-wide notes on the adjustment of `rows` (each row's two summaries).
pub(crate) fn notes<'a>(
    adj: &FamilyAdjustment,
    sides: impl Iterator<Item = (&'a Summary, &'a Summary)>,
    cfg: &StatsConfig,
) -> Vec<String> {
    let mut out = Vec::new();
    if adj.lost > 0 {
        let one = adj.lost == 1;
        out.push(format!(
            "{} of {} rows {} p < {} read alone but not once adjusted for the rows of this \
             comparison (Benjamini-Hochberg), so no verdict is drawn from {}",
            adj.lost,
            adj.rows,
            if one { "has" } else { "have" },
            cfg.alpha,
            if one { "it" } else { "them" }
        ));
    }
    // The row whose repetitions allow the smallest p: if even it cannot show alone, none can.
    let best = sides
        .map(|(a, b)| (min_p_value(a.n, b.n), a.n, b.n))
        .min_by(|x, y| x.0.total_cmp(&y.0));
    if let Some((floor, m, n)) = best {
        let together = rows_needed_together(floor, adj.rows, cfg.alpha);
        // A floor at or above alpha is a per-row note already (no change can be
        // significant at all); this one is about the family.
        if together > 1 && floor < cfg.alpha {
            out.push(format!(
                "with {m} vs {n} repetitions the smallest possible p is {}, and adjusted for \
                 the {} rows of this comparison a change must reach it in at least {together} \
                 rows at once to be significant: a change in one row alone cannot be; use {} \
                 repetitions per side for a single row to be able to show",
                perflab_stats::fmt_p(floor),
                adj.rows,
                reps_needed(cfg.alpha / adj.rows as f64)
            ));
        }
    }
    out
}
