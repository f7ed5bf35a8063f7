//! How far the numbers can be trusted: per run, the points whose spread is too wide to
//! conclude anything (with the repetitions that would be needed), the repetitions marked
//! as outliers (kept in every figure), and for adaptive runs (`--target-ci`) which points
//! reached the target and which stopped at the repetition cap.

use perflab_core::Params;
use perflab_stats::{reps_for_half_width, StatsConfig, PRACTICAL_REPS};
use serde::Serialize;
use serde_json::{json, Value};

use crate::doc::Block;
use crate::error::ReportError;
use crate::fmt::compact::{rows_or_rest, RowRef};
use crate::full::input::{run_name, ReportOptions, RunData};
use crate::tables::summary::{SummaryRow, SummaryTable};

/// An adaptive point that stopped at the cap without reaching the target.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CapHit {
    pub run: i64,
    pub point: String,
    pub variant: String,
    pub attempts: u32,
    pub half_width_pct: Option<f64>,
}

/// The longest list of rows too wide to conclude the section names; a longer one is a
/// count.
const WIDE_NAMED: usize = 140;

/// The longest list of rows with outliers the section names; a longer one is a count.
const OUTLIERS_NAMED: usize = 120;

/// What the section lists, gathered over the runs.
#[derive(Default)]
struct Quality {
    /// Points whose interval is too wide to conclude anything, one entry per row (JSON).
    wide: Vec<String>,
    /// The same rows as a reader gets them: one line per kind of trouble and run.
    wide_lines: Vec<String>,
    /// Repetitions outside Tukey's fences, one entry per row (JSON).
    outliers: Vec<String>,
    /// The same as one line per run.
    outlier_lines: Vec<String>,
    /// One line per adaptive run: how many points reached the target.
    adaptive: Vec<String>,
    caps: Vec<CapHit>,
    /// Lines name their run only when the report has several.
    several: bool,
}

/// The "Repetitions and spread" part: pushes its blocks (none when there is nothing to
/// say) and returns the same lists as JSON.
pub(crate) fn section(
    runs: &[RunData],
    opts: &ReportOptions,
    blocks: &mut Vec<Block>,
) -> Result<Value, ReportError> {
    let mut q = Quality {
        several: runs.len() > 1,
        ..Quality::default()
    };
    for r in runs {
        let Ok(s) = crate::summarize_run(&r.info, &r.ms, opts.metric.as_deref(), &opts.stats)
        else {
            // A run without the metric has no spread to judge; its comparison says why.
            continue;
        };
        q.spread(r, &s, &opts.stats);
        q.adaptive_repetitions(r, &s, opts);
    }
    if !(q.wide.is_empty() && q.outliers.is_empty() && q.adaptive.is_empty()) {
        q.push_blocks(blocks);
    }
    Ok(json!({
        "too_wide": q.wide,
        "outliers": q.outliers,
        "adaptive": q.adaptive,
        "hit_cap": q.caps,
    }))
}

impl Quality {
    /// The run's points too wide to conclude and its outlier repetitions: each row in the
    /// JSON, and for the reader one line per kind of trouble naming the rows compactly
    /// ([`crate::fmt::compact`]), not one line each.
    fn spread(&mut self, r: &RunData, s: &SummaryTable, cfg: &StatsConfig) {
        let who =
            |row: &SummaryRow| format!("{} {} [{}]", run_name(&r.info), row.label, row.variant);
        let all: Vec<&Params> = s.rows.iter().map(|row| &row.params).collect();
        let roles = crate::hints::param_roles(&r.info);
        let variants = crate::measured_variants(&r.ms);
        let void = void_rows(r);
        let mut kinds: Vec<(Spread, Vec<&SummaryRow>)> = Vec::new();
        for row in &s.rows {
            // A row whose every comparison tested nothing gets no advice on repetitions:
            // more of them would not give a verdict (issue 32 item 4).
            let advise = !void(row.point, &row.variant);
            if let Some(w) = row.warning.as_ref().filter(|_| advise) {
                self.wide.push(format!("{}: {w}", who(row)));
                match Spread::of(row, cfg) {
                    Some(kind) => match kinds.iter_mut().find(|(k, _)| *k == kind) {
                        Some((_, rows)) => rows.push(row),
                        None => kinds.push((kind, vec![row])),
                    },
                    None => self.wide_lines.push(format!("{}: {w}", who(row))),
                }
            }
            if !row.outlier_reps.is_empty() {
                let reps: Vec<String> = row.outlier_reps.iter().map(u32::to_string).collect();
                self.outliers.push(format!(
                    "{}: repetition {} outside Tukey's fences, kept",
                    who(row),
                    reps.join(", ")
                ));
            }
        }
        let name = |rows: &[&SummaryRow]| {
            let refs: Vec<RowRef> = rows
                .iter()
                .map(|row| RowRef {
                    params: &row.params,
                    variant: Some(row.variant.as_str()),
                })
                .collect();
            let names: Vec<&str> = variants.iter().map(String::as_str).collect();
            rows_or_rest(&roles, &refs, &all, &names)
        };
        let run = if self.several {
            format!("{}: ", run_name(&r.info))
        } else {
            String::new()
        };
        // When the kinds hold every row, the largest is "every other row": the lines
        // before it named the rest.
        let every = kinds.iter().map(|(_, rows)| rows.len()).sum::<usize>() == s.rows.len();
        let largest = kinds.iter().map(|(_, rows)| rows.len()).max().unwrap_or(0);
        kinds.sort_by_key(|(_, rows)| rows.len());
        for (kind, rows) in &kinds {
            let which = if every && kinds.len() > 1 && rows.len() == largest {
                "every other row".to_string()
            } else {
                // Which rows spread widely is noise, run to run; past a couple of mail
                // lines they are a count (issue 34 item 3: memxfer's mail had no budget
                // for it), and `show` marks each.
                let which = name(rows);
                match which.chars().count() <= WIDE_NAMED {
                    true => which,
                    false => format!("perflab show {} gives each one's CI", r.info.id),
                }
            };
            self.wide_lines
                .push(format!("{run}{}: {which}", kind.text(rows, cfg)));
        }
        self.outlier_line(r, s, &run, &name);
    }

    /// One line for the run's outlier repetitions: how many, and in which rows where they
    /// fit a line (outliers are kept, so how many matters more than where), else where
    /// `show` lists them.
    fn outlier_line(
        &mut self,
        r: &RunData,
        s: &SummaryTable,
        run: &str,
        name: &dyn Fn(&[&SummaryRow]) -> String,
    ) {
        let flagged: Vec<&SummaryRow> = s
            .rows
            .iter()
            .filter(|row| !row.outlier_reps.is_empty())
            .collect();
        if flagged.is_empty() {
            return;
        }
        let reps: usize = flagged.iter().map(|row| row.outlier_reps.len()).sum();
        let which = name(&flagged);
        let which = if which.len() <= OUTLIERS_NAMED {
            which
        } else {
            format!(
                "{} rows (perflab show {} lists them)",
                flagged.len(),
                r.info.id
            )
        };
        self.outlier_lines.push(format!(
            "{run}{reps} repetition{} outside Tukey's fences, kept in every figure and \
             median: {which}",
            if reps == 1 { "" } else { "s" }
        ));
    }

    /// For an adaptive run (`--target-ci`), which points reached the target and which
    /// stopped at the repetition cap.
    fn adaptive_repetitions(&mut self, r: &RunData, s: &SummaryTable, opts: &ReportOptions) {
        let Some(target) = r.info.spec.adaptive else {
            return;
        };
        let (pct, cap) = (target.target_ci_pct, u64::from(target.max_reps));
        let mut reached = 0;
        for row in &s.rows {
            let attempts = row.n_ok as u32 + row.failed + row.missing;
            let ok = row.ci_half_width_pct.is_some_and(|h| h <= pct);
            if ok {
                reached += 1;
            } else if u64::from(attempts) >= cap {
                self.caps.push(CapHit {
                    run: r.info.id,
                    point: row.label.clone(),
                    variant: row.variant.clone(),
                    attempts,
                    half_width_pct: row.ci_half_width_pct,
                });
            }
        }
        self.adaptive.push(format!(
            "{}: target ±{pct}% of the median ({} interval), cap {cap} repetitions: \
             {reached} of {} points and variants reached it, {} stopped at the cap",
            run_name(&r.info),
            opts.stats.confidence_label(),
            s.rows.len(),
            self.caps.iter().filter(|c| c.run == r.info.id).count()
        ));
    }

    fn push_blocks(&self, blocks: &mut Vec<Block>) {
        blocks.push(Block::heading(2, "Repetitions and spread"));
        blocks.push(Block::list("Adaptive repetitions", &self.adaptive));
        blocks.push(Block::list(
            "Stopped at the repetition cap without reaching the target",
            self.caps.iter().map(|c| {
                format!(
                    "run {} {} [{}]: {} repetitions, ±{}",
                    c.run,
                    c.point,
                    c.variant,
                    c.attempts,
                    c.half_width_pct
                        .map_or("n/a".to_string(), |h| format!("{h:.2}%"))
                )
            }),
        ));
        blocks.push(Block::list("Too wide to conclude", &self.wide_lines));
        match self.outlier_lines.as_slice() {
            // One run's: a line, not a list of one under a title of its own.
            [one] => blocks.push(Block::para(format!("Outliers: {one}"))),
            lines => blocks.push(Block::list("Outliers", lines)),
        }
    }
}

/// Whether every comparison a row (point, variant) takes part in is void: a variant's
/// against the baseline, or the baseline's against every other variant at the point.
fn void_rows(r: &RunData) -> impl Fn(u32, &str) -> bool {
    let void = perflab_core::catalog::void_comparisons(&r.info.spec, &r.ms);
    let variants = crate::measured_variants(&r.ms);
    move |point: u32, variant: &str| {
        let at: Vec<_> = void.iter().filter(|v| v.point == point).collect();
        match at.first() {
            None => false,
            Some(v) if v.baseline != variant => at.iter().any(|v| v.variant == variant),
            Some(v) => variants
                .iter()
                .filter(|o| **o != v.baseline)
                .all(|o| at.iter().any(|v| v.variant == *o)),
        }
    }
}

/// Why a row's spread is too wide to conclude, as one kind the rows of a line share; the
/// figures of each row come from its own interval, never from its warning's words.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Spread {
    /// More repetitions would narrow the interval to the threshold.
    NeedsRepetitions,
    /// It would take more than [`PRACTICAL_REPS`]: the spread has a cause to find.
    BeyondRepetitions,
    /// One repetition: nothing is known about the spread.
    Single,
    /// A median of 0: the spread cannot be put in percent of it.
    ZeroMedian,
}

impl Spread {
    fn of(row: &SummaryRow, cfg: &StatsConfig) -> Option<Spread> {
        let s = row.summary.as_ref()?;
        if s.median_ci_degenerate {
            return Some(Spread::Single);
        }
        if s.median == 0.0 {
            return Some(Spread::ZeroMedian);
        }
        let hw = row.ci_half_width_pct?;
        Some(match reps_for_half_width(s.n, hw, cfg.noise_pct) {
            Some(_) => Spread::NeedsRepetitions,
            None => Spread::BeyondRepetitions,
        })
    }

    /// The line's words and figures over `rows`: how many, how wide, and what would help.
    fn text(self, rows: &[&SummaryRow], cfg: &StatsConfig) -> String {
        let n = rows.len();
        let hws: Vec<f64> = rows.iter().filter_map(|r| r.ci_half_width_pct).collect();
        let range = |v: &[f64]| -> String {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if (hi - lo).abs() < 0.05 {
                format!("{lo:.1}")
            } else {
                format!("{lo:.1}–{hi:.1}")
            }
        };
        let level = cfg.confidence_label();
        let noise = cfg.noise_pct;
        // The verb follows the count: `1 row needs`, `83 rows need`.
        let one = n == 1;
        let (rows_need, rows_spread, have) = if one {
            ("row needs", "row spreads", "row has")
        } else {
            ("rows need", "rows spread", "rows have")
        };
        match self {
            Spread::NeedsRepetitions => {
                let need: Vec<u64> = rows
                    .iter()
                    .filter_map(|r| {
                        let s = r.summary.as_ref()?;
                        reps_for_half_width(s.n, r.ci_half_width_pct?, noise)
                    })
                    .collect();
                let (lo, hi) = (
                    need.iter().copied().min().unwrap_or(0),
                    need.iter().copied().max().unwrap_or(0),
                );
                let need = if lo == hi {
                    crate::fmt::thousands(lo)
                } else {
                    format!(
                        "{}–{}",
                        crate::fmt::thousands(lo),
                        crate::fmt::thousands(hi)
                    )
                };
                format!(
                    "{n} {rows_need} more repetitions for ±{noise}% (their {level} CI spans \
                     ±{}% of the median; about {need} per side would do, now {})",
                    range(&hws),
                    now(rows)
                )
            }
            Spread::BeyondRepetitions => format!(
                "{n} {rows_spread} too widely for repetitions to help (±{}% at {level}; over \
                 {} needed): look for the cause (other load, frequency changes, placement)",
                range(&hws),
                crate::fmt::thousands(PRACTICAL_REPS)
            ),
            Spread::Single => {
                format!("{n} {have} a single repetition: nothing is known about their spread")
            }
            Spread::ZeroMedian => {
                format!("{n} {have} a median of 0: their spread cannot be put in percent of it")
            }
        }
    }
}

/// The repetitions the rows have: `4`, or `3–5` where they differ.
fn now(rows: &[&SummaryRow]) -> String {
    let lo = rows.iter().map(|r| r.n_ok).min().unwrap_or(0);
    let hi = rows.iter().map(|r| r.n_ok).max().unwrap_or(0);
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}
