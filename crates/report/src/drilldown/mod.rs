//! Per-pair drill-down in the shape of the seed's `CPUS-4-24-summary`: the compared
//! metric with intervals and a verdict, then the interrupts and idle-state telemetry of
//! both CPUs under each variant, as medians over the repetitions.

pub(crate) mod parts;
pub mod single;

use std::path::{Path, PathBuf};

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::Better;
use perflab_stats::{fmt_p, Buckets, Comparison};

use crate::drilldown::parts::{
    failed_note, known_pairs, kv_lines, median_ci_text, pair_cpus, per_cpu_sections,
    summary_file_name, unit_or_count, unit_suffix, write_file,
};
use crate::drilldown::single::{render_pair_without, Absent};
use crate::error::ReportError;
use crate::section::{Format, Section};
use crate::tables::compare::text::{better_text, unavailable_text};
use crate::tables::compare::{ComparisonTable, Row, TableKind, Unmatched};
use crate::tables::distribution::distribution;
use crate::{fmt, hints};

/// The subdirectory of the summaries of pairs that were not compared (one variant had no
/// effective result there): not a bucket, since there is no regression to classify.
pub const NOT_COMPARED_DIR: &str = "not-compared";

/// The drill-down text of CPU pair `a`,`b` (`perflab show RUN --pair A,B`).
pub fn render_pair(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    table: &ComparisonTable,
    a: u32,
    b: u32,
) -> Result<String, ReportError> {
    variants_of(table)?;
    if let Some(row) = table.pair_row(a, b) {
        return render_row(run, ms, table, row);
    }
    if let Some(text) = unmatched_pair(table, a, b)
        .map(|u| render_unmatched(run, ms, table, u))
        .transpose()?
        .flatten()
    {
        return Ok(text);
    }
    let compared = table.rows.iter().map(|r| r.pair);
    let not_compared = table
        .unmatched
        .iter()
        .map(|u| table.param_roles.cpu_pair(&u.params));
    Err(ReportError::NoSuchPair {
        a,
        b,
        known: known_pairs(compared.chain(not_compared)),
    })
}

/// The pair `a`,`b` among the points that could not be compared.
fn unmatched_pair(table: &ComparisonTable, a: u32, b: u32) -> Option<&Unmatched> {
    table
        .unmatched
        .iter()
        .find(|u| table.param_roles.cpu_pair(&u.params) == Some((a, b)))
}

/// The summary of a pair that was not compared because one variant has no effective
/// result there (every measurement failed or was ineffective, as poll-only on a haltpoll
/// guest): what the other variant measured, the first in the place of its figures with
/// the reason, and the ineffective measurements. `None` when neither side has a result.
fn render_unmatched(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    table: &ComparisonTable,
    u: &Unmatched,
) -> Result<Option<String>, ReportError> {
    let (base, other) = variants_of(table)?;
    let Some((a, b)) = table.param_roles.cpu_pair(&u.params) else {
        return Ok(None);
    };
    let (measured, absent) = match (u.median_a, u.median_b) {
        (Some(_), None) => (base, other),
        (None, Some(_)) => (other, base),
        _ => return Ok(None),
    };
    let why = Absent {
        variant: absent.to_string(),
        why: format!("not compared: {}", u.reason),
    };
    let mut out = render_pair_without(run, ms, measured, a, b, &[why])?;
    let here = ms.iter().filter(|m| {
        (m.variant == base || m.variant == other)
            && table.param_roles.cpu_pair(&m.params) == Some((a, b))
    });
    let ineffective = crate::tables::coverage::ineffective_lines(&table.param_roles, here);
    push_ineffective(&mut out, ineffective);
    out.push_str(&unavailable_text(&table.unavailable));
    Ok(Some(out))
}

fn push_ineffective(out: &mut String, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    out.push_str(
        "\nINEFFECTIVE (a knob did not hold; not counted as the variant, no verdict \
         uses them):\n",
    );
    for l in lines {
        out.push_str(&format!("  {l}\n"));
    }
}

/// The drill-down text of one row of a variant comparison.
pub fn render_row(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    table: &ComparisonTable,
    row: &Row,
) -> Result<String, ReportError> {
    let (base, other) = variants_of(table)?;
    let mut out = metric_section(run, table, row, base, other);
    let cpus = pair_cpus(row.pair);
    let here = |v: &str| -> Vec<&MeasurementRecord> {
        ms.iter()
            .filter(|m| m.point == row.point_a && m.variant == v)
            .collect()
    };
    // Telemetry beside the numbers comes from the same repetitions as the numbers.
    let at = |v: &str| -> Vec<&MeasurementRecord> {
        here(v).into_iter().filter(|m| m.is_result()).collect()
    };
    out.push_str(&per_cpu_sections(
        run,
        &[(base, at(base)), (other, at(other))],
        &cpus,
    ));
    let ineffective = crate::tables::coverage::ineffective_lines(
        &table.param_roles,
        here(base).into_iter().chain(here(other)),
    );
    push_ineffective(&mut out, ineffective);
    out.push_str(&unavailable_text(&table.unavailable));
    Ok(out)
}

/// Writes `<dir>/<bucket>/CPUS-A-B-summary` for every row and `<dir>/distribution.txt`;
/// returns the files written.
pub fn write_drilldown(
    dir: &Path,
    run: &RunInfo,
    ms: &[MeasurementRecord],
    table: &ComparisonTable,
    buckets: &Buckets,
) -> Result<Vec<PathBuf>, ReportError> {
    variants_of(table)?;
    let mut written = Vec::new();
    for row in &table.rows {
        // A zero baseline leaves no regression percent and so no bucket; filing such a
        // row under `1` would claim "no change", so it gets a directory of its own.
        let sub = match row.cmp.regression_pct {
            Some(r) => buckets.classify(r).dir_name(),
            None => "unclassified".to_string(),
        };
        let name = summary_file_name(row.pair, &row.label);
        let text = render_row(run, ms, table, row)?;
        write_file(dir.join(sub).join(name), &text, &mut written)?;
    }
    // A pair one variant has no result at is in no bucket, but what was measured there
    // still gets its summary.
    for u in &table.unmatched {
        if let Some(text) = render_unmatched(run, ms, table, u)? {
            let name = summary_file_name(table.param_roles.cpu_pair(&u.params), &u.label);
            write_file(dir.join(NOT_COMPARED_DIR).join(name), &text, &mut written)?;
        }
    }
    let dist = distribution(table, buckets).render(Format::Text);
    write_file(dir.join("distribution.txt"), &dist, &mut written)?;
    Ok(written)
}

fn variants_of(table: &ComparisonTable) -> Result<(&str, &str), ReportError> {
    match &table.kind {
        TableKind::Variants { base, other, .. } => Ok((base, other)),
        TableKind::Runs { .. } => Err(ReportError::NotVariantComparison),
    }
}

/// The compared metric of one row: each variant's median with its interval, the change
/// with the interval the verdict used, the p-values and the verdict, as key-value lines
/// under the workload's banner.
fn metric_section(
    run: &RunInfo,
    t: &ComparisonTable,
    row: &Row,
    base: &str,
    other: &str,
) -> String {
    let c = &row.cmp;
    let title = if let Some(t) = hints::result_title(&run.workload) {
        t.to_string()
    } else {
        format!("{} Information", t.metric)
    };
    let mut out = fmt::banner(&title);
    let unit = t.unit.symbol();
    let mut lines: Vec<(String, String)> = vec![(
        "Metric".into(),
        format!(
            "median {} ({}), {}",
            t.metric,
            unit_or_count(unit),
            better_text(t.better)
        ),
    )];
    lines.extend(variant_lines(t, row, base, other));
    lines.push(change_line(t, c));
    lines.extend(p_value_lines(t, c));
    lines.push(verdict_line(t, c));
    lines.push(("Design".into(), t.design.description()));
    for n in &c.notes {
        lines.push(("Note".into(), n.clone()));
    }
    out.push_str(&kv_lines(&lines));
    out
}

/// `With <variant>`: its median, interval, repetitions and failures, base first.
fn variant_lines(t: &ComparisonTable, row: &Row, base: &str, other: &str) -> Vec<(String, String)> {
    let c = &row.cmp;
    let unit = t.unit.symbol();
    let conf = t.config.confidence_label();
    [(base, &c.a, row.failed_a), (other, &c.b, row.failed_b)]
        .into_iter()
        .map(|(name, s, failed)| {
            let failed = failed_note(failed);
            let ci = median_ci_text(s, &conf);
            (
                format!("With {name}"),
                format!(
                    "{}{}, {ci}, n = {}{failed}",
                    fmt::value(s.median),
                    unit_suffix(unit),
                    s.n
                ),
            )
        })
        .collect()
}

/// The change between the variants with the interval the verdict used, at its own level
/// (1 - R*alpha/m in a family). Regression runs opposite to the change when higher is
/// better; a metric with no better direction shows the signed change instead.
fn change_line(t: &ComparisonTable, c: &Comparison) -> (String, String) {
    let widened = if c.decision.widened {
        " (widened: too few repetitions)"
    } else {
        ""
    };
    let conf = crate::tables::compare::verdict::level_label(c.decision.level);
    let (name, text) = match (c.change_pct, c.change_ci_pct, t.better) {
        (Some(ch), Some((lo, hi)), Better::Higher) => (
            "Percentage regression",
            format!(
                "{:.2} %, {conf} CI [{:.2}, {:.2}]{widened} (positive = worse)",
                -ch, -hi, -lo
            ),
        ),
        (Some(ch), Some((lo, hi)), Better::Lower) => (
            "Percentage regression",
            format!("{ch:.2} %, {conf} CI [{lo:.2}, {hi:.2}]{widened} (positive = worse)"),
        ),
        (Some(ch), Some((lo, hi)), Better::Neither) => (
            "Percentage change",
            format!("{ch:+.2} %, {conf} CI [{lo:+.2}, {hi:+.2}]{widened} (B vs A)"),
        ),
        _ => (
            "Percentage change",
            "undefined (baseline median is 0)".to_string(),
        ),
    };
    (name.into(), text)
}

/// The decision's p-value and the one adjusted over the comparison's rows.
fn p_value_lines(t: &ComparisonTable, c: &Comparison) -> [(String, String); 2] {
    let rows = t.p_adjustment.rows;
    [
        (
            "p-value (decision)".into(),
            format!(
                "{} ({}; how far the change is from the nearer threshold)",
                fmt_p(c.p_value),
                c.decision.method.as_str()
            ),
        ),
        (
            "p-value adjusted".into(),
            format!(
                "{} (Benjamini-Hochberg, for the {rows} row{} of the comparison)",
                fmt_p(c.p_adjusted),
                if rows == 1 { "" } else { "s" }
            ),
        ),
    ]
}

/// The verdict with what it means, and how many repetitions would decide it.
fn verdict_line(t: &ComparisonTable, c: &Comparison) -> (String, String) {
    (
        "Verdict".into(),
        format!(
            "{} (better/WORSE: CI beyond +/-{}%; same: inside; undecided: across){}",
            c.symbol(),
            t.config.noise_pct,
            c.decision
                .reps_to_decide
                .map(|n| format!("; about {n} repetitions per side would decide it"))
                .unwrap_or_default()
        ),
    )
}
