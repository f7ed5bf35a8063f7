//! The comparisons of a report: each other variant against the baseline (one run) or
//! each later run against the first, as tables, size-scan curves, CPU-pair maps and the
//! regression distribution, with the telemetry that moved with each significant row.

use perflab_core::record::MeasurementRecord;
use serde_json::{json, Value};

use crate::doc::Block;
use crate::error::ReportError;
use crate::fmt::compact::{rows_text, RowRef};
use crate::full::figures;
use crate::full::input::{run_name, ReportOptions, RunData};
use crate::tables::blocks::Changes;
use crate::tables::blocks::UNAVAILABLE;
use crate::tables::compare::changed;
use crate::tables::compare::design::Design;
use crate::tables::compare::ComparisonTable;
use crate::tables::coverage;
use crate::{compare_runs, compare_variants, distribution, measured_variants};

/// One comparison to make: the table and the records of each side.
struct Pair<'a> {
    table: ComparisonTable,
    ms_a: &'a [MeasurementRecord],
    ms_b: &'a [MeasurementRecord],
    /// What each side set (`2m = hugepages=2M:32, backing=2m`), for variants of one run.
    sides: Option<String>,
    /// The monitor lines the runs part lists: said once, there, not again under the table.
    listed: Vec<String>,
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
                            sides: crate::fmt::variant_settings(&one.info, &[&base, other]),
                            listed: coverage::monitor_lines(&one.ms),
                        });
                    }
                }
                None => return Ok((single(one, opts, blocks)?, Vec::new())),
            }
        }
        [first, rest @ ..] => {
            for r in rest {
                let listed = [first, r]
                    .iter()
                    .flat_map(|run| {
                        coverage::monitor_lines(&run.ms)
                            .into_iter()
                            .map(move |l| format!("run {}: {l}", run.info.id))
                    })
                    .collect();
                pairs.push(Pair {
                    table: compare_runs(&first.info, &first.ms, &r.info, &r.ms, metric, cfg)?,
                    ms_a: &first.ms,
                    ms_b: &r.ms,
                    sides: None,
                    listed,
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
    let once = |b: Block| once(p, b);
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
    // The seed's own table first: for CPU pairs its regression distribution, then the
    // table it is drawn from.
    let dist = seed_distribution(p, opts, blocks);
    let scan = crate::size_scan(t);
    match &scan {
        Some(s) => {
            let mut scan_blocks = with_sides(s.to_blocks(), &p.sides);
            if opts.figures {
                // The curves first: the tables below hold their figures.
                let figs = figures::scan_curves(s);
                let at = 1.min(scan_blocks.len());
                scan_blocks.splice(at..at, figs.into_iter().map(Block::Figure));
            }
            blocks.extend(scan_blocks.into_iter().filter_map(once));
        }
        None => {
            if opts.figures {
                blocks.extend(
                    figures::comparison_figures(t)
                        .into_iter()
                        .map(Block::Figure),
                );
            }
            blocks.extend(
                with_sides(t.to_blocks(), &p.sides)
                    .into_iter()
                    .filter_map(once),
            );
        }
    }
    let telemetry = crate::tables::telemetry_ab::telemetry_ab(t, p.ms_a, p.ms_b, &opts.stats);
    blocks.extend(telemetry.iter().flat_map(|x| x.report_blocks(t)));
    let changes = changed::changes_for_table(t, p.ms_a, p.ms_b, opts.changes);
    blocks.extend(Changes(changes.clone()).report_blocks());
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
        "telemetry": telemetry,
        "changes": changes,
    }))
}

/// A table's blocks with what each side set (`variants: 4k = backing=4k; …`) as the
/// first line of its header, the paragraph they begin with (a paragraph of its own was
/// one line more, issue 34 item 3).
fn with_sides(mut blocks: Vec<Block>, sides: &Option<String>) -> Vec<Block> {
    match (sides, blocks.first_mut()) {
        (Some(sides), Some(Block::Para(header))) => *header = format!("{sides}\n{header}"),
        (Some(sides), _) => blocks.insert(0, Block::para(sides.clone())),
        (None, _) => {}
    }
    blocks
}

/// A block of `p`'s comparison as the report prints it: what the runs part says already
/// (the variants not measured, the monitors, the ineffective measurements) is left out,
/// and the points not compared are one line naming them, with the first one's reason
/// (`compare` lists each; the reasons of a study's points are alike).
fn once(p: &Pair, b: Block) -> Option<Block> {
    let t = &p.table;
    match b {
        Block::List { title, .. } if title == UNAVAILABLE => None,
        Block::List { title, items } if title == "Not compared" && items.len() > 1 => {
            let first = items.first().cloned().unwrap_or_default();
            let which = if t.rows.is_empty() {
                format!("all {} points", items.len())
            } else {
                format!("{} points, {}", items.len(), not_compared_rows(t))
            };
            Some(Block::List {
                title,
                items: vec![format!("{which}; the first, {first}")],
            })
        }
        Block::List { title, items } => Some(Block::List {
            title,
            items: items
                .into_iter()
                .filter(|i| !p.listed.contains(i) && !i.starts_with("INEFFECTIVE: "))
                .collect(),
        }),
        b => Some(b),
    }
}

/// For a comparison of CPU pairs, its regression distribution (the seed's table) as
/// blocks, without the points not compared, which the table after it lists.
fn seed_distribution(
    p: &Pair,
    opts: &ReportOptions,
    blocks: &mut Vec<Block>,
) -> Option<crate::Distribution> {
    let t = &p.table;
    if !t.rows.iter().any(|r| r.pair.is_some()) {
        return None;
    }
    let d = distribution(t, &opts.buckets);
    // Every row void: no bucket holds one, and the table below says why each tested
    // nothing; the JSON keeps the distribution.
    if t.rows
        .iter()
        .all(|r| r.cmp.verdict == perflab_stats::Verdict::Void)
    {
        return Some(d);
    }
    if opts.figures {
        blocks.push(Block::Figure(figures::distribution_histogram(&d)));
    }
    let listed_below =
        |b: &Block| matches!(b, Block::List { title, .. } if title == "Not compared");
    blocks.extend(
        d.to_blocks()
            .into_iter()
            .filter(|b| !listed_below(b))
            .filter_map(|b| once(p, b)),
    );
    Some(d)
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

/// The points `t` could not compare, named compactly.
fn not_compared_rows(t: &ComparisonTable) -> String {
    let all: Vec<&perflab_core::Params> = t
        .rows
        .iter()
        .map(|r| &r.params)
        .chain(t.unmatched.iter().map(|u| &u.params))
        .collect();
    let rows: Vec<RowRef> = t
        .unmatched
        .iter()
        .map(|u| RowRef {
            params: &u.params,
            variant: u.variant.as_deref(),
        })
        .collect();
    rows_text(&t.param_roles, &rows, &all, 1)
}
