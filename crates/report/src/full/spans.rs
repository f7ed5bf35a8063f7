//! Where the time goes: for each run whose telemetry repetitions traced spans, the span
//! breakdown per point and variant, seed 001's layout per path, a stacked bar per path
//! (spans against the measured round trip) and the A/B comparisons of the spans.

use serde_json::{json, Value};

use crate::doc::Block;
use crate::full::input::{run_name, ReportOptions, RunData};
use crate::plot::{stacked_bars, StackSegment, StackedBars};
use crate::spans::ab::MAX_COMPARISONS;
use crate::spans::seed::{SeedCell, SeedPath, LATENCY_METRIC};
use crate::{seed_span_table, span_comparisons, span_table};

pub(crate) fn section(runs: &[RunData], opts: &ReportOptions, blocks: &mut Vec<Block>) -> Value {
    let mut out = Vec::new();
    for r in runs {
        let Some(table) = span_table(&r.info, &r.ms, &opts.stats) else {
            continue;
        };
        blocks.push(Block::heading(
            2,
            format!("Where the time goes: trace spans of {}", run_name(&r.info)),
        ));
        blocks.extend(table.to_blocks());
        let seed = seed_span_table(&r.info, &r.ms);
        if let Some(s) = &seed {
            blocks.extend(s.to_blocks());
            if opts.figures {
                blocks.extend(s.paths.iter().map(|p| Block::Figure(figure(p))));
            }
        }
        // All in the JSON; the first MAX_COMPARISONS in the text.
        let (comparisons, total) = span_comparisons(&r.info, &r.ms, &opts.stats, usize::MAX);
        for c in comparisons.iter().take(MAX_COMPARISONS) {
            blocks.extend(c.to_blocks());
        }
        if total > MAX_COMPARISONS {
            blocks.push(Block::para(format!(
                "{} more span comparisons of this run are in the JSON output.",
                total - MAX_COMPARISONS
            )));
        }
        out.push(json!({
            "run": r.info.id,
            "table": table,
            "seed": seed,
            "comparisons": comparisons,
            "comparisons_total": total,
        }));
    }
    Value::Array(out)
}

/// One path's stacked bars: a bar per load case, the spans' p50 in order, the round trip
/// beside it.
fn figure(p: &SeedPath) -> String {
    let mut title = format!("Where the time goes on {}", p.path);
    if !p.section.is_empty() {
        title.push_str(&format!(" ({})", p.section));
    }
    title.push_str(": span p50 against the round trip, telemetry repetitions");
    stacked_bars(&StackedBars {
        title,
        x_label: "load".into(),
        y_label: "µs (p50, median over repetitions)".into(),
        categories: p.loads.clone(),
        segments: p
            .spans
            .iter()
            .map(|s| StackSegment {
                // A span with no bar anywhere says why in the legend.
                name: if s.cells.iter().any(|c| matches!(c, SeedCell::Value(_))) {
                    s.label.clone()
                } else {
                    format!("{} (no events matched)", s.label)
                },
                values: s
                    .cells
                    .iter()
                    .map(|c| match c {
                        SeedCell::Value(v) => Some(*v),
                        _ => None,
                    })
                    .collect(),
            })
            .collect(),
        total: StackSegment {
            name: format!("round trip ({LATENCY_METRIC})"),
            values: p.latency.clone(),
        },
    })
}
