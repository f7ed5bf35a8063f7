//! Latency distributions: the seed-001 table for network runs, and for every run with
//! latency histograms their CDFs and percentile curves, overlaid per path, variant and
//! run. Each curve pools the HDR histograms of a point's repetitions, so its tail holds
//! every round trip measured there, not a median of tails.

use std::collections::HashMap;

use hdrhistogram::Histogram;
use perflab_core::censored::{in_range_quantile, is_censored};
use perflab_core::{HistogramData, Unit};
use serde_json::{json, Value};

use crate::doc::Block;
use crate::full::input::{run_name, ReportOptions, RunData};
use crate::plot::{
    line_chart, percentile_chart, Curve, CurvePoint, LineChart, PercentileChart, Scale, TickFormat,
};
use crate::select::{is_ok, Labeler};
use crate::tables::latency::{decode, latency_table};
use crate::tables::percentiles::{latency_percentiles, variant_params, LATENCY};

/// Curves per figure and figures per report: beyond these a plot stops being read.
const MAX_CURVES: usize = 10;
const MAX_FIGURES: usize = 8;
/// The percentiles of the percentile plot.
const PERCENTILES: &[f64] = &[0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999];

pub(crate) fn section(runs: &[RunData], opts: &ReportOptions, blocks: &mut Vec<Block>) -> Value {
    let mut tables = Vec::new();
    let mut heading = false;
    let mut head = |blocks: &mut Vec<Block>| {
        if !std::mem::replace(&mut heading, true) {
            blocks.push(Block::heading(2, "Latency distributions"));
        }
    };
    for r in runs
        .iter()
        .filter(|r| crate::hints::has_latency_table(&r.info.workload))
    {
        head(blocks);
        let t = latency_table(&r.info, &r.ms);
        blocks.extend(t.to_blocks());
        tables.push(t);
    }
    // The percentiles the HTML page draws, as a table every format shows.
    let each: Vec<(
        &perflab_core::record::RunInfo,
        &[perflab_core::record::MeasurementRecord],
    )> = runs.iter().map(|r| (&r.info, r.ms.as_slice())).collect();
    let pct_table = latency_percentiles(&each);
    if let Some(p) = &pct_table {
        head(blocks);
        blocks.extend(p.to_blocks());
    }
    let (groups, total) = if opts.figures {
        pooled(runs, MAX_FIGURES)
    } else {
        (Vec::new(), 0)
    };
    if !groups.is_empty() {
        head(blocks);
        for (point, curves) in &groups {
            let unit = curves.first().map(|c| c.unit).unwrap_or(Unit::Nanoseconds);
            let shown: Vec<&Pooled> = curves.iter().take(MAX_CURVES).collect();
            let title = |what: &str| {
                let mut t = format!("{what} of {}", curves[0].name);
                if !point.is_empty() {
                    t.push_str(&format!(" at {point}"));
                }
                if curves.len() > shown.len() {
                    t.push_str(&format!(
                        " ({} of {} curves shown)",
                        shown.len(),
                        curves.len()
                    ));
                }
                t
            };
            let label = format!("{} ({})", curves[0].name, unit_label(unit));
            blocks.push(Block::Figure(line_chart(&LineChart {
                title: title("CDF"),
                x_label: label.clone(),
                y_label: "fraction of round trips at or below".into(),
                x_scale: Scale::Log,
                y_scale: Scale::Linear,
                x_format: TickFormat::Plain,
                curves: shown.iter().map(|c| cdf(c)).collect(),
            })));
            blocks.push(Block::Figure(percentile_chart(&PercentileChart {
                title: title("Percentiles"),
                y_label: label,
                curves: shown.iter().map(|c| percentiles(c)).collect(),
            })));
        }
        if total > groups.len() {
            blocks.push(Block::para(format!(
                "{} more points have latency histograms; they are in the JSON output and \
                 `perflab show`.",
                total - groups.len()
            )));
        }
    }
    json!({ "tables": tables, "percentiles": pct_table })
}

/// One curve: the pooled histogram of a (run, point, variant).
struct Pooled {
    /// The histogram's name (`rtt`).
    name: String,
    curve: String,
    unit: Unit,
    /// The samples in range (all of them for a histogram without a fixed range).
    hist: Histogram<u64>,
    /// Samples past a tool's histogram range: counted, values unknown, so curves stop
    /// where they begin.
    above: u64,
}

impl Pooled {
    fn total(&self) -> u64 {
        self.hist.len() + self.above
    }

    fn name(&self) -> String {
        match self.above {
            0 => format!("{} (n={})", self.curve, self.total()),
            k => format!("{} (n={}, {k} past the range)", self.curve, self.total()),
        }
    }
}

/// Pooled histograms grouped by point label, for the first `limit` points (in the order
/// points first appear) with a readable histogram, and how many points have latency
/// histograms in all. Decoding is most of the cost (a 10,000-measurement run holds 10,000
/// histograms, each a 200 KiB count array once decoded), so measurements are grouped first
/// and only the points that are drawn are decoded.
fn pooled(runs: &[RunData], limit: usize) -> (Vec<(String, Vec<Pooled>)>, usize) {
    let roles = crate::hints::merged_param_roles(runs.iter().map(|r| &r.info));
    let labeler = Labeler::new(
        &roles,
        runs.iter().flat_map(|r| r.ms.iter().map(|m| &m.params)),
    );
    // Parameters a variant sets (the quick study's `mechanism`) name curves, not points:
    // pipe and futex at pair 0-1 belong in one figure.
    let by_variant = variant_params(runs.iter().map(|r| r.ms.as_slice()));
    let skip: Vec<&str> = by_variant.iter().map(String::as_str).collect();
    let several = runs.len() > 1;
    type Member<'a> = (&'a RunData, &'a str, &'a HistogramData);
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut points: Vec<(String, Vec<Member>)> = Vec::new();
    for r in runs {
        for m in r.ms.iter().filter(|m| is_ok(m)) {
            let Some(h) = m
                .output
                .histograms
                .iter()
                .find(|h| LATENCY.contains(&h.name.as_str()))
            else {
                continue;
            };
            if h.encoded.is_empty() {
                continue;
            }
            let point = labeler.label_without(&m.params, &skip);
            let i = *index.entry(point.clone()).or_insert_with(|| {
                points.push((point, Vec::new()));
                points.len() - 1
            });
            points[i].1.push((r, m.variant.as_str(), h));
        }
    }
    let mut total = points.len();
    let mut out = Vec::new();
    for (point, members) in points {
        if out.len() == limit {
            break;
        }
        let mut group: Vec<Pooled> = Vec::new();
        for (r, variant, h) in members {
            let Some(decoded) = decode(h) else { continue };
            let curve = if several {
                format!("{variant} {}", run_name(&r.info))
            } else {
                variant.to_string()
            };
            match group
                .iter_mut()
                .find(|p| p.curve == curve && p.name == h.name)
            {
                Some(p) => {
                    // Histograms of one workload share their bounds; a failed add
                    // (values out of range) leaves the pool as it was.
                    if p.hist.add(&decoded).is_ok() {
                        p.above += h.above.map_or(0, |a| a.count);
                    }
                }
                None => group.push(Pooled {
                    name: h.name.clone(),
                    curve,
                    unit: h.unit,
                    hist: decoded,
                    above: h.above.map_or(0, |a| a.count),
                }),
            }
        }
        if group.is_empty() {
            // Not one of its histograms could be read: not a point with histograms.
            total -= 1;
        } else {
            out.push((point, group));
        }
    }
    (out, total)
}

/// Nanosecond histograms are shown in µs, the unit people quote latencies in.
fn scale(unit: Unit) -> f64 {
    if unit == Unit::Nanoseconds {
        1e-3
    } else {
        1.0
    }
}

fn unit_label(unit: Unit) -> &'static str {
    match unit {
        Unit::Nanoseconds | Unit::Microseconds => "µs",
        u => u.symbol(),
    }
}

fn cdf(p: &Pooled) -> Curve {
    let s = scale(p.unit);
    let mut qs: Vec<f64> = (0..=99).map(|i| f64::from(i) / 100.0).collect();
    qs.extend([0.995, 0.999, 0.9995, 0.9999, 1.0]);
    // The in-range samples are the lowest `share` of all; the curve ends there.
    let share = p.hist.len() as f64 / p.total().max(1) as f64;
    let points = if p.hist.is_empty() {
        Vec::new()
    } else {
        qs.into_iter()
            .map(|q| CurvePoint {
                x: p.hist.value_at_quantile(q) as f64 * s,
                y: q * share,
                band: None,
                flagged: false,
            })
            .collect()
    };
    Curve {
        name: p.name(),
        points,
    }
}

/// Percentiles the pooled count supports: 99.99% needs at least 10,000 values.
fn percentiles(p: &Pooled) -> (String, Vec<(f64, f64)>) {
    let s = scale(p.unit);
    let total = p.total();
    let n = total as f64;
    let points = PERCENTILES
        .iter()
        .filter(|&&q| !p.hist.is_empty() && n >= 1.0 / (1.0 - q))
        .filter(|&&q| !is_censored(q, total, p.above))
        .map(|&q| {
            let at = in_range_quantile(q, total, p.above);
            (q, p.hist.value_at_quantile(at) as f64 * s)
        })
        .collect();
    (p.name(), points)
}
