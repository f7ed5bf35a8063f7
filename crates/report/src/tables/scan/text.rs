//! The cells and words of a size scan, which its blocks are made of.

use perflab_core::record::RunId;

use crate::fmt;
use crate::tables::compare::text::{better_text, verdict_rule};
use crate::tables::compare::TableKind;
use crate::tables::scan::{kib, Parting, ScanPoint, ScanReport, ScanSection, ScanSummary};
use perflab_stats::fmt_p;

/// The verdict column, the only one of words.
pub(crate) const LEFT: usize = 7;

pub(crate) fn header(r: &ScanReport) -> Vec<String> {
    let unit = r.unit.symbol();
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" [{unit}]")
    };
    let what = match &r.compared {
        // The B/A line below names the variants (`B/A: 2m against 4k`); said here too,
        // the line did not fit a mail.
        TableKind::Variants { run, .. } => format!("run {run}"),
        TableKind::Runs { a, b } => format!(
            "{} vs {}",
            with_run(&r.b_label, *b),
            with_run(&r.a_label, *a)
        ),
    };
    let mut lines = vec![
        format!(
            "{what}: median {}{unit} by {}, {}",
            r.metric,
            r.axis,
            better_text(r.better)
        ),
        r.design.line(),
    ];
    lines.extend(r.drift.iter().flat_map(|d| d.lines()));
    lines.push(format!(
        "B/A: {} against {}; {}",
        r.b_label,
        r.a_label,
        // The scan's CI column is at the family's level.
        verdict_rule(&r.config, &r.p_adjustment, r.design, r.p_adjustment.level)
    ));
    if !r.fixed.0.is_empty() {
        lines.push(format!("fixed: {}", r.param_roles.describe(&r.fixed)));
    }
    lines
}

/// `kernel 6.1 (run 7)`, or just `run 7` when the run has no label.
fn with_run(label: &str, id: RunId) -> String {
    let plain = format!("run {id}");
    if label == plain || label.ends_with(&format!("({plain})")) {
        label.to_string()
    } else {
        format!("{label} ({plain})")
    }
}

/// Column names, their units (the seed's second header line), and one row per size.
pub(crate) fn cells(
    r: &ScanReport,
    s: &ScanSection,
) -> (Vec<String>, Vec<String>, Vec<Vec<String>>) {
    let unit = r.unit.symbol().to_string();
    let head = vec![
        r.axis.clone(),
        r.a_label.clone(),
        r.b_label.clone(),
        "B/A".to_string(),
        format!(
            "{} CI",
            crate::tables::compare::verdict::level_label(r.p_adjustment.level)
        ),
        "p".to_string(),
        "p adj".to_string(),
        "verdict".to_string(),
    ];
    let mut units = vec!["KiB".to_string(), unit.clone(), unit];
    units.resize(head.len(), String::new());
    let rows = s.points.iter().map(row).collect();
    (head, units, rows)
}

fn row(p: &ScanPoint) -> Vec<String> {
    let value = |v: Option<f64>| v.map_or("-".to_string(), fmt::value);
    let ci = p.ratio_ci.map_or("-".to_string(), |(lo, hi)| {
        let mark = if p.ci_widened { "!" } else { "" };
        format!("[{}, {}]{mark}", ratio(lo), ratio(hi))
    });
    let verdict = match p.verdict {
        Some(v) => v.symbol().to_string(),
        None => "not compared".to_string(),
    };
    vec![
        kib(p.size_bytes),
        value(p.median_a),
        value(p.median_b),
        p.ratio.map_or("-".to_string(), ratio),
        ci,
        p.p_value.map_or("-".to_string(), fmt_p),
        p.p_adjusted.map_or("-".to_string(), fmt_p),
        verdict,
    ]
}

fn ratio(x: f64) -> String {
    format!("{x:.3}")
}

pub(crate) fn not_compared(s: &ScanSection) -> impl Iterator<Item = String> + '_ {
    s.points.iter().filter_map(|p| {
        p.not_compared
            .as_ref()
            .map(|why| format!("{} KiB: {why}", kib(p.size_bytes)))
    })
}

/// The one line under a scan (definitions in the `scan` module doc).
pub(crate) fn summary_line(r: &ScanReport, s: &ScanSummary) -> String {
    let b = &r.b_label;
    let mean = match s.geomean_ratio {
        Some(g) if s.ratios == s.compared => format!("B/A geometric mean {}", ratio(g)),
        Some(g) => format!(
            "B/A geometric mean {} over the {} sizes with a ratio",
            ratio(g),
            s.ratios
        ),
        None => "no B/A ratio".to_string(),
    };
    let cross = match s.crossings.as_slice() {
        [] => String::new(),
        [c] => format!(
            "they cross between {} and {} KiB, and ",
            kib(c.below_bytes),
            kib(c.above_bytes)
        ),
        [.., c] => format!(
            "they cross {} times, last between {} and {} KiB, and ",
            s.crossings.len(),
            kib(c.below_bytes),
            kib(c.above_bytes)
        ),
    };
    let subject = if cross.is_empty() { "the curves " } else { "" };
    let shape = match &s.parting {
        Parting::PartAt {
            size_bytes,
            direction,
            everywhere: true,
        } => format!(
            "{subject}part at {} KiB, the smallest size: {b} is {} at every size",
            kib(*size_bytes),
            direction.word()
        ),
        Parting::PartAt {
            size_bytes,
            direction,
            everywhere: false,
        } => format!(
            "{subject}part at {} KiB: from there on {b} is {} at every size",
            kib(*size_bytes),
            direction.word()
        ),
        Parting::DoNotPart if s.compared == 0 => format!("{subject}do not part: no size compared"),
        // Sizes differed, but not the largest: say where, so the line agrees with a table
        // of mostly differing rows.
        Parting::DoNotPart => match (s.differing_span, s.largest_bytes) {
            (Some((first, last, dir)), Some(largest)) if cross.is_empty() => format!(
                "{b} is {} from {} to {} KiB, but the curves meet again at the largest size, \
                 {} KiB, which does not differ",
                dir.word(),
                kib(first),
                kib(last),
                kib(largest)
            ),
            (Some((_, last, dir)), Some(largest)) => format!(
                "{b} is {} up to {} KiB, but the curves meet again at the largest size, {} \
                 KiB, which does not differ",
                dir.word(),
                kib(last),
                kib(largest)
            ),
            _ if s.largest_undecided => {
                format!("{subject}are not known to part: the largest size is undecided")
            }
            _ => format!("{subject}do not part: the largest size does not differ"),
        },
    };
    let (undecided, skipped) = counts(s);
    format!(
        "{mean}; {} of {} sizes differ{undecided}; {cross}{shape}{skipped}",
        s.differing, s.compared
    )
}

/// The summary line's asides: sizes undecided, and sizes not compared.
fn counts(s: &ScanSummary) -> (String, String) {
    let undecided = match s.undecided {
        0 => String::new(),
        n => format!(" ({n} undecided)"),
    };
    let skipped = match s.not_compared {
        0 => String::new(),
        1 => " (1 size not compared, skipped)".to_string(),
        n => format!(" ({n} sizes not compared, skipped)"),
    };
    (undecided, skipped)
}
