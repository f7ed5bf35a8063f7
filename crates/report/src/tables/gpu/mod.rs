//! Seed 002's table for a run of more than two variants (gpu-xfer's host memory kinds):
//! size rows, one column of medians per variant, and for each variant but the baseline
//! its ratio to the baseline and the verdict. The table (pageable 4k, THP, hugetlb
//! 2M registered, pinned side by side) is this table with the backings as variants.
//!
//! Nothing is computed here that the pairwise scans do not: each non-baseline column is
//! [`crate::size_scan`] of that variant against the baseline, so its ratio, interval and
//! verdict are those of the scan printed for the pair (whose rows are one family, adjusted
//! together). The table only lays the scans side by side, matched by section and size.
//! Two versions against each other (two drivers or libraries as variants, or two runs)
//! are the ordinary two-column scan.

pub mod figure;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::Unit;
use perflab_stats::{StatsConfig, Verdict};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::error::ReportError;
use crate::fmt;
use crate::section::Section;
use crate::section::SectionId;
use crate::tables::compare::compare_variants;
use crate::tables::scan::{kib, size_scan, ScanReport};

/// The seed's table of one run: every variant's medians, each against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BackingTable {
    pub metric: String,
    pub unit: Unit,
    /// The column every ratio is against (the run's baseline, `4k` in gpu-xfer).
    pub baseline: String,
    /// The other columns, in the run's order.
    pub others: Vec<String>,
    pub sections: Vec<BackingSection>,
    /// The confidence of the intervals behind the verdicts, e.g. "95%".
    pub confidence: String,
    /// Parameters with one value everywhere, e.g. `duration=0.5`.
    pub fixed: String,
}

/// One combination of the other varying parameters (`direction=h2d`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BackingSection {
    pub title: String,
    pub rows: Vec<BackingRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BackingRow {
    pub size_bytes: u64,
    /// The baseline's median; `None` where it has no successful value.
    pub baseline: Option<f64>,
    /// One per [`BackingTable::others`].
    pub cells: Vec<Cell>,
}

/// One variant at one size against the baseline.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Cell {
    pub median: Option<f64>,
    /// The scan's ratio: the estimate its verdict used, inside `ratio_ci`.
    pub ratio: Option<f64>,
    pub ratio_ci: Option<(f64, f64)>,
    /// `None`: not compared (no value on one side, or the variant was not measured).
    pub verdict: Option<Verdict>,
    /// Why the size was not compared, as the pair's scan says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
}

/// The table of `run` when it has more than two measured variants and a size axis;
/// `None` otherwise (a pair of variants is one scan already).
pub fn backing_table(
    run: &RunInfo,
    ms: &[MeasurementRecord],
    metric: Option<&str>,
    cfg: &StatsConfig,
) -> Result<Option<BackingTable>, ReportError> {
    let measured = crate::measured_variants(ms);
    let Some(base) = crate::baseline_variant(run, &measured) else {
        return Ok(None);
    };
    let others: Vec<String> = measured.into_iter().filter(|v| *v != base).collect();
    if others.len() < 2 {
        return Ok(None);
    }
    let mut scans = Vec::new();
    for other in &others {
        let t = compare_variants(run, ms, &base, other, metric, cfg)?;
        match size_scan(&t) {
            Some(s) => scans.push(s),
            None => return Ok(None),
        }
    }
    Ok(Some(from_scans(base, others, &scans)))
}

/// Lays `scans` (one per other variant, each against `base`) side by side.
fn from_scans(base: String, others: Vec<String>, scans: &[ScanReport]) -> BackingTable {
    let first = &scans[0];
    let mut sections: Vec<BackingSection> = Vec::new();
    for (col, scan) in scans.iter().enumerate() {
        for s in &scan.sections {
            let at = match sections.iter().position(|x| x.title == s.title) {
                Some(i) => i,
                None => {
                    sections.push(BackingSection {
                        title: s.title.clone(),
                        rows: Vec::new(),
                    });
                    sections.len() - 1
                }
            };
            let rows = &mut sections[at].rows;
            for p in &s.points {
                let i = match rows.iter().position(|r| r.size_bytes == p.size_bytes) {
                    Some(i) => i,
                    None => {
                        rows.push(BackingRow {
                            size_bytes: p.size_bytes,
                            baseline: None,
                            cells: vec![Cell::default(); others.len()],
                        });
                        rows.len() - 1
                    }
                };
                let row = &mut rows[i];
                row.baseline = row.baseline.or(p.median_a);
                row.cells[col] = Cell {
                    median: p.median_b,
                    ratio: p.ratio,
                    ratio_ci: p.ratio_ci,
                    verdict: p.verdict,
                    not_compared: p.not_compared.clone(),
                };
            }
        }
    }
    for s in &mut sections {
        s.rows.sort_by_key(|r| r.size_bytes);
    }
    BackingTable {
        metric: first.metric.clone(),
        unit: first.unit,
        baseline: base,
        others,
        sections,
        confidence: first.config.confidence_label(),
        fixed: first.param_roles.describe(&first.fixed),
    }
}

impl BackingTable {
    fn cells(&self, s: &BackingSection) -> (Vec<String>, Vec<String>, Vec<Vec<String>>) {
        let unit = self.unit.symbol().to_string();
        let mut head = vec!["size".to_string(), self.baseline.clone()];
        let mut units = vec!["KiB".to_string(), unit.clone()];
        for o in &self.others {
            head.extend([o.clone(), format!("/{}", self.baseline), "verdict".into()]);
            units.extend([unit.clone(), String::new(), String::new()]);
        }
        // Whole MiB/s, as the seed's columns: the decimals of a bandwidth are noise.
        let value = |v: Option<f64>| {
            v.map_or("-".to_string(), |x| {
                if x.abs() >= 100.0 {
                    format!("{x:.0}")
                } else {
                    fmt::value(x)
                }
            })
        };
        let rows = s
            .rows
            .iter()
            .map(|r| {
                let mut line = vec![kib(r.size_bytes), value(r.baseline)];
                for c in &r.cells {
                    line.push(value(c.median));
                    line.push(c.ratio.map_or("-".into(), |x| format!("{x:.2}")));
                    line.push(c.verdict.map_or("-".into(), |v| v.symbol().to_string()));
                }
                line
            })
            .collect();
        (head, units, rows)
    }

    /// `direction=h2d 2048 KiB 2m: why` for every cell left out.
    fn not_compared(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.sections {
            for r in &s.rows {
                for (c, name) in r.cells.iter().zip(&self.others) {
                    if let Some(why) = &c.not_compared {
                        out.push(format!(
                            "{} {} KiB {name}: {why}",
                            s.title,
                            kib(r.size_bytes)
                        ));
                    }
                }
            }
        }
        out
    }

    /// The column indices holding words (the verdicts), for alignment.
    fn word_columns(&self) -> Vec<usize> {
        (0..self.others.len()).map(|i| 4 + 3 * i).collect()
    }
}

impl Section for BackingTable {
    fn id(&self) -> SectionId {
        SectionId::Scan
    }

    fn title(&self) -> String {
        format!(
            "{} by size, every variant against {}",
            self.metric, self.baseline
        )
    }

    fn blocks(&self) -> Vec<Block> {
        let mut lines = vec![format!(
            "{} by size: median of each variant, and each against {} (ratio and verdict \
             from the pair's scan below, where its {} interval is shown)",
            self.metric, self.baseline, self.confidence
        )];
        if !self.fixed.is_empty() {
            lines.push(format!("fixed: {}", self.fixed));
        }
        let mut out = vec![Block::para(lines.join("\n"))];
        for s in &self.sections {
            out.push(Block::caption(s.title.clone()));
            let (head, units, rows) = self.cells(s);
            out.push(Block::Table(Table {
                head,
                units,
                rows,
                left: self.word_columns(),
            }));
        }
        out.push(Block::note(format!(
            "/{b}: the variant against {b}, the estimate its verdict used (from the \
             repetitions' ratios); -: not measured or not compared at that size",
            b = self.baseline
        )));
        out.push(Block::list("Not compared", self.not_compared()));
        out
    }

    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}
