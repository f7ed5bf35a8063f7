//! `perflab compare`: two variants of one run, or two runs matched by parameters
//! (`perflab_report::views::compare`), and on request the per-pair drill-down.

use perflab_report::views::compare::{self, CompareView, Reading};
use perflab_report::Format;

use crate::cli::{CompareArgs, Global, TextFormat};
use std::io::Write;

use crate::cmd::{common, compare_void, envelope, fail_on};
use crate::exit::input;

pub fn run(g: &Global, a: CompareArgs) -> anyhow::Result<i32> {
    let (cfg, buckets) = common::verdict_settings(&a.verdict)?;
    perflab_report::section::check_ids(&a.section, perflab_report::section::COMPARE)
        .map_err(input)?;
    if a.runs.len() > 1 && a.variants.is_some() {
        return Err(input("--variants compares within one run; give one RUN"));
    }
    let pair = a.variants.as_deref().map(variant_pair).transpose()?;
    let store = common::read_store(g)?;
    let ids = crate::run_ref::resolve_all(&store, &a.runs)?;
    let info = store.run(ids[0])?;
    // The drill-down reads telemetry, and so do the judgement of a variant comparison
    // that tested nothing (void) and the telemetry table (B against A); the store's read
    // keeps the rows of a bounded number of repetitions per cell (slim::TelemetryBound).
    let telemetry = true;
    let ms = common::report_records(&store, ids[0], telemetry)?;
    let how = Reading {
        metric: a.metric.as_deref(),
        cfg: &cfg,
        buckets: &buckets,
    };
    let view: CompareView = match ids.get(1) {
        Some(&other) => {
            let info_b = store.run(other)?;
            let ms_b = common::report_records(&store, other, telemetry)?;
            compare::runs((&info, &ms), (&info_b, &ms_b), &how)?
        }
        None => compare::variants(&info, &ms, pair, &how)?,
    };
    match a.format {
        TextFormat::Json => envelope::print(&view.json(&a.section)?)?,
        TextFormat::Markdown => {
            crate::stdout_guard::print(view.text(Format::Markdown, &a.section)?)?
        }
        TextFormat::Text => crate::stdout_guard::print(view.text(Format::Text, &a.section)?)?,
    }
    // After the tables, as `run` lists its void comparisons.
    if a.format != TextFormat::Json {
        if let Some(listing) = compare_void::listing(&view.table) {
            crate::stdout_guard::line("")?;
            crate::stdout_guard::print(listing)?;
        }
    }
    crate::stdout_guard::Stdout.flush()?;
    if let Some(dir) = &a.drilldown {
        view.write_drilldown(dir, &info, &ms)?;
        eprintln!("drill-down per pair written to {}/", dir.display());
    }
    // The gate the user asked for speaks first; a void row trips none of them.
    let tripped = fail_on::tripped(&view.table, &a.fail_on);
    if !tripped.is_empty() {
        eprintln!(
            "{}",
            fail_on::line(&a.fail_on, &tripped, view.table.rows.len())
        );
        return Ok(crate::exit::GATE);
    }
    if compare_void::throughout(&view.table) {
        eprintln!("{}", compare_void::last_line(&view.table));
        return Ok(crate::exit::VOID);
    }
    Ok(0)
}

/// `--variants A,B`: the baseline and the other.
fn variant_pair(v: &str) -> anyhow::Result<(String, String)> {
    let (x, y) = v
        .split_once(',')
        .ok_or_else(|| input(format!("--variants {v:?}: expected A,B")))?;
    Ok((x.trim().to_string(), y.trim().to_string()))
}
