//! Pieces shared by the drill-downs of a comparison and of a single variant: the
//! telemetry sections of the seed's summary file, aligned `key : value` lines, and file
//! writing with the path in the error.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::PerCpuLayout;
use perflab_stats::Summary;

use crate::error::ReportError;
use crate::fmt;
use crate::hints;
use crate::telemetry::{median_total, medians, MedianRow};

/// The CPUs a point's telemetry is shown for: both of a pair, one when they coincide.
pub(crate) fn pair_cpus(pair: Option<(u32, u32)>) -> Vec<u32> {
    match pair {
        Some((x, y)) if x != y => vec![x, y],
        Some((x, _)) => vec![x],
        None => Vec::new(),
    }
}

/// `key : value` lines with the colons aligned, as the seed prints them.
pub(crate) fn kv_lines(lines: &[(String, String)]) -> String {
    let width = lines
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (k, v) in lines {
        let _ = writeln!(out, "{k:<width$} : {v}");
    }
    out
}

/// The pairs a table has, for the error naming a pair it lacks.
pub(crate) fn known_pairs(pairs: impl Iterator<Item = Option<(u32, u32)>>) -> String {
    let pairs: Vec<String> = pairs.flatten().map(|(a, b)| format!("{a},{b}")).collect();
    if pairs.is_empty() {
        "none; the points are not CPU pairs".to_string()
    } else {
        pairs.join(" ")
    }
}

/// The interval of a median in a drill-down's `With <variant>` line.
pub(crate) fn median_ci_text(s: &Summary, confidence: &str) -> String {
    if s.median_ci_degenerate {
        "no CI from a single value".to_string()
    } else {
        format!("{confidence} CI {}", fmt::value_ci(s.median_ci))
    }
}

/// `, N failed (not counted)` after a count of successful measurements, or nothing.
pub(crate) fn failed_note(failed: u32) -> String {
    if failed > 0 {
        format!(", {failed} failed (not counted)")
    } else {
        String::new()
    }
}

/// The file name of a point's summary: `CPUS-A-B-summary` as in the seed, else one
/// named by the point's label.
pub(crate) fn summary_file_name(pair: Option<(u32, u32)>, label: &str) -> String {
    match pair {
        Some((a, b)) => format!("CPUS-{a}-{b}-summary"),
        None => format!("POINT-{}-summary", file_safe(label)),
    }
}

/// Writes `text` to `path`, creating its directory, and records the path in `written`.
pub(crate) fn write_file(
    path: PathBuf,
    text: &str,
    written: &mut Vec<PathBuf>,
) -> Result<(), ReportError> {
    if let Some(parent) = path.parent() {
        create_dir(parent)?;
    }
    fs::write(&path, text).map_err(|source| ReportError::Write {
        path: path.display().to_string(),
        source,
    })?;
    written.push(path);
    Ok(())
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.display().to_string(),
        source,
    })
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

pub(crate) fn unit_or_count(symbol: &str) -> &str {
    if symbol.is_empty() {
        "count"
    } else {
        symbol
    }
}

pub(crate) fn unit_suffix(symbol: &str) -> String {
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

/// A telemetry section of the seed's summary file: the banner, then why `source` was not
/// recorded, or the repetitions note (`note` may add to it) and each CPU's lines, the
/// CPUs separated by a dashed line.
fn cpu_section(
    run: &RunInfo,
    recs: &[&MeasurementRecord],
    (source, title): (&str, String),
    cpus: &[u32],
    note: impl FnOnce(String) -> String,
    mut per_cpu: impl FnMut(&mut String, u32, &[MedianRow]),
) -> String {
    let mut out = fmt::banner(&title);
    let (rows, reps) = medians(recs, source);
    if reps == 0 {
        let _ = writeln!(out, "not recorded: {}", missing_reason(run, source));
        return out;
    }
    out.push_str(&note(reps_note(reps)));
    for (i, &cpu) in cpus.iter().enumerate() {
        if i > 0 {
            out.push_str("-------\n");
        }
        per_cpu(&mut out, cpu, &rows);
    }
    out
}

/// The per-CPU sections of a drill-down's summary file: for each monitor whose hints ask
/// for one, in registry order, a section per variant (`recs` are the variant's
/// repetitions).
pub(crate) fn per_cpu_sections(
    run: &RunInfo,
    variants: &[(&str, Vec<&MeasurementRecord>)],
    cpus: &[u32],
) -> String {
    let mut out = String::new();
    for d in hints::monitors() {
        let Some(table) = d.rows().and_then(|h| h.per_cpu_table.as_ref()) else {
            continue;
        };
        for (variant, recs) in variants {
            let title = format!("{} : {variant}", table.title);
            out.push_str(&match table.layout {
                PerCpuLayout::Counts { total } => {
                    counts_section(run, recs, (d.name, title), cpus, total)
                }
                PerCpuLayout::States => states_section(run, recs, (d.name, title), cpus),
            });
        }
    }
    out
}

/// `CPU n: KEY [label] = N times` per non-zero row, then the CPU's total.
fn counts_section(
    run: &RunInfo,
    recs: &[&MeasurementRecord],
    (source, title): (&str, String),
    cpus: &[u32],
    total: &str,
) -> String {
    let note = |n: String| n.replace(')', "; Total is the median of per-repetition totals)");
    cpu_section(run, recs, (source, title), cpus, note, |out, cpu, rows| {
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
        let sum = median_total(recs, source, cpu);
        let _ = writeln!(out, "CPU {cpu}: {total} = {}", fmt::count(sum));
    })
}

/// One line per state of rows keyed `{state}:usage`, `{state}:time`, `{state}:disabled`.
fn states_section(
    run: &RunInfo,
    recs: &[&MeasurementRecord],
    (source, title): (&str, String),
    cpus: &[u32],
) -> String {
    cpu_section(
        run,
        recs,
        (source, title),
        cpus,
        |n| n,
        |out, cpu, rows| {
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
        },
    )
}

/// Why a source has no rows, as far as the stored run says: the monitor was not asked
/// for, a reason the runner stored under `spec.unavailable_monitors.<name>`, or else
/// the plain fact.
fn missing_reason(run: &RunInfo, source: &str) -> String {
    if let Some(r) = run.spec.unavailable_monitors.get(source) {
        return r.clone();
    }
    // An imported run lists no monitors: it says nothing about which were enabled.
    let list = &run.spec.monitors;
    if !list.is_empty() && !list.iter().any(|m| m == source) {
        return format!("the {source} monitor was not enabled for this run");
    }
    format!(
        "no {source} telemetry in these measurements (the machine may lack it; \
         `perflab doctor` says what this machine has)"
    )
}
