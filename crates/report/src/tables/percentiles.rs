//! Latency percentiles (p50, p90, p99, p99.9 and the maximum) of every point and variant
//! with round-trip histograms (ctxsw and netrr `rtt`), as a table for every format: the
//! numbers the HTML page draws as percentile curves, for a terminal, a pull request, a
//! mail or a script.
//!
//! Each row pools the HDR histograms of its repetitions, so a percentile is that of every
//! round trip measured there, not a median of per-repetition tails. A percentile the count
//! cannot support (p99.9 needs 1,000 values) is left out rather than read off the maximum.
//! Where a histogram cannot be decoded (a record from elsewhere without one), the row
//! takes the median over repetitions of each stored percentile and says so.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use perflab_core::censored::{in_range_quantile, is_censored};
use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::{AboveRange, HistogramData, Quantile, Unit};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::select::Labeler;
use crate::tables::latency::{decode, variant_order};

/// Histograms that hold latencies (netrr and ctxsw `rtt`, the null workload's
/// `latency`); per-iteration times of transfers are not latency distributions.
pub const LATENCY: &[&str] = &["rtt", "latency"];

/// The quantiles of the table's columns.
const QUANTILES: [(f64, &str); 4] = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")];

/// One point and variant of one run. Latencies in µs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PercentileRow {
    pub run: i64,
    /// The point's varying parameters (`0-1`, `load_streams=3`), `all` when none vary.
    pub point: String,
    pub variant: String,
    /// The histogram's name (`rtt`).
    pub histogram: String,
    /// Repetitions pooled.
    pub reps: u32,
    /// Round trips in the pooled distribution.
    pub count: u64,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: f64,
    /// Percentiles are medians over repetitions, not read from pooled histograms.
    pub approximate: bool,
    /// Samples past the range of the tool's buckets (cyclictest's overflows), pooled: at
    /// least `limit` (the lowest of the repetitions'). A percentile among them is `None`
    /// here and printed `≥limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub above: Option<AboveRange>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PercentileTable {
    /// The unit of every latency in the rows.
    pub unit: &'static str,
    pub rows: Vec<PercentileRow>,
}

/// The results of `runs` grouped by run, point and variant: points in plan order,
/// variants as the study lists them, each with its point's label (parameters a variant
/// sets are left out of it: they are in the variant column already). Groups with no
/// result of the variant are left out.
pub(crate) fn result_groups<'a>(
    runs: &[(&'a RunInfo, &'a [MeasurementRecord])],
) -> Vec<ResultGroup<'a>> {
    let roles = crate::hints::merged_param_roles(runs.iter().map(|(info, _)| *info));
    let labeler = Labeler::new(
        &roles,
        runs.iter()
            .flat_map(|(_, ms)| ms.iter().filter(|m| m.is_result()).map(|m| &m.params)),
    );
    let by_variant = variant_params(runs.iter().map(|(_, ms)| *ms));
    let skip: Vec<&str> = by_variant.iter().map(String::as_str).collect();
    let mut groups = Vec::new();
    for (info, ms) in runs {
        let mut points: BTreeMap<u32, Vec<&MeasurementRecord>> = BTreeMap::new();
        for m in ms.iter().filter(|m| m.is_result()) {
            points.entry(m.point).or_default().push(m);
        }
        let order = variant_order(info, ms);
        for members in points.values() {
            for v in &order {
                let mine: Vec<&MeasurementRecord> = members
                    .iter()
                    .copied()
                    .filter(|m| &m.variant == v)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                let point = match labeler.label_without(&members[0].params, &skip) {
                    l if l.is_empty() => "all".to_string(),
                    l => l,
                };
                groups.push(ResultGroup {
                    run: info.id,
                    point,
                    variant: v.clone(),
                    members: mine,
                });
            }
        }
    }
    groups
}

/// One run's results at one point of one variant.
pub(crate) struct ResultGroup<'a> {
    pub(crate) run: i64,
    pub(crate) point: String,
    pub(crate) variant: String,
    pub(crate) members: Vec<&'a MeasurementRecord>,
}

/// The table of `runs` (each a run and the measurements to include), `None` when no
/// result among them has a latency histogram.
pub fn latency_percentiles(runs: &[(&RunInfo, &[MeasurementRecord])]) -> Option<PercentileTable> {
    let mut rows = Vec::new();
    for g in result_groups(runs) {
        let hs: Vec<&HistogramData> = g
            .members
            .iter()
            .filter_map(|m| latency_histogram(m))
            .collect();
        let Some(first) = hs.first() else { continue };
        rows.push(pool(g.run, g.point, &g.variant, first.name.clone(), &hs));
    }
    (!rows.is_empty()).then_some(PercentileTable { unit: "µs", rows })
}

/// A table of pooled histograms: its caption, the table, and the note for rows whose
/// histograms could not be pooled.
pub(crate) fn pooled_blocks(caption: Block, table: Table, approximate: bool) -> Vec<Block> {
    let mut blocks = vec![caption, Block::Table(table)];
    if approximate {
        blocks.push(Block::para(
            "~: histograms could not be pooled; the percentiles are medians over the \
             repetitions.",
        ));
    }
    blocks
}

/// The columns every pooled-histogram table starts with: the run where rows come from
/// several, then point, variant (`~` where its histograms could not be pooled) and reps.
pub(crate) struct Lead<'a> {
    pub run: i64,
    pub point: &'a str,
    pub variant: &'a str,
    pub approximate: bool,
    pub reps: u32,
}

/// The table of `rows`: the leading columns of each row's `lead`, then `head` and the
/// cells `rest` gives.
pub(crate) fn pooled_table<R>(
    rows: &[R],
    lead: impl Fn(&R) -> Lead<'_>,
    head: &[&str],
    rest: impl Fn(&R) -> Vec<String>,
) -> Table {
    let several = rows
        .iter()
        .any(|r| lead(r).run != rows.first().map_or(0, |f| lead(f).run));
    let mut names: Vec<String> = Vec::new();
    if several {
        names.push("run".into());
    }
    names.extend(["point", "variant", "reps"].map(String::from));
    names.extend(head.iter().map(|h| h.to_string()));
    let left = if several { vec![0, 1, 2] } else { vec![0, 1] };
    let cells = rows
        .iter()
        .map(|r| {
            let l = lead(r);
            let mut row = Vec::new();
            if several {
                row.push(l.run.to_string());
            }
            row.push(l.point.to_string());
            row.push(if l.approximate {
                format!("{} ~", l.variant)
            } else {
                l.variant.to_string()
            });
            row.push(l.reps.to_string());
            row.extend(rest(r));
            row
        })
        .collect();
    Table::new(names, cells, left)
}

/// A latency as every table prints a value; `-` where the count is too small.
pub(crate) fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), crate::fmt::value)
}

/// The latency histogram of a result, if it has one in a unit of time.
fn latency_histogram(m: &MeasurementRecord) -> Option<&HistogramData> {
    m.output
        .histograms
        .iter()
        .find(|h| LATENCY.contains(&h.name.as_str()) && us(0.0, h.unit).is_some())
}

/// `v` in `unit` as µs (ns divided, so that 14687 ns is exactly 14.687); `None` for a
/// unit that is no time.
fn us(v: f64, unit: Unit) -> Option<f64> {
    match unit {
        Unit::Nanoseconds => Some(v / 1e3),
        Unit::Microseconds => Some(v),
        Unit::Milliseconds => Some(v * 1e3),
        Unit::Seconds => Some(v * 1e6),
        _ => None,
    }
}

/// Whether `n` values support quantile `q`: 99.9% needs at least 1,000.
fn supported(n: u64, q: f64) -> bool {
    n > 0 && (n as f64) * (1.0 - q) >= 1.0 - 1e-9
}

pub(crate) fn pool(
    run: i64,
    point: String,
    variant: &str,
    name: String,
    hs: &[&HistogramData],
) -> PercentileRow {
    let mut row = PercentileRow {
        run,
        point,
        variant: variant.to_string(),
        histogram: name,
        reps: hs.len() as u32,
        count: hs.iter().map(|h| h.count).sum(),
        p50: None,
        p90: None,
        p99: None,
        p999: None,
        max: 0.0,
        approximate: false,
        above: pooled_above(hs),
    };
    let over = row.above.map_or(0, |a| a.count);
    // Histograms of one row share their unit; a row of mixed units is read from summaries.
    let same_unit = hs.iter().all(|h| h.unit == hs[0].unit);
    let unit = hs[0].unit;
    if let Some(sum) = same_unit.then(|| pooled(hs)).flatten() {
        // The pooled buckets hold the samples in range; the overflows are above them all.
        let n = sum.len() + over;
        row.count = n;
        let at = |q: f64| {
            (supported(n, q) && !is_censored(q, n, over))
                .then(|| {
                    us(
                        sum.value_at_quantile(in_range_quantile(q, n, over)) as f64,
                        unit,
                    )
                })
                .flatten()
        };
        row.p50 = at(0.5);
        row.p90 = at(0.9);
        row.p99 = at(0.99);
        row.p999 = at(0.999);
        row.max = if over > 0 {
            // The tool's own maximum: the buckets stop at the range.
            hs.iter()
                .filter_map(|h| us(h.max, h.unit))
                .fold(0.0, f64::max)
        } else {
            us(sum.max() as f64, unit).unwrap_or(0.0)
        };
        return row;
    }
    row.approximate = true;
    let med = |f: fn(&HistogramData) -> f64, q: f64| {
        (supported(row.count, q) && !is_censored(q, row.count, over))
            .then(|| {
                perflab_stats::median(
                    hs.iter()
                        .filter_map(|h| us(f(h), h.unit))
                        .collect::<Vec<f64>>(),
                )
            })
            .flatten()
    };
    row.p50 = med(|h| h.p50, 0.5);
    row.p90 = med(|h| h.p90, 0.9);
    row.p99 = med(|h| h.p99, 0.99);
    row.p999 = med(|h| h.p999, 0.999);
    row.max = hs
        .iter()
        .filter_map(|h| us(h.max, h.unit))
        .fold(0.0, f64::max);
    row
}

/// The overflowed samples of `hs` together, in µs as the rows are: at least the lowest of
/// their limits.
fn pooled_above(hs: &[&HistogramData]) -> Option<AboveRange> {
    let mut above = hs.iter().filter_map(|h| {
        let a = h.above?;
        Some(AboveRange {
            limit: us(a.limit, h.unit)?,
            count: a.count,
        })
    });
    let first = above.next()?;
    Some(above.fold(first, |a, b| AboveRange {
        limit: a.limit.min(b.limit),
        count: a.count + b.count,
    }))
}

/// The sum of the decoded histograms; `None` when one cannot be decoded or added.
fn pooled(hs: &[&HistogramData]) -> Option<Histogram<u64>> {
    let mut list = hs.iter().map(|h| decode(h)).collect::<Option<Vec<_>>>()?;
    if list.is_empty() {
        return None;
    }
    let mut sum = list.swap_remove(0);
    for h in &list {
        sum.add(h).ok()?;
    }
    Some(sum)
}

/// Names of parameters whose value differs between the variants at one point.
pub(crate) fn variant_params<'a>(
    runs: impl Iterator<Item = &'a [MeasurementRecord]>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ms in runs {
        // One record per (point, variant) is enough: repetitions share their parameters.
        let mut firsts: BTreeMap<(u32, &str), &perflab_core::Params> = BTreeMap::new();
        for m in ms {
            firsts
                .entry((m.point, m.variant.as_str()))
                .or_insert(&m.params);
        }
        let list: Vec<_> = firsts.into_iter().collect();
        for (i, ((point, _), a)) in list.iter().enumerate() {
            for ((_, _), b) in list[i + 1..].iter().take_while(|((p, _), _)| p == point) {
                for (name, value) in &a.0 {
                    if b.get(name) != Some(value) && !out.contains(name) {
                        out.push(name.clone());
                    }
                }
            }
        }
    }
    out
}

impl PercentileRow {
    /// Quantile `q`'s cell: its value, `≥limit` where it falls among overflowed samples,
    /// `-` where there are too few values for it.
    fn cell(&self, q: f64, v: Option<f64>) -> String {
        match self.above {
            Some(a) if supported(self.count, q) && is_censored(q, self.count, a.count) => {
                Quantile::AtLeast(a.limit).text(crate::fmt::value)
            }
            _ => cell(v),
        }
    }

    fn lead(&self) -> Lead<'_> {
        Lead {
            run: self.run,
            point: &self.point,
            variant: &self.variant,
            approximate: self.approximate,
            reps: self.reps,
        }
    }
}

impl PercentileTable {
    /// A caption and the table, for the text, Markdown, mail and HTML renderers.
    pub fn to_blocks(&self) -> Vec<Block> {
        let head: Vec<&str> = ["round trips"]
            .into_iter()
            .chain(QUANTILES.iter().map(|(_, n)| *n))
            .chain(["max"])
            .collect();
        let table = pooled_table(&self.rows, PercentileRow::lead, &head, |r| {
            let mut row = vec![r.count.to_string()];
            let values = [r.p50, r.p90, r.p99, r.p999];
            row.extend(
                QUANTILES
                    .iter()
                    .zip(values)
                    .map(|((q, _), v)| r.cell(*q, v)),
            );
            row.push(cell(Some(r.max)));
            row
        });
        let censored = if self.rows.iter().any(|r| r.above.is_some()) {
            " `≥N` where the percentile falls among samples past the tool's histogram \
             range (N, its end): their values are not known."
        } else {
            ""
        };
        // The `-` is explained where the table has one.
        let too_few = if table.rows.iter().flatten().any(|c| c == "-") {
            "; `-`: too few for the percentile (p99.9 needs 1,000)"
        } else {
            ""
        };
        // A line said of the table: it sits on it (a blank line more in a mail, else).
        pooled_blocks(
            Block::caption(format!(
                "Latency percentiles in {}, each row's repetitions' round trips \
                 pooled{too_few}.{censored}",
                self.unit
            )),
            table,
            self.rows.iter().any(|r| r.approximate),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::supported;

    #[test]
    fn a_percentile_needs_enough_values() {
        assert!(supported(2, 0.5) && !supported(1, 0.9) && supported(10, 0.9));
        assert!(supported(100, 0.99) && !supported(99, 0.99));
        assert!(supported(1000, 0.999) && !supported(999, 0.999));
        assert!(!supported(0, 0.5));
    }
}
