//! The span breakdown as blocks (terminal, Markdown, mail, HTML).

use crate::doc::{Block, Table};
use crate::fmt;
use crate::spans::ab::SpanComparison;
use crate::spans::{SpanFigure, SpanRow, SpanTable};

/// What every reader of a span figure must know first.
pub(crate) fn provenance(from_telemetry: bool) -> &'static str {
    if from_telemetry {
        "from the telemetry repetitions only: tracing adds overhead to every event it \
         sees, so these figures show where the time goes, never a result"
    } else {
        "from repetitions that ran the trace monitor: tracing adds overhead to every event \
         it sees, so these figures show where the time goes, never a result"
    }
}

/// `12.31 [11.90, 12.80]`, or the median alone with why there is no interval.
pub(crate) fn figure_cell(f: &SpanFigure) -> String {
    if f.degenerate {
        format!("{} (1 rep)", fmt::value(f.median))
    } else {
        format!("{} {}", fmt::value(f.median), fmt::value_ci(f.ci))
    }
}

fn row_cells(r: &SpanRow) -> Vec<String> {
    let mut cells = vec![r.label.clone(), format!("{}/{}", r.matched_reps, r.reps)];
    if let Some((events, trips)) = r.too_few {
        cells.extend([
            format!(
                "not measured ({} events for {} round trips)",
                fmt::count(events),
                fmt::count(trips)
            ),
            "-".into(),
            "-".into(),
        ]);
    } else if let Some(n) = r.below_floor {
        cells.extend([
            format!(
                "too few ({} < {} events)",
                fmt::count(n),
                perflab_core::span_outline::MIN_SPAN_EVENTS
            ),
            "-".into(),
            "-".into(),
        ]);
    } else if let Some(why) = r.foreign.and_then(|f| f.refusal()) {
        cells.extend([why, "-".into(), "-".into()]);
    } else if r.matched() {
        cells.extend(
            r.percentiles
                .iter()
                .map(|p| p.as_ref().map_or("-".to_string(), figure_cell)),
        );
    } else {
        cells.extend(["no events matched".to_string(), "-".into(), "-".into()]);
    }
    cells.push(match r.foreign {
        // A span keyed by CPU says whose its matches were (where it matched at all).
        Some(f) if r.matches > 0.0 => format!("{} ({})", fmt::count(r.matches), f.describe()),
        _ => fmt::count(r.matches),
    });
    cells.push(r.unmatched.map_or("-".into(), fmt::count));
    cells
}

impl SpanTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![Block::para(format!(
            "Trace spans in µs (run {}, span set{} {}), {}. Each percentile is the median \
             over the repetitions of that repetition's percentile, with its {} bootstrap \
             interval; reps = repetitions in which the span matched / that ran the monitor; \
             matches and unmatched (start events left without an end) are medians per \
             measurement; a span that matched fewer than {} events per measurement shows \
             its count, too few for a figure.{}",
            self.run,
            if self.sets.len() == 1 { "" } else { "s" },
            self.sets.join(", "),
            provenance(self.from_telemetry),
            self.confidence,
            perflab_core::span_outline::MIN_SPAN_EVENTS,
            if self.judges_foreign() {
                crate::spans::foreign::LEGEND
            } else {
                ""
            }
        ))];
        for g in &self.groups {
            let title = if g.label == "all" {
                g.variant.clone()
            } else {
                format!("{}, {}", g.variant, g.label)
            };
            out.push(Block::heading(3, title));
            let head = ["span", "reps", "p50", "p90", "p99", "matches", "unmatched"]
                .map(String::from)
                .to_vec();
            let rows = g.rows.iter().map(row_cells).collect();
            out.push(Block::Table(Table::new(head, rows, vec![0])));
        }
        if let Some(w) = &self.wake {
            out.extend(w.to_blocks());
        }
        out.push(Block::list("Notes", &self.notes));
        out
    }
}

impl SpanComparison {
    pub fn to_blocks(&self) -> Vec<Block> {
        let mut out = vec![
            Block::heading(3, format!("Spans: {}", self.title)),
            Block::para(format!(
                "A = {}, B = {}, {}; per span the median over the repetitions of A and of B, \
                 B - A with the {} interval of the Hodges-Lehmann shift (a description); \
                 the verdict: better/WORSE when the interval of the change (log scale, at \
                 {}) lies beyond +/-{}%, same inside, undecided across, decided for the {} \
                 rows together (p adj: Benjamini-Hochberg). All in µs; lower is better.",
                self.a_label,
                self.b_label,
                provenance(self.from_telemetry),
                self.confidence,
                crate::tables::compare::verdict::level_label(self.p_adjustment.level),
                self.noise_pct,
                self.p_adjustment.rows
            )),
        ];
        let head = [
            "span", "stat", "n A", "n B", "A", "B", "B - A", "CI", "p", "p adj", "verdict",
        ]
        .map(String::from)
        .to_vec();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let c = &r.cmp;
                vec![
                    r.label.clone(),
                    r.stat.clone(),
                    c.a.n.to_string(),
                    c.b.n.to_string(),
                    fmt::value(c.a.median),
                    fmt::value(c.b.median),
                    signed_value(c.b.median - c.a.median),
                    format!(
                        "[{}, {}]",
                        signed_value(c.shift.ci.0),
                        signed_value(c.shift.ci.1)
                    ),
                    perflab_stats::fmt_p(c.p_value),
                    perflab_stats::fmt_p(c.p_adjusted),
                    c.symbol().to_string(),
                ]
            })
            .collect();
        out.push(Block::Table(Table::new(head, rows, vec![0, 1])));
        out.push(Block::list("Not compared", &self.not_compared));
        out.push(Block::list("Notes", &self.notes));
        out
    }
}

impl SpanComparison {}

/// A difference with its sign: `+1.25`, `-0.0400`.
fn signed_value(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", fmt::value(x))
    } else {
        fmt::value(x)
    }
}
