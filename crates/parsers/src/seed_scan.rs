//! A size scan table as engineers paste them into mails and READMEs (seed 002):
//!
//! ```text
//! |    buff | veos 1.2.2 | v1_64_96 |
//! |      kb |  BW MiB/s  | BW MiB/s |
//! | ------- | ---------- | -------- |
//! |      32 |      131   |      106 |
//! ```
//!
//! The first column is the size, with its unit in the header; every other column is one
//! series (a software version, a page size), labelled by its header words less the
//! bandwidth unit. Several tables in one text are told apart by a `table` parameter.

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Unit};

use crate::error::ParseError;
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this, num, shown};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "seed-scan",
    help: "a Markdown-style size scan table (| buff kb | version A | version B |): \
           one row per size and column, bandwidth in MiB/s",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "seed-scan";

/// The first column is the size the table scans, in bytes: the report's scan axis.
pub(crate) fn param_roles() -> perflab_core::ParamRoles {
    let mut roles = perflab_core::ParamRoles::default();
    roles.insert("size", perflab_core::ParamRole::SizeAxis);
    roles
}

fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(|c| c.trim().to_string()).collect()
}

fn is_rule(line: &str) -> bool {
    let c = cells(line);
    c.iter().all(|c| {
        let c = c.trim_matches(':');
        !c.is_empty() && c.bytes().all(|b| b == b'-')
    })
}

fn size_scale(word: &str) -> Option<u64> {
    match word.to_ascii_lowercase().as_str() {
        "b" | "bytes" | "byte" => Some(1),
        "kb" | "kib" | "k" => Some(1 << 10),
        "mb" | "mib" | "m" => Some(1 << 20),
        "gb" | "gib" | "g" => Some(1 << 30),
        _ => None,
    }
}

/// MiB/s per unit of a bandwidth column, and whether it was a decimal (SI) unit.
fn bw_scale(word: &str) -> Option<(f64, bool)> {
    const MIB: f64 = 1024.0 * 1024.0;
    match word.to_ascii_lowercase().as_str() {
        "mib/s" => Some((1.0, false)),
        "gib/s" => Some((1024.0, false)),
        "kib/s" => Some((1.0 / 1024.0, false)),
        "b/s" => Some((1.0 / MIB, false)),
        "mb/s" => Some((1e6 / MIB, true)),
        "gb/s" => Some((1e9 / MIB, true)),
        "kb/s" => Some((1e3 / MIB, true)),
        _ => None,
    }
}

struct Column {
    label: String,
    scale: f64,
}

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tables: Vec<(usize, usize)> = Vec::new(); // [start, end) line indexes
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with('|') {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && lines[i].trim_start().starts_with('|') {
            i += 1;
        }
        if (start..i).any(|k| is_rule(lines[k])) {
            tables.push((start, i));
        }
    }
    if tables.is_empty() {
        return Err(not_this(TOOL, "no `| … |` table with a `| --- |` rule"));
    }
    let mut out = Parsed {
        param_roles: param_roles(),
        ..Parsed::default()
    };
    let several = tables.len() > 1;
    for (n, (start, end)) in tables.iter().enumerate() {
        let table_no = n + 1;
        if several {
            let since = if n == 0 { 0 } else { tables[n - 1].1 };
            let title: Vec<&str> = lines[since..*start]
                .iter()
                .map(|l| l.trim())
                .filter(|l| !l.is_empty() && !l.starts_with("```"))
                .collect();
            let title = title[title.len().saturating_sub(2)..].join(" / ");
            out.notes
                .push(format!("table {table_no} (line {}): {title}", start + 1));
        }
        read_table(&lines, *start, *end, several.then_some(table_no), &mut out)?;
    }
    if out.rows.is_empty() {
        return Err(bad(TOOL, tables[0].0 + 1, "the table has no values"));
    }
    Ok(out)
}

fn read_table(
    lines: &[&str],
    start: usize,
    end: usize,
    table_no: Option<usize>,
    out: &mut Parsed,
) -> Result<(), ParseError> {
    let rule = check_shape(lines, start, end)?;
    let header: Vec<Vec<String>> = (start..rule).map(|k| cells(lines[k])).collect();
    let (size_scale, columns) = header_columns(&header, start, out)?;
    for (k, line) in lines.iter().enumerate().take(end).skip(rule + 1) {
        read_row(k, line, size_scale, &columns, table_no, out)?;
    }
    Ok(())
}

/// Every line has the header's cell count, at least a size and a value column, and a
/// header above the rule; returns the rule's line.
fn check_shape(lines: &[&str], start: usize, end: usize) -> Result<usize, ParseError> {
    let rule = (start..end).find(|k| is_rule(lines[*k])).unwrap_or(start);
    let width = cells(lines[start]).len();
    for (k, line) in lines.iter().enumerate().take(end).skip(start) {
        let c = cells(line).len();
        if c != width {
            return Err(bad(
                TOOL,
                k + 1,
                format!(
                    "{c} cells where the header has {width}: {}",
                    shown(lines[k])
                ),
            ));
        }
    }
    if width < 2 {
        return Err(bad(
            TOOL,
            start + 1,
            "a scan table needs a size column and a value column",
        ));
    }
    if rule == start {
        return Err(bad(TOOL, start + 1, "no header above the rule"));
    }
    Ok(rule)
}

/// The size column's byte scale and each value column's label and MiB/s scale, read
/// from the header lines; a decimal unit is noted in `out`.
fn header_columns(
    header: &[Vec<String>],
    start: usize,
    out: &mut Parsed,
) -> Result<(u64, Vec<Column>), ParseError> {
    let width = header[0].len();
    let words = |col: usize| -> Vec<String> {
        header
            .iter()
            .flat_map(|h| {
                h[col]
                    .split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let size_scale = words(0)
        .iter()
        .rev()
        .find_map(|w| size_scale(w))
        .ok_or_else(|| {
            bad(
                TOOL,
                start + 1,
                "the size column's header names no unit (b, kb, mb, gb)",
            )
        })?;
    let mut columns = Vec::new();
    for col in 1..width {
        let w = words(col);
        let (scale, si) = w.iter().rev().find_map(|x| bw_scale(x)).ok_or_else(|| {
            bad(
                TOOL,
                start + 1,
                format!(
                    "column {} names no bandwidth unit (MiB/s, GB/s, …)",
                    col + 1
                ),
            )
        })?;
        let label: Vec<&str> = w
            .iter()
            .map(String::as_str)
            .filter(|x| bw_scale(x).is_none() && !x.eq_ignore_ascii_case("bw"))
            .collect();
        let label = if label.is_empty() {
            format!("column{}", col + 1)
        } else {
            label.join(" ")
        };
        if si {
            out.notes.push(format!(
                "{label}: a decimal unit (10^3 multiples), converted to MiB/s"
            ));
        }
        columns.push(Column { label, scale });
    }
    Ok((size_scale, columns))
}

/// One body line `k`: a size and one bandwidth row per filled value cell.
fn read_row(
    k: usize,
    line: &str,
    size_scale: u64,
    columns: &[Column],
    table_no: Option<usize>,
    out: &mut Parsed,
) -> Result<(), ParseError> {
    let row = cells(line);
    let size = num(&row[0])
        .filter(|v| *v >= 0.0)
        .ok_or_else(|| bad(TOOL, k + 1, format!("size {:?} is not a number", row[0])))?;
    let bytes = size * size_scale as f64;
    if bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(bad(
            TOOL,
            k + 1,
            format!("size {:?} is not a whole number of bytes", row[0]),
        ));
    }
    for (col, c) in columns.iter().enumerate() {
        let cell = &row[col + 1];
        if cell.is_empty() || cell == "-" || cell.eq_ignore_ascii_case("n/a") {
            continue;
        }
        let v = num(cell).ok_or_else(|| {
            bad(
                TOOL,
                k + 1,
                format!("{:?} in column {} is not a number", cell, col + 2),
            )
        })?;
        let mut params = vec![("size".to_string(), format!("{}", bytes as u64))];
        if let Some(t) = table_no {
            params.push(("table".to_string(), t.to_string()));
        }
        out.rows.push(ParsedRow {
            histograms: Vec::new(),
            telemetry: Vec::new(),
            params,
            series: Some(c.label.clone()),
            metrics: vec![metric(
                "bandwidth_mib_s",
                v * c.scale,
                Unit::MibPerSecond,
                Better::Higher,
            )],
        });
    }
    Ok(())
}
