//! Latency percentiles on a "nines" axis, so the tail gets as much room as the median.

use super::axis::{Axis, Tick};
use super::frame::{Frame, FrameSpec, Mapper};
use super::legend::{self, Entry, Swatch};
use super::{escape, numfmt, palette, PercentileChart, Scale, TickFormat};

/// The x axis description (and `data-x-axis`) of every percentile chart.
pub const PERCENTILE_AXIS: &str = "percentile";

/// Curves with more points than this are drawn as lines only: HDR histograms yield
/// hundreds of percentiles and a marker on each would bloat the SVG.
const MAX_MARKERS: usize = 40;

/// When all values are positive and the largest is over this many times the smallest,
/// the y axis is logarithmic: a tail 1000× the median would flatten everything else.
const LOG_Y_SPAN: f64 = 100.0;

/// Renders `c`: x = −log10(1 − q) with ticks 50%, 90%, 99%, 99.9% …; y linear, or log10
/// when the values span more than two decades. Quantiles outside 0 ≤ q < 1 and
/// non-finite values are skipped.
pub fn percentile_chart(c: &PercentileChart) -> String {
    let curves: Vec<Vec<(f64, f64, f64)>> = c
        .curves
        .iter()
        .map(|(_, points)| {
            let mut kept: Vec<(f64, f64, f64)> = points
                .iter()
                .filter(|(q, v)| (0.0..1.0).contains(q) && v.is_finite())
                .map(|&(q, v)| (nines(q), q, v))
                .filter(|(x, _, _)| x.is_finite())
                .collect();
            kept.sort_by(|a, b| a.0.total_cmp(&b.0));
            kept
        })
        .collect();
    let values = || curves.iter().flatten().map(|p| p.2);
    let (min, max) = values().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let y_scale = if min > 0.0 && max / min > LOG_Y_SPAN {
        Scale::Log
    } else {
        Scale::Linear
    };
    let y_axis = Axis::fit(values(), y_scale, TickFormat::Plain, false);
    let x_max = curves.iter().flatten().map(|p| p.0).fold(0.0, f64::max);
    let x_min = curves
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(2f64.log10(), f64::min);
    let x_axis = nines_axis(x_min, x_max);
    let entries: Vec<Entry> = c
        .curves
        .iter()
        .enumerate()
        .map(|(i, (name, _))| Entry {
            label: name.clone(),
            swatch: Swatch::Line {
                colour: palette::series(i).to_string(),
                dash: palette::dash(i),
            },
        })
        .collect();
    let spec = FrameSpec::new(
        "percentile",
        &c.title,
        (PERCENTILE_AXIS, &x_axis),
        (&c.y_label, &y_axis),
        &entries,
    );
    let frame = Frame::draw(&spec);
    let mut marks = String::new();
    for (i, ((name, _), points)) in c.curves.iter().zip(&curves).enumerate() {
        marks.push_str(&curve(name, points, &frame.map, &y_axis, i));
    }
    marks.push_str(&legend::render(&entries, spec.plot_height));
    let empty = curves.iter().all(Vec::is_empty);
    frame.finish(&spec, empty, &marks)
}

/// −log10(1 − q): 50% → 0.30, 90% → 1, 99% → 2, 99.9% → 3.
fn nines(q: f64) -> f64 {
    -(1.0 - q).log10()
}

/// From 0% (or 50% when no point lies below it) up to the next whole number of nines.
fn nines_axis(x_min: f64, x_max: f64) -> Axis {
    let half = 2f64.log10();
    let lo = if x_min < half - 1e-9 { 0.0 } else { half };
    // The epsilon keeps 99.99% (4.0000000000000x nines in floating point) from asking
    // for a fifth decade.
    let hi = (x_max - 1e-9).ceil().clamp(1.0, 15.0);
    let mut ticks = Vec::new();
    if lo == 0.0 {
        ticks.push(Tick {
            pos: 0.0,
            label: "0%".into(),
        });
    }
    ticks.push(Tick {
        pos: half,
        label: "50%".into(),
    });
    let every = (hi / 8.0).ceil().max(1.0) as usize;
    for n in (1..=hi as usize).filter(|n| n % every == 0 || *n == 1) {
        ticks.push(Tick {
            pos: n as f64,
            label: nines_label(n),
        });
    }
    Axis::fixed(lo, hi, ticks)
}

/// "90%", "99%", "99.9%", "99.99%" for 1, 2, 3, 4 nines.
fn nines_label(n: usize) -> String {
    match n {
        1 => "90%".into(),
        2 => "99%".into(),
        _ => format!("99.{}%", "9".repeat(n - 2)),
    }
}

fn curve(name: &str, points: &[(f64, f64, f64)], map: &Mapper, y: &Axis, i: usize) -> String {
    let colour = palette::series(i);
    let at = |x: f64, v: f64| {
        let t = y.transform.apply(v).unwrap_or(y.lo);
        (map.x(x), map.y(t))
    };
    let mut out = String::new();
    if points.len() >= 2 {
        let pts: Vec<String> = points
            .iter()
            .map(|&(x, _, v)| {
                let (px, py) = at(x, v);
                format!("{px:.1},{py:.1}")
            })
            .collect();
        let dash = palette::dash(i).map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
        out.push_str(&format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{dash}><title>{}</title></polyline>\n",
            pts.join(" "),
            escape(name)
        ));
    }
    if points.len() <= MAX_MARKERS {
        for &(x, q, v) in points {
            let (px, py) = at(x, v);
            out.push_str(&format!(
                "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3\" fill=\"{colour}\"><title>{}</title></circle>\n",
                escape(&format!(
                    "{name}: p{} = {}",
                    numfmt::precise(q * 100.0),
                    numfmt::precise(v)
                ))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_ticks() {
        let a = nines_axis(nines(0.5), nines(0.9999));
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["50%", "90%", "99%", "99.9%", "99.99%"]);
        assert!((a.ticks[3].pos - nines(0.999)).abs() < 1e-9);
        let from_zero = nines_axis(0.0, 0.5);
        assert_eq!(from_zero.ticks[0].label, "0%");
        assert_eq!(from_zero.hi, 1.0);
    }

    #[test]
    fn deep_tails_are_thinned() {
        let a = nines_axis(0.3, 15.0);
        assert!(a.ticks.len() <= 12, "{a:?}");
    }
}
