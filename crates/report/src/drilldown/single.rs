//! The drill-down of a run that measured one variant only, because the other (usually
//! the baseline, e.g. idle-ipi's `poll-only` on a machine without a cpuidle driver or
//! without root) could not run. There is no regression to classify, so no buckets: one
//! `unpaired/CPUS-A-B-summary` per pair in the seed's shape, with the missing variant
//! and its reason where its figures would be, and a `distribution.txt` that says so.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use perflab_core::record::{MeasurementRecord, RunInfo, UnavailableVariant};
use perflab_core::Better;
use perflab_stats::StatsConfig;

use crate::doc::Block;
use crate::drilldown::parts::{
    failed_note, known_pairs, kv_lines, median_ci_text, pair_cpus, per_cpu_sections,
    summary_file_name, unit_or_count, unit_suffix, write_file,
};
use crate::error::ReportError;
use crate::tables::blocks::UNAVAILABLE;
use crate::tables::compare::no_such_variant;
use crate::tables::compare::text::better_text;
use crate::tables::summary::{summarize_where, SummaryRow, SummaryTable};
use crate::{fmt, hints};

/// The subdirectory of the per-pair files: not a bucket, since nothing was compared.
pub const UNPAIRED_DIR: &str = "unpaired";

/// The drill-down text of CPU pair `a`,`b` measured with `variant` alone; every variant
/// the run marked unavailable is named with its reason.
pub fn render_single_pair(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    variant: &str,
    a: u32,
    b: u32,
) -> Result<String, ReportError> {
    let absent: Vec<Absent> = run.unavailable.iter().map(Absent::unavailable).collect();
    render_pair_without(run, ms, variant, a, b, &absent)
}

/// A variant without figures at a pair, and what the summary says in their place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Absent {
    pub variant: String,
    /// `unavailable on this machine: …`, `not compared: every measurement ineffective …`.
    pub why: String,
}

impl Absent {
    pub fn unavailable(u: &UnavailableVariant) -> Self {
        Self {
            variant: u.variant.clone(),
            why: format!("unavailable on this machine: {}", u.reason),
        }
    }
}

/// The drill-down text of CPU pair `a`,`b` with `variant`'s figures alone, and the
/// `absent` variants named with the reason they have none there (unavailable on the
/// machine, or measured but with no effective result at this pair).
pub fn render_pair_without(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    variant: &str,
    a: u32,
    b: u32,
    absent: &[Absent],
) -> Result<String, ReportError> {
    let table = summary_of(run, ms, variant)?;
    let row = table
        .pair_row(a, b, variant)
        .ok_or_else(|| ReportError::NoSuchPair {
            a,
            b,
            known: known_pairs(table.rows.iter().map(|r| r.pair)),
        })?;
    Ok(pair_text(run, ms, &table, row, absent))
}

/// Writes `<dir>/unpaired/CPUS-A-B-summary` for every point measured with
/// `measured_variant`, then `<dir>/distribution.txt` saying why there is no regression
/// distribution; returns the files written.
pub fn write_single_drilldown(
    dir: &Path,
    run: &RunInfo,
    ms: &[MeasurementRecord],
    measured_variant: &str,
    missing: &[UnavailableVariant],
) -> Result<Vec<PathBuf>, ReportError> {
    let table = summary_of(run, ms, measured_variant)?;
    let mut written = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for row in &table.rows {
        let mut name = summary_file_name(row.pair, &row.label);
        // The same pair at two grid points (another parameter varies) must not
        // overwrite its first file.
        if names.contains(&name) {
            name = format!("{}-point{}", name, row.point);
        }
        names.push(name.clone());
        let absent: Vec<Absent> = missing.iter().map(Absent::unavailable).collect();
        let text = pair_text(run, ms, &table, row, &absent);
        write_file(dir.join(UNPAIRED_DIR).join(name), &text, &mut written)?;
    }
    let text = no_distribution_text(&table, measured_variant, missing);
    write_file(dir.join("distribution.txt"), &text, &mut written)?;
    Ok(written)
}

fn summary_of(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    variant: &str,
) -> Result<SummaryTable, ReportError> {
    if !ms.iter().any(|m| m.variant == variant) {
        return Err(no_such_variant(run, ms, variant));
    }
    summarize_where(run, ms, None, &StatsConfig::default(), |m| {
        m.variant == variant
    })
}

/// `distribution.txt` of a single-variant run: why there is none, and what was measured.
fn no_distribution_text(
    table: &SummaryTable,
    variant: &str,
    missing: &[UnavailableVariant],
) -> String {
    let mut out = String::new();
    match missing {
        [] => {
            let _ = writeln!(
                out,
                "No regression distribution: run {} measured only {variant}; a regression \
                 needs two variants at each pair.",
                table.run
            );
        }
        [m] => {
            let _ = writeln!(
                out,
                "No regression distribution: {} was unavailable on this machine: {}",
                m.variant, m.reason
            );
            let _ = writeln!(
                out,
                "Only {variant} was measured; a regression needs both at each pair."
            );
        }
        many => {
            let _ = writeln!(
                out,
                "No regression distribution: these variants were unavailable on this machine:"
            );
            for m in many {
                let _ = writeln!(out, "  {}: {}", m.variant, m.reason);
            }
            let _ = writeln!(
                out,
                "Only {variant} was measured; a regression needs two variants at each pair."
            );
        }
    }
    let pairs = table.rows.iter().all(|r| r.pair.is_some());
    let what = if pairs { "Pairs" } else { "Points" };
    let _ = writeln!(out, "\n{what} measured with {variant}:");
    // The summary without its list of variants not measured, which this file gives above.
    let mut blocks = table.to_blocks(false);
    blocks.retain(|b| !matches!(b, Block::List { title, .. } if title == UNAVAILABLE));
    out.push_str(&crate::doc::text::render(&blocks, None));
    let file = if pairs {
        "CPUS-A-B-summary"
    } else {
        "POINT-<point>-summary"
    };
    let _ = writeln!(out, "\nTelemetry of each: {UNPAIRED_DIR}/{file}");
    out
}

/// The seed's summary file for one point, with the missing variants in the place of
/// their figures.
fn pair_text(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    table: &SummaryTable,
    row: &SummaryRow,
    missing: &[Absent],
) -> String {
    let mut out = metric_section(run, table, row, missing);
    let recs: Vec<&MeasurementRecord> = ms
        .iter()
        .filter(|m| m.point == row.point && m.variant == row.variant)
        .collect();
    let cpus = pair_cpus(row.pair);
    out.push_str(&per_cpu_sections(
        run,
        &[(row.variant.as_str(), recs)],
        &cpus,
    ));
    out
}

fn metric_section(
    run: &RunInfo,
    table: &SummaryTable,
    row: &SummaryRow,
    missing: &[Absent],
) -> String {
    let name = table.metric.as_ref().map_or("", |m| m.name.as_str());
    let title = if let Some(t) = hints::result_title(&run.workload) {
        t.to_string()
    } else if name.is_empty() {
        "Information".to_string()
    } else {
        format!("{name} Information")
    };
    let mut out = fmt::banner(&title);
    let mut lines: Vec<(String, String)> = Vec::new();
    let unit = table.metric.as_ref().map_or("", |m| m.unit.symbol());
    if let Some(m) = &table.metric {
        lines.push((
            "Metric".into(),
            format!(
                "median {} ({}), {}",
                m.name,
                unit_or_count(unit),
                better_text(m.better)
            ),
        ));
    }
    let measured = (
        format!("With {}", row.variant),
        measured_text(table, row, unit),
    );
    let missing_lines: Vec<(String, String)> = missing
        .iter()
        .map(|m| (format!("With {}", m.variant), m.why.clone()))
        .collect();
    // The seed lists the baseline first; keep that order when the baseline is missing.
    let baseline = run.spec.compare.baseline.as_deref();
    if missing.iter().any(|m| Some(m.variant.as_str()) == baseline) {
        lines.extend(missing_lines);
        lines.push(measured);
    } else {
        lines.push(measured);
        lines.extend(missing_lines);
    }
    let change = match table.metric.as_ref().map(|m| m.better) {
        Some(Better::Neither) => "Percentage change",
        _ => "Percentage regression",
    };
    let why = match missing {
        [] => format!("only {} was measured", row.variant),
        _ => {
            let names: Vec<&str> = missing.iter().map(|m| m.variant.as_str()).collect();
            format!("no {} measurement to compare with", names.join(" or "))
        }
    };
    lines.push((change.into(), format!("n/a ({why})")));
    if let Some(w) = &row.warning {
        lines.push(("Note".into(), w.clone()));
    }
    out.push_str(&kv_lines(&lines));
    out
}

fn measured_text(table: &SummaryTable, row: &SummaryRow, unit: &str) -> String {
    let failed = failed_note(row.failed);
    let Some(s) = &row.summary else {
        let first = row
            .first_error
            .as_ref()
            .map(|e| format!("; first: {e}"))
            .unwrap_or_default();
        return format!("no successful measurement{failed}{first}");
    };
    let ci = median_ci_text(s, &table.config.confidence_label());
    let outliers = match row.outlier_reps.as_slice() {
        [] => String::new(),
        reps => {
            let reps: Vec<String> = reps.iter().map(u32::to_string).collect();
            format!(", Tukey outliers (kept): rep {}", reps.join(", "))
        }
    };
    format!(
        "{}{}, {ci}, n = {}, CV {:.2}%{failed}{outliers}",
        fmt::value(s.median),
        unit_suffix(unit),
        s.n,
        s.cv * 100.0
    )
}
