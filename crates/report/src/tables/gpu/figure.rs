//! Seed 002's plot for gpu-xfer: bandwidth against size (log axis) with one curve per
//! host memory kind (each variant of [`BackingTable`]) and the PCIe link's theoretical
//! bandwidth per direction as a horizontal line: the ceiling the curves are read against
//! (copies reach about 80-90 % of it, docs/gpu-xfer.md).
//!
//! The link comes from the measurements themselves: gpuxfer stores `link_mib_s` (from the
//! device's `current_link_speed` × `current_link_width` in sysfs, as `perflab doctor`
//! reads it), so a report of a run from another machine draws that machine's link.

use perflab_core::record::MeasurementRecord;

use crate::doc::Block;
use crate::plot::{line_chart_with, Curve, CurvePoint, LineChart, RefLine, Scale, TickFormat};
use crate::select::is_ok;
use crate::tables::gpu::{BackingSection, BackingTable};

/// The metric gpuxfer stores the link's bandwidth in.
pub const LINK_METRIC: &str = "link_mib_s";

/// The link's theoretical bandwidth per direction the run's measurements recorded (the
/// largest, should they differ: one GPU per run), in MiB/s.
pub fn link_mib_s(ms: &[MeasurementRecord]) -> Option<f64> {
    ms.iter()
        .filter(|m| is_ok(m))
        .filter_map(|m| m.output.metric(LINK_METRIC).map(|x| x.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .reduce(f64::max)
}

/// One chart per section of `t`: each variant's medians against size, and the link.
pub fn backing_curves(t: &BackingTable, link: Option<f64>) -> Vec<String> {
    t.sections.iter().map(|s| chart(t, s, link)).collect()
}

fn chart(t: &BackingTable, s: &BackingSection, link: Option<f64>) -> String {
    let curve = |name: &str, pick: &dyn Fn(usize) -> Option<f64>| Curve {
        name: name.to_string(),
        points: s
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                pick(i).map(|y| CurvePoint {
                    x: r.size_bytes as f64,
                    y,
                    band: None,
                    flagged: false,
                })
            })
            .collect(),
    };
    let mut curves = vec![curve(&t.baseline, &|i| s.rows[i].baseline)];
    for (c, name) in t.others.iter().enumerate() {
        curves.push(curve(name, &|i| s.rows[i].cells[c].median));
    }
    let refs: Vec<RefLine> = link
        .map(|y| RefLine {
            name: format!("PCIe link, theoretical ({y:.0} MiB/s)"),
            y,
        })
        .into_iter()
        .collect();
    let unit = t.unit.symbol();
    line_chart_with(
        &LineChart {
            title: format!(
                "{} by size, {}: one curve per variant{}",
                t.metric,
                s.title,
                if refs.is_empty() {
                    " (link bandwidth not recorded)"
                } else {
                    ", dashed: the PCIe link's theoretical bandwidth"
                }
            ),
            x_label: "size (bytes)".into(),
            y_label: if unit.is_empty() {
                t.metric.clone()
            } else {
                format!("{} ({unit})", t.metric)
            },
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
            x_format: TickFormat::Bytes,
            curves,
        },
        &refs,
    )
}

/// The table and, with `figures`, its plots, under a heading: what a report of one run
/// of more than two variants puts before the scans of each pair.
pub(crate) fn blocks(t: &BackingTable, link: Option<f64>, figures: bool) -> Vec<Block> {
    use crate::section::Section;
    let mut out = vec![Block::heading(
        2,
        format!(
            "{}: every variant by size, against {}",
            t.metric, t.baseline
        ),
    )];
    if figures {
        out.extend(backing_curves(t, link).into_iter().map(Block::Figure));
    }
    out.extend(t.blocks());
    out
}
