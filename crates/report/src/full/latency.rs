//! Latency distributions: the seed-001 table for network runs, and for every run with
//! latency histograms their CDFs and percentile curves, overlaid per path, variant and
//! run. Each curve pools the HDR histograms of a point's repetitions, so its tail holds
//! every round trip measured there, not a median of tails.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use perflab_core::Unit;
use serde_json::{json, Value};

use crate::doc::Block;
use crate::full::{run_name, ReportOptions, RunData};
use crate::latency_table::{decode, latency_table};
use crate::plot::{
    line_chart, percentile_chart, Curve, CurvePoint, LineChart, PercentileChart, Scale, TickFormat,
};
use crate::select::{is_ok, Labeler};

/// Histograms that hold latencies (netrr and ctxsw `rtt`, the null workload's
/// `latency`); per-iteration times of transfers are not latency distributions.
const LATENCY: &[&str] = &["rtt", "latency"];
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
    for r in runs.iter().filter(|r| r.info.workload == "netrr") {
        head(blocks);
        let t = latency_table(&r.info, &r.ms);
        blocks.extend(t.to_blocks());
        tables.push(t);
    }
    let groups = pooled(runs);
    if !groups.is_empty() && opts.figures {
        head(blocks);
        let total = groups.len();
        for (point, curves) in groups.iter().take(MAX_FIGURES) {
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
        if total > MAX_FIGURES {
            blocks.push(Block::para(format!(
                "{} more points have latency histograms; they are in the JSON output and \
                 `perflab show`.",
                total - MAX_FIGURES
            )));
        }
    }
    json!({ "tables": tables })
}

/// One curve: the pooled histogram of a (run, point, variant).
struct Pooled {
    /// The histogram's name (`rtt`).
    name: String,
    curve: String,
    unit: Unit,
    hist: Histogram<u64>,
}

/// Pooled histograms grouped by point label, in the order points first appear.
fn pooled(runs: &[RunData]) -> Vec<(String, Vec<Pooled>)> {
    let labeler = Labeler::new(runs.iter().flat_map(|r| r.ms.iter().map(|m| &m.params)));
    // Parameters a variant sets (the quick study's `mechanism`) name curves, not points:
    // pipe and futex at pair 0-1 belong in one figure.
    let by_variant = variant_params(runs);
    let skip: Vec<&str> = by_variant.iter().map(String::as_str).collect();
    let several = runs.len() > 1;
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<Pooled>> = BTreeMap::new();
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
            let Some(decoded) = decode(h) else { continue };
            let point = labeler.label_without(&m.params, &skip);
            let curve = if several {
                format!("{} {}", m.variant, run_name(&r.info))
            } else {
                m.variant.clone()
            };
            if !order.contains(&point) {
                order.push(point.clone());
            }
            let group = groups.entry(point).or_default();
            match group
                .iter_mut()
                .find(|p| p.curve == curve && p.name == h.name)
            {
                Some(p) => {
                    // Histograms of one workload share their bounds; a failed add
                    // (values out of range) leaves the pool as it was.
                    let _ = p.hist.add(&decoded);
                }
                None => group.push(Pooled {
                    name: h.name.clone(),
                    curve,
                    unit: h.unit,
                    hist: decoded,
                }),
            }
        }
    }
    order
        .into_iter()
        .filter_map(|p| groups.remove(&p).map(|g| (p, g)))
        .collect()
}

/// Names of parameters whose value differs between the variants at one point.
fn variant_params(runs: &[RunData]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        // One record per (point, variant) is enough: repetitions share their parameters.
        let mut firsts: BTreeMap<(u32, &str), &perflab_core::Params> = BTreeMap::new();
        for m in &r.ms {
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
    let points = if p.hist.is_empty() {
        Vec::new()
    } else {
        qs.into_iter()
            .map(|q| CurvePoint {
                x: p.hist.value_at_quantile(q) as f64 * s,
                y: q,
                band: None,
                flagged: false,
            })
            .collect()
    };
    Curve {
        name: format!("{} (n={})", p.curve, p.hist.len()),
        points,
    }
}

/// Percentiles the pooled count supports: 99.99% needs at least 10,000 values.
fn percentiles(p: &Pooled) -> (String, Vec<(f64, f64)>) {
    let s = scale(p.unit);
    let n = p.hist.len() as f64;
    let points = PERCENTILES
        .iter()
        .filter(|&&q| !p.hist.is_empty() && n >= 1.0 / (1.0 - q))
        .map(|&q| (q, p.hist.value_at_quantile(q) as f64 * s))
        .collect();
    (format!("{} (n={})", p.curve, p.hist.len()), points)
}
