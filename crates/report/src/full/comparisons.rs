//! The comparisons of a report: each other variant against the baseline (one run) or
//! each later run against the first, as tables, size-scan curves, CPU-pair maps and the
//! regression distribution, with the telemetry that moved with each significant row.

use perflab_core::record::MeasurementRecord;
use serde_json::{json, Value};

use crate::doc::Block;
use crate::error::ReportError;
use crate::full::figures;
use crate::full::input::{run_name, ReportOptions, RunData};
use crate::tables::blocks::Changes;
use crate::tables::blocks::UNAVAILABLE;
use crate::tables::compare::changed;
use crate::tables::compare::design::Design;
use crate::tables::compare::ComparisonTable;
use crate::{compare_runs, compare_variants, distribution, measured_variants};

/// One comparison to make: the table and the records of each side.
struct Pair<'a> {
    table: ComparisonTable,
    ms_a: &'a [MeasurementRecord],
    ms_b: &'a [MeasurementRecord],
}

/// The comparisons' blocks, their JSON, and the designs they rest on (for the footer).
pub(crate) fn section(
    runs: &[RunData],
    opts: &ReportOptions,
    blocks: &mut Vec<Block>,
) -> Result<(Value, Vec<Design>), ReportError> {
    let metric = opts.metric.as_deref();
    let cfg = &opts.stats;
    let mut pairs = Vec::new();
    match runs {
        [one] => {
            // Seed 002's table of every variant side by side, before the pairs' scans.
            if let Some(t) = crate::backing_table(&one.info, &one.ms, metric, cfg)? {
                let link = crate::tables::gpu::figure::link_mib_s(&one.ms);
                blocks.extend(crate::tables::gpu::figure::blocks(&t, link, opts.figures));
            }
            let measured = measured_variants(&one.ms);
            match crate::baseline_variant(&one.info, &measured) {
                Some(base) => {
                    for other in measured.iter().filter(|v| **v != base) {
                        pairs.push(Pair {
                            table: compare_variants(&one.info, &one.ms, &base, other, metric, cfg)?,
                            ms_a: &one.ms,
                            ms_b: &one.ms,
                        });
                    }
                }
                None => return Ok((single(one, opts, blocks)?, Vec::new())),
            }
        }
        [first, rest @ ..] => {
            for r in rest {
                pairs.push(Pair {
                    table: compare_runs(&first.info, &first.ms, &r.info, &r.ms, metric, cfg)?,
                    ms_a: &first.ms,
                    ms_b: &r.ms,
                });
            }
        }
        [] => {}
    }
    let mut out = Vec::new();
    let mut designs = Vec::new();
    for p in &pairs {
        out.push(one_comparison(p, opts, blocks)?);
        if !designs.contains(&p.table.design) {
            designs.push(p.table.design);
        }
    }
    Ok((Value::Array(out), designs))
}

fn one_comparison(
    p: &Pair,
    opts: &ReportOptions,
    blocks: &mut Vec<Block>,
) -> Result<Value, ReportError> {
    let t = &p.table;
    // The runs section lists the variants not measured; once is enough.
    let once = |b: &Block| !matches!(b, Block::List { title, .. } if title == UNAVAILABLE);
    blocks.push(Block::heading(
        2,
        format!(
            "{}: {} vs {} ({})",
            t.metric,
            t.b_label,
            t.a_label,
            t.design.name()
        ),
    ));
    let scan = crate::scan_tables(t, "size");
    match &scan {
        Some(s) => {
            let mut scan_blocks = s.to_blocks();
            if opts.figures {
                // The curves first: the tables below hold their figures.
                let figs = figures::scan_curves(s);
                let at = 1.min(scan_blocks.len());
                scan_blocks.splice(at..at, figs.into_iter().map(Block::Figure));
            }
            blocks.extend(scan_blocks.into_iter().filter(once));
        }
        None => {
            if opts.figures {
                blocks.extend(
                    figures::comparison_figures(t)
                        .into_iter()
                        .map(Block::Figure),
                );
            }
            blocks.extend(t.to_blocks().into_iter().filter(once));
        }
    }
    let has_pairs = t.rows.iter().any(|r| r.pair.is_some());
    let dist = has_pairs.then(|| distribution(t, &opts.buckets));
    if let Some(d) = &dist {
        blocks.push(Block::heading(3, "Regression distribution"));
        if opts.figures {
            blocks.push(Block::Figure(figures::distribution_histogram(d)));
        }
        blocks.extend(d.to_blocks().into_iter().filter(once));
    }
    let changes = changed::changes_for_table(t, p.ms_a, p.ms_b, opts.changes);
    blocks.extend(Changes(changes.clone()).to_blocks());
    if opts.figures {
        blocks.extend(
            figures::telemetry_per_cpu(t, p.ms_a, p.ms_b)
                .into_iter()
                .map(Block::Figure),
        );
    }
    Ok(json!({
        "comparison": t,
        "scan": scan,
        "distribution": dist,
        "changes": changes,
    }))
}

/// A run with one measured variant: its summary, and the medians as a figure.
fn single(
    run: &RunData,
    opts: &ReportOptions,
    blocks: &mut Vec<Block>,
) -> Result<Value, ReportError> {
    let summary = crate::summarize_run(&run.info, &run.ms, opts.metric.as_deref(), &opts.stats)?;
    blocks.push(Block::heading(
        2,
        format!("Results of {}", run_name(&run.info)),
    ));
    if opts.figures {
        if let Some(f) = figures::summary_figure(&summary) {
            blocks.push(Block::Figure(f));
        }
    }
    blocks.extend(summary.to_blocks(false));
    Ok(json!([{ "summary": summary }]))
}
