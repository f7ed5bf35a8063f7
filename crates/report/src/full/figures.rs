//! Figure data for the report's comparisons: size-scan curves with interval bands,
//! CPU-pair maps, the regression histogram, medians as bars, and telemetry per CPU.
//! Only data is shaped here; [`crate::plot`] draws it.

use std::collections::BTreeSet;

use perflab_core::record::MeasurementRecord;
use perflab_core::Unit;

use crate::plot::{
    bar_chart, heat_map, line_chart, BarChart, BarSeries, Curve, CurvePoint, HeatMap, LineChart,
    Scale, TickFormat,
};
use crate::select::{is_ok, MetricChoice};
use crate::tables::compare::{ComparisonTable, TableKind};
use crate::tables::distribution::Distribution;
use crate::tables::scan::ScanReport;
use crate::tables::summary::{SummaryRow, SummaryTable};
use crate::telemetry::median_total_where;

/// More categories than this make a bar chart unreadable; the table has them all.
const MAX_BARS: usize = 64;

/// "bandwidth_mib_s (MiB/s)".
pub(crate) fn axis_label(metric: &str, unit: Unit) -> String {
    match unit.symbol() {
        "" => metric.to_string(),
        u => format!("{metric} ({u})"),
    }
}

/// Log scale when the values span more than two decades, so both ends stay readable.
fn y_scale(values: impl Iterator<Item = f64>) -> Scale {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi > 0.0 && lo.is_finite() && hi / lo > 100.0 {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// Picks a side's median and interval from a scan point.
type SidePick<'a> =
    &'a dyn Fn(&crate::tables::scan::ScanPoint) -> Option<(f64, Option<(f64, f64)>)>;

/// One chart per scan section: A's and B's medians against size, each with its
/// bootstrap band; sizes that differ (verdict not `~`) are drawn as flagged on B.
pub(crate) fn scan_curves(r: &ScanReport) -> Vec<String> {
    r.sections
        .iter()
        .map(|s| {
            let side = |name: &str, pick: SidePick, flag: bool| Curve {
                name: name.to_string(),
                points: s
                    .points
                    .iter()
                    .filter_map(|p| {
                        pick(p).map(|(y, band)| CurvePoint {
                            x: p.size_bytes as f64,
                            y,
                            band,
                            flagged: flag && p.differs().is_some(),
                        })
                    })
                    .collect(),
            };
            let a = side(&r.a_label, &|p| p.median_a.map(|m| (m, p.ci_a)), false);
            let b = side(&r.b_label, &|p| p.median_b.map(|m| (m, p.ci_b)), true);
            let scale = y_scale(a.points.iter().chain(&b.points).map(|p| p.y));
            line_chart(&LineChart {
                title: format!(
                    "{} by {}{}: {} vs {} (bands: {} CI of the median; hollow: differs)",
                    r.metric,
                    r.axis,
                    if s.title.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", s.title)
                    },
                    r.b_label,
                    r.a_label,
                    r.config.confidence_label()
                ),
                // The ticks are binary sizes, as the tables' KiB: 64K is 64 KiB.
                x_label: format!("{} (K = KiB, M = MiB)", r.axis),
                y_label: axis_label(&r.metric, r.unit),
                x_scale: Scale::Log,
                y_scale: scale,
                x_format: TickFormat::Bytes,
                curves: vec![a, b],
            })
        })
        .collect()
}

/// A comparison that is not a scan: a CPU-pair map, or A's and B's medians per point.
pub(crate) fn comparison_figures(t: &ComparisonTable) -> Vec<String> {
    let pairs: Vec<(u32, u32, Option<f64>)> = t
        .rows
        .iter()
        .filter_map(|r| r.pair.map(|(a, b)| (a, b, r.cmp.regression_pct)))
        .collect();
    if !pairs.is_empty() && pairs.len() == t.rows.len() {
        return vec![pair_map(t, &pairs)];
    }
    vec![medians_bars(t)]
}

/// Regression per CPU pair: a heat map (anchor × partner) when there are several
/// anchors, else one bar per pair with the change's interval.
fn pair_map(t: &ComparisonTable, pairs: &[(u32, u32, Option<f64>)]) -> String {
    let anchors: BTreeSet<u32> = pairs.iter().map(|p| p.0).collect();
    let partners: BTreeSet<u32> = pairs.iter().map(|p| p.1).collect();
    let title = format!(
        "Regression of {} per CPU pair: {} vs {} (positive = worse)",
        t.metric, t.b_label, t.a_label
    );
    if anchors.len() > 1 {
        let xs: Vec<u32> = partners.into_iter().collect();
        let ys: Vec<u32> = anchors.into_iter().collect();
        let cells = pairs
            .iter()
            .filter_map(|(a, b, v)| {
                let x = xs.iter().position(|c| c == b)?;
                let y = ys.iter().position(|c| c == a)?;
                v.map(|v| (x, y, v))
            })
            .collect();
        return heat_map(&HeatMap {
            title,
            x_label: "partner CPU (cpu_b)".into(),
            y_label: "anchor CPU (cpu_a)".into(),
            value_label: "regression (%)".into(),
            x_categories: xs.iter().map(u32::to_string).collect(),
            y_categories: ys.iter().map(u32::to_string).collect(),
            cells,
        });
    }
    let rows: Vec<_> = t.rows.iter().take(MAX_BARS).collect();
    let sign = |r: &crate::tables::compare::Row| match (r.cmp.change_pct, r.cmp.regression_pct) {
        (Some(c), Some(g)) if c != 0.0 => g / c,
        _ => 1.0,
    };
    bar_chart(&BarChart {
        title,
        x_label: "CPU pair (cpu_a-cpu_b)".into(),
        y_label: "regression (%)".into(),
        categories: rows.iter().map(|r| r.label.clone()).collect(),
        series: vec![BarSeries {
            name: format!("{} vs {}", t.b_label, t.a_label),
            values: rows.iter().map(|r| r.cmp.regression_pct).collect(),
            errors: rows
                .iter()
                .map(|r| {
                    let s = sign(r);
                    r.cmp.change_ci_pct.map(|(lo, hi)| {
                        let (x, y) = (lo * s, hi * s);
                        (x.min(y), x.max(y))
                    })
                })
                .collect(),
        }],
    })
}

/// A's and B's medians per point with their bootstrap intervals.
fn medians_bars(t: &ComparisonTable) -> String {
    let rows: Vec<_> = t.rows.iter().take(MAX_BARS).collect();
    let categories = rows
        .iter()
        .map(|r| match &r.variant {
            Some(v) => format!("{} [{v}]", r.label),
            None => r.label.clone(),
        })
        .collect();
    let side =
        |name: &str, pick: &dyn Fn(&crate::tables::compare::Row) -> &perflab_stats::Summary| {
            BarSeries {
                name: name.to_string(),
                values: rows.iter().map(|r| Some(pick(r).median)).collect(),
                errors: rows
                    .iter()
                    .map(|r| {
                        let s = pick(r);
                        (!s.median_ci_degenerate).then_some(s.median_ci)
                    })
                    .collect(),
            }
        };
    bar_chart(&BarChart {
        title: format!(
            "Median {} per point: {} vs {} (error bars: {} CI)",
            t.metric,
            t.b_label,
            t.a_label,
            t.config.confidence_label()
        ),
        x_label: "point".into(),
        y_label: axis_label(&t.metric, t.unit),
        categories,
        series: vec![
            side(&t.a_label, &|r| &r.cmp.a),
            side(&t.b_label, &|r| &r.cmp.b),
        ],
    })
}

/// The regression distribution as a histogram of rows per bucket.
pub(crate) fn distribution_histogram(d: &Distribution) -> String {
    let buckets: Vec<_> = d.shown_buckets().collect();
    bar_chart(&BarChart {
        title: format!(
            "Regression distribution of {}: {} vs {}, {} rows",
            d.metric, d.b_label, d.a_label, d.total
        ),
        x_label: "regression (%), positive = worse".into(),
        y_label: "rows".into(),
        categories: buckets.iter().map(|c| c.bucket.range_text()).collect(),
        series: vec![
            BarSeries {
                name: "rows".into(),
                values: buckets.iter().map(|c| Some(c.count as f64)).collect(),
                errors: vec![None; buckets.len()],
            },
            BarSeries {
                name: "better/worse".into(),
                values: buckets.iter().map(|c| Some(c.significant as f64)).collect(),
                errors: vec![None; buckets.len()],
            },
            BarSeries {
                name: "same".into(),
                values: buckets.iter().map(|c| Some(c.same as f64)).collect(),
                errors: vec![None; buckets.len()],
            },
            BarSeries {
                name: "undecided".into(),
                values: buckets.iter().map(|c| Some(c.undecided as f64)).collect(),
                errors: vec![None; buckets.len()],
            },
        ],
    })
}

/// The records of each side of a comparison.
pub(crate) fn sides<'a>(
    t: &ComparisonTable,
    ms_a: &'a [MeasurementRecord],
    ms_b: &'a [MeasurementRecord],
) -> (Vec<&'a MeasurementRecord>, Vec<&'a MeasurementRecord>) {
    match &t.kind {
        TableKind::Variants { base, other, .. } => (
            ms_a.iter()
                .filter(|m| is_ok(m) && &m.variant == base)
                .collect(),
            ms_b.iter()
                .filter(|m| is_ok(m) && &m.variant == other)
                .collect(),
        ),
        TableKind::Runs { .. } => (
            ms_a.iter().filter(|m| is_ok(m)).collect(),
            ms_b.iter().filter(|m| is_ok(m)).collect(),
        ),
    }
}

/// Per-CPU bar charts of each side, for every monitor whose hints ask for one (interrupts,
/// idle residency): medians over each side's measurements of the per-measurement sum of
/// the monitor's matching rows on each CPU.
pub(crate) fn telemetry_per_cpu(
    t: &ComparisonTable,
    ms_a: &[MeasurementRecord],
    ms_b: &[MeasurementRecord],
) -> Vec<String> {
    let (a, b) = sides(t, ms_a, ms_b);
    let mut out = Vec::new();
    for d in crate::hints::monitors() {
        let Some(fig) = d.rows().and_then(|h| h.figure.as_ref()) else {
            continue;
        };
        let source = d.name;
        let cpus: BTreeSet<u32> = a
            .iter()
            .chain(&b)
            .flat_map(|m| m.telemetry.iter())
            .filter(|r| r.source == source && fig.keys.matches(&r.key))
            .filter_map(|r| r.cpu)
            .collect();
        if cpus.is_empty() {
            continue;
        }
        let cpus: Vec<u32> = cpus.into_iter().take(MAX_BARS).collect();
        // A side none of whose measurements counted (all ineffective, disturbed or
        // failed) has no bars, and its legend says why, rather than bars of 0.
        let series = |name: &str, recs: &[&MeasurementRecord]| BarSeries {
            name: match recs.is_empty() {
                true => format!("{name} (no measurement counted)"),
                false => name.to_string(),
            },
            values: cpus
                .iter()
                .map(|&c| {
                    (!recs.is_empty())
                        .then(|| median_total_where(recs, source, c, fig.keys) * fig.scale)
                })
                .collect(),
            errors: vec![None; cpus.len()],
        };
        out.push(bar_chart(&BarChart {
            title: format!(
                "{} per CPU: {} vs {} (medians over each side's measurements)",
                fig.what, t.b_label, t.a_label
            ),
            x_label: "CPU".into(),
            y_label: fig.y_label.into(),
            categories: cpus.iter().map(|c| format!("CPU{c}")).collect(),
            series: vec![series(&t.a_label, &a), series(&t.b_label, &b)],
        }));
    }
    out
}

/// A single variant's medians: a curve over size when the points are a size scan, else
/// bars per point.
pub(crate) fn summary_figure(s: &SummaryTable) -> Option<String> {
    let metric = s.metric.as_ref()?;
    let rows: Vec<&SummaryRow> = s.rows.iter().filter(|r| r.summary.is_some()).collect();
    if rows.is_empty() {
        return None;
    }
    let axis = s.param_roles.name_of(perflab_core::ParamRole::SizeAxis);
    match axis.and_then(|axis| sizes_of(&rows, axis).map(|sizes| (axis, sizes))) {
        Some((axis, sizes)) if rows.len() > 1 => summary_curves(s, metric, &rows, (axis, &sizes)),
        _ => Some(summary_bars(s, metric, rows)),
    }
}

/// Each row's size (its parameter `axis`) in bytes, or `None` unless every row has one.
fn sizes_of(rows: &[&SummaryRow], axis: &str) -> Option<Vec<f64>> {
    rows.iter()
        .map(|r| {
            r.params
                .get(axis)
                .and_then(crate::tables::scan::size_bytes)
                .map(|b| b as f64)
        })
        .collect()
}

/// The medians over size as curves, one per combination of the other parameters (or
/// per variant when nothing else varies), with their intervals as bands.
fn summary_curves(
    s: &SummaryTable,
    metric: &MetricChoice,
    rows: &[&SummaryRow],
    (axis, sizes): (&str, &[f64]),
) -> Option<String> {
    let mut curves: Vec<Curve> = Vec::new();
    for (r, &x) in rows.iter().zip(sizes) {
        let rest = crate::select::Labeler::new(&s.param_roles, rows.iter().map(|r| &r.params))
            .label_without(&r.params, &[axis]);
        let name = if rest.is_empty() {
            r.variant.clone()
        } else {
            rest
        };
        let sum = r.summary.as_ref()?;
        let point = CurvePoint {
            x,
            y: sum.median,
            band: (!sum.median_ci_degenerate).then_some(sum.median_ci),
            flagged: !r.outlier_reps.is_empty(),
        };
        match curves.iter_mut().find(|c| c.name == name) {
            Some(c) => c.points.push(point),
            None => curves.push(Curve {
                name,
                points: vec![point],
            }),
        }
    }
    let scale = y_scale(curves.iter().flat_map(|c| c.points.iter().map(|p| p.y)));
    Some(line_chart(&LineChart {
        title: format!(
            "Median {} by size (bands: {} CI; hollow: repetitions with outliers)",
            metric.name,
            s.config.confidence_label()
        ),
        x_label: "size (bytes)".into(),
        y_label: axis_label(&metric.name, metric.unit),
        x_scale: Scale::Log,
        y_scale: scale,
        x_format: TickFormat::Bytes,
        curves,
    }))
}

/// The medians as bars per point (the first [`MAX_BARS`]), intervals as error bars.
fn summary_bars(s: &SummaryTable, metric: &MetricChoice, rows: Vec<&SummaryRow>) -> String {
    let rows: Vec<_> = rows.into_iter().take(MAX_BARS).collect();
    bar_chart(&BarChart {
        title: format!(
            "Median {} per point (error bars: {} CI)",
            metric.name,
            s.config.confidence_label()
        ),
        x_label: "point".into(),
        y_label: axis_label(&metric.name, metric.unit),
        categories: rows.iter().map(|r| r.label.clone()).collect(),
        series: vec![BarSeries {
            name: "median".into(),
            values: rows
                .iter()
                .map(|r| r.summary.as_ref().map(|s| s.median))
                .collect(),
            errors: rows
                .iter()
                .map(|r| {
                    r.summary
                        .as_ref()
                        .filter(|s| !s.median_ci_degenerate)
                        .map(|s| s.median_ci)
                })
                .collect(),
        }],
    })
}
