//! How far the numbers can be trusted: per run, the points whose spread is too wide to
//! conclude anything (with the repetitions that would be needed), the repetitions marked
//! as outliers (kept in every figure), and for adaptive runs (`--target-ci`) which points
//! reached the target and which stopped at the repetition cap.

use serde::Serialize;
use serde_json::{json, Value};

use crate::doc::Block;
use crate::error::ReportError;
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

/// What the section lists, gathered over the runs.
#[derive(Default)]
struct Quality {
    /// Points whose interval is too wide to conclude anything.
    wide: Vec<String>,
    /// Repetitions outside Tukey's fences.
    outliers: Vec<String>,
    /// One line per adaptive run: how many points reached the target.
    adaptive: Vec<String>,
    caps: Vec<CapHit>,
}

/// The "Repetitions and spread" part: pushes its blocks (none when there is nothing to
/// say) and returns the same lists as JSON.
pub(crate) fn section(
    runs: &[RunData],
    opts: &ReportOptions,
    blocks: &mut Vec<Block>,
) -> Result<Value, ReportError> {
    let mut q = Quality::default();
    for r in runs {
        let Ok(s) = crate::summarize_run(&r.info, &r.ms, opts.metric.as_deref(), &opts.stats)
        else {
            // A run without the metric has no spread to judge; its comparison says why.
            continue;
        };
        q.spread(r, &s);
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
    /// The run's points too wide to conclude and its outlier repetitions.
    fn spread(&mut self, r: &RunData, s: &SummaryTable) {
        let who =
            |row: &SummaryRow| format!("{} {} [{}]", run_name(&r.info), row.label, row.variant);
        for row in &s.rows {
            if let Some(w) = &row.warning {
                self.wide.push(format!("{}: {w}", who(row)));
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
        blocks.push(Block::list("Too wide to conclude", &self.wide));
        blocks.push(Block::list("Outliers", &self.outliers));
    }
}
