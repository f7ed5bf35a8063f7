//! Per-pair drill-down in the shape of the seed's `CPUS-4-24-summary`: the compared
//! metric with intervals and a verdict, then the interrupts and idle-state telemetry of
//! both CPUs under each variant, as medians over the repetitions.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::Better;
use perflab_stats::{fmt_p, Buckets};

use crate::compare::{ComparisonTable, Row, TableKind};
use crate::distribution::distribution;
use crate::error::ReportError;
use crate::fmt;
use crate::table_text::{better_text, unavailable_text};
use crate::telemetry::{median_total, medians};

/// The drill-down text of CPU pair `a`,`b` (`perflab show RUN --pair A,B`).
pub fn render_pair(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    table: &ComparisonTable,
    a: u32,
    b: u32,
) -> Result<String, ReportError> {
    variants_of(table)?;
    let row = table
        .pair_row(a, b)
        .ok_or_else(|| ReportError::NoSuchPair {
            a,
            b,
            known: known_pairs(table),
        })?;
    render_row(run, ms, table, row)
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
    let cpus: Vec<u32> = match row.pair {
        Some((x, y)) if x != y => vec![x, y],
        Some((x, _)) => vec![x],
        None => Vec::new(),
    };
    let at = |v: &str| -> Vec<&MeasurementRecord> {
        ms.iter()
            .filter(|m| m.point == row.point_a && m.variant == v)
            .collect()
    };
    for v in [base, other] {
        out.push_str(&irq_section(run, &at(v), v, &cpus));
    }
    for v in [base, other] {
        out.push_str(&idle_section(run, &at(v), v, &cpus));
    }
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
    let write = |path: PathBuf, text: &str, written: &mut Vec<PathBuf>| {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| ReportError::Write {
                path: parent.display().to_string(),
                source,
            })?;
        }
        fs::write(&path, text).map_err(|source| ReportError::Write {
            path: path.display().to_string(),
            source,
        })?;
        written.push(path);
        Ok::<(), ReportError>(())
    };
    for row in &table.rows {
        // A zero baseline leaves no regression percent and so no bucket; filing such a
        // row under `1` would claim "no change", so it gets a directory of its own.
        let sub = match row.cmp.regression_pct {
            Some(r) => buckets.classify(r).dir_name(),
            None => "unclassified".to_string(),
        };
        let name = match row.pair {
            Some((a, b)) => format!("CPUS-{a}-{b}-summary"),
            None => format!("POINT-{}-summary", file_safe(&row.label)),
        };
        let text = render_row(run, ms, table, row)?;
        write(dir.join(sub).join(name), &text, &mut written)?;
    }
    let dist = distribution(table, buckets).render_text();
    write(dir.join("distribution.txt"), &dist, &mut written)?;
    Ok(written)
}

fn variants_of(table: &ComparisonTable) -> Result<(&str, &str), ReportError> {
    match &table.kind {
        TableKind::Variants { base, other, .. } => Ok((base, other)),
        TableKind::Runs { .. } => Err(ReportError::NotVariantComparison),
    }
}

fn known_pairs(table: &ComparisonTable) -> String {
    let pairs: Vec<String> = table
        .rows
        .iter()
        .filter_map(|r| r.pair)
        .map(|(a, b)| format!("{a},{b}"))
        .collect();
    if pairs.is_empty() {
        "none; the points are not CPU pairs".to_string()
    } else {
        pairs.join(" ")
    }
}

fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn metric_section(
    run: &RunInfo,
    t: &ComparisonTable,
    row: &Row,
    base: &str,
    other: &str,
) -> String {
    let c = &row.cmp;
    let title = if run.workload == "ctxsw" {
        "Context Switch Information".to_string()
    } else {
        format!("{} Information", t.metric)
    };
    let mut out = fmt::banner(&title);
    let unit = t.unit.symbol();
    let conf = t.config.confidence_label();
    let mut lines: Vec<(String, String)> = Vec::new();
    lines.push((
        "Metric".into(),
        format!(
            "median {} ({}), {}",
            t.metric,
            unit_or_count(unit),
            better_text(t.better)
        ),
    ));
    for (name, s, failed) in [(base, &c.a, row.failed_a), (other, &c.b, row.failed_b)] {
        let failed = if failed > 0 {
            format!(", {failed} failed (not counted)")
        } else {
            String::new()
        };
        let ci = if s.median_ci_degenerate {
            "no CI from a single value".to_string()
        } else {
            format!(
                "{conf} CI [{}, {}]",
                fmt::value(s.median_ci.0),
                fmt::value(s.median_ci.1)
            )
        };
        lines.push((
            format!("With {name}"),
            format!(
                "{}{}, {ci}, n = {}{failed}",
                fmt::value(s.median),
                unit_suffix(unit),
                s.n
            ),
        ));
    }
    let widened = if c.shift.widened {
        " (widened: too few repetitions)"
    } else {
        ""
    };
    // Regression runs opposite to the change when higher is better; a metric with no
    // better direction shows the signed change instead.
    let (reg_name, reg) = match (c.change_pct, c.change_ci_pct, t.better) {
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
    lines.push((reg_name.into(), reg));
    lines.push((
        "p-value (Mann-Whitney U)".into(),
        format!("{} ({})", fmt_p(c.p_value), c.test.method.as_str()),
    ));
    lines.push((
        "Verdict".into(),
        format!(
            "{} (needs p < {} and |change| > {}%)",
            c.symbol(),
            t.config.alpha,
            t.config.noise_pct
        ),
    ));
    for n in &c.notes {
        lines.push(("Note".into(), n.clone()));
    }
    let width = lines
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    for (k, v) in lines {
        let _ = writeln!(out, "{k:<width$} : {v}");
    }
    out
}

fn unit_or_count(symbol: &str) -> &str {
    if symbol.is_empty() {
        "count"
    } else {
        symbol
    }
}

fn unit_suffix(symbol: &str) -> String {
    if symbol.is_empty() {
        String::new()
    } else {
        format!(" {symbol}")
    }
}

fn reps_note(reps: usize) -> String {
    format!(
        "(medians over {reps} repetition{})\n",
        if reps == 1 { "" } else { "s" }
    )
}

fn irq_section(run: &RunInfo, recs: &[&MeasurementRecord], variant: &str, cpus: &[u32]) -> String {
    let mut out = fmt::banner(&format!("IRQ Information : {variant}"));
    let (rows, reps) = medians(recs, "interrupts");
    if reps == 0 {
        let _ = writeln!(out, "not recorded: {}", missing_reason(run, "interrupts"));
        return out;
    }
    out.push_str(&reps_note(reps).replace(')', "; Total is the median of per-repetition totals)"));
    for (i, &cpu) in cpus.iter().enumerate() {
        if i > 0 {
            out.push_str("-------\n");
        }
        for r in rows
            .iter()
            .filter(|r| r.cpu == Some(cpu) && r.median != 0.0)
        {
            let label = if r.label.is_empty() {
                String::new()
            } else {
                format!(" [{}]", r.label)
            };
            let _ = writeln!(
                out,
                "CPU {cpu}: {}{label} = {} times",
                r.key,
                fmt::count(r.median)
            );
        }
        let total = median_total(recs, "interrupts", cpu);
        let _ = writeln!(out, "CPU {cpu}: Total IRQs = {}", fmt::count(total));
    }
    out
}

fn idle_section(run: &RunInfo, recs: &[&MeasurementRecord], variant: &str, cpus: &[u32]) -> String {
    let mut out = fmt::banner(&format!("Idle State information : {variant}"));
    let (rows, reps) = medians(recs, "cpuidle");
    if reps == 0 {
        let _ = writeln!(out, "not recorded: {}", missing_reason(run, "cpuidle"));
        return out;
    }
    out.push_str(&reps_note(reps));
    for (i, &cpu) in cpus.iter().enumerate() {
        if i > 0 {
            out.push_str("-------\n");
        }
        let mine: Vec<_> = rows.iter().filter(|r| r.cpu == Some(cpu)).collect();
        let mut states: Vec<&str> = Vec::new();
        for r in &mine {
            if let Some((state, _)) = r.key.rsplit_once(':') {
                if !states.contains(&state) {
                    states.push(state);
                }
            }
        }
        let get = |state: &str, field: &str| {
            let key = format!("{state}:{field}");
            mine.iter().find(|r| r.key == key).map(|r| r.median)
        };
        for state in states {
            let status = match get(state, "disabled") {
                Some(d) if d >= 0.5 => "disabled",
                Some(_) => "enabled ",
                None => "unknown ",
            };
            let usage = get(state, "usage").map_or("?".into(), fmt::count);
            let time = get(state, "time").map_or("?".into(), fmt::count);
            let _ = writeln!(
                out,
                "CPU{cpu}: {state} ({status}), Usage = {usage} times, Time = {time} us"
            );
        }
    }
    out
}

/// Why a source has no rows, as far as the stored run says: the monitor was not asked
/// for, a reason the runner stored under `spec.unavailable_monitors.<name>`, or else
/// the plain fact.
fn missing_reason(run: &RunInfo, source: &str) -> String {
    if let Some(r) = run
        .spec
        .get("unavailable_monitors")
        .and_then(|m| m.get(source))
        .and_then(|r| r.as_str())
    {
        return r.to_string();
    }
    if let Some(list) = run.spec.get("monitors").and_then(|m| m.as_array()) {
        if !list.iter().any(|m| m.as_str() == Some(source)) {
            return format!("the {source} monitor was not enabled for this run");
        }
    }
    format!(
        "no {source} telemetry in these measurements (the machine may lack it; \
         `perflab doctor` says what this machine has)"
    )
}
