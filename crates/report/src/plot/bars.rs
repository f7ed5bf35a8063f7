//! Grouped bars with error bars: the CPU-pair study, the regression histogram, telemetry
//! per CPU.

use super::axis::Axis;
use super::frame::{Frame, FrameSpec, Mapper};
use super::legend::{self, Entry};
use super::{escape, numfmt, palette, BarChart, BarSeries, Scale, TickFormat};

/// At most this many category labels; the rest are thinned out (every n-th shown).
const MAX_LABELS: usize = 40;
/// Share of a category's width the bars of a group fill.
const GROUP: f64 = 0.8;

/// How far beyond the bars' own extent (0 included) an error bar may reach, in multiples
/// of that extent, before it is cut at the axis: one interval of −89 %…+3000 % among bars
/// of ±50 % would otherwise shrink every bar to a sliver.
const REACH: f64 = 2.0;

/// Renders `c`: one group per category, one bar per series from 0, an error bar where
/// the series has one. `None` (or a non-finite value) leaves a gap, never a zero bar.
/// An error bar reaching far beyond the bars stops at the axis' end with an arrow and the
/// value it reached written beside it (and in the caption). Bars that are all 0 without
/// error bars are a sentence, not an empty plot.
pub fn bar_chart(c: &BarChart) -> String {
    let x_axis = Axis::categories(&c.categories, false, MAX_LABELS);
    let n = c.categories.len();
    let bars: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| (0..n).filter_map(|i| value(s, i)))
        .collect();
    let ends: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| (0..n).filter_map(|i| error(s, i)))
        .flat_map(|(lo, hi)| [lo, hi])
        .collect();
    if !bars.is_empty() && ends.is_empty() && bars.iter().all(|v| *v == 0.0) {
        return super::frame::no_plot(&c.title, "every value is 0");
    }
    let limits = limits(&bars);
    let cut = cut_ends(c, limits);
    let values = bars
        .iter()
        .copied()
        .chain(ends.iter().map(|e| e.clamp(limits.0, limits.1)));
    let y_axis = Axis::fit(values, Scale::Linear, TickFormat::Plain, true);
    let title = if cut.is_empty() {
        c.title.clone()
    } else {
        format!(
            "{} (interval cut at the axis, arrow: {})",
            c.title,
            cut.join("; ")
        )
    };
    let entries: Vec<Entry> = c
        .series
        .iter()
        .enumerate()
        .map(|(j, s)| Entry::boxed(s.name.clone(), palette::series(j)))
        .collect();
    let spec = FrameSpec {
        x_grid: false,
        ..FrameSpec::new(
            "bar",
            &title,
            (&c.x_label, &x_axis),
            (&c.y_label, &y_axis),
            &entries,
        )
    };
    let frame = Frame::draw(&spec);
    let mut marks = String::new();
    let mut drawn = false;
    let width = GROUP / c.series.len().max(1) as f64;
    for (j, s) in c.series.iter().enumerate() {
        for (i, category) in c.categories.iter().enumerate() {
            let left = i as f64 + (1.0 - GROUP) / 2.0 + j as f64 * width;
            let bar = Bar {
                left,
                width,
                value: value(s, i),
                error: error(s, i),
                limits,
            };
            if bar.value.is_some() {
                drawn = true;
            }
            marks.push_str(&bar.render(&frame.map, palette::series(j), category, &s.name));
        }
    }
    marks.push_str(&legend::render(&entries, spec.plot_height));
    frame.finish(&spec, !drawn, &marks)
}

/// Where error bars stop: the bars' extent with 0, widened by [`REACH`] times itself
/// each way; unbounded where the bars have no extent (all 0, or none).
fn limits(bars: &[f64]) -> (f64, f64) {
    let lo = bars.iter().copied().fold(0.0f64, f64::min);
    let hi = bars.iter().copied().fold(0.0f64, f64::max);
    let span = hi - lo;
    if span > 0.0 && span.is_finite() {
        (lo - REACH * span, hi + REACH * span)
    } else {
        (f64::NEG_INFINITY, f64::INFINITY)
    }
}

/// `0-1 up to 3000` for each error bar end beyond `limits`, with the value it reached.
fn cut_ends(c: &BarChart, (lo, hi): (f64, f64)) -> Vec<String> {
    let mut out = Vec::new();
    for s in &c.series {
        for (i, category) in c.categories.iter().enumerate() {
            let Some((a, b)) = error(s, i) else {
                continue;
            };
            if a < lo {
                out.push(format!("{category} down to {}", numfmt::precise(a)));
            }
            if b > hi {
                out.push(format!("{category} up to {}", numfmt::precise(b)));
            }
        }
    }
    out
}

fn value(s: &BarSeries, i: usize) -> Option<f64> {
    s.values.get(i).copied().flatten().filter(|v| v.is_finite())
}

fn error(s: &BarSeries, i: usize) -> Option<(f64, f64)> {
    s.errors
        .get(i)
        .copied()
        .flatten()
        .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
        .map(|(lo, hi)| (lo.min(hi), lo.max(hi)))
}

/// One bar in category coordinates (category i spans i..i+1).
struct Bar {
    left: f64,
    width: f64,
    value: Option<f64>,
    error: Option<(f64, f64)>,
    /// Where its error bar stops (see [`limits`]).
    limits: (f64, f64),
}

impl Bar {
    fn render(&self, map: &Mapper, colour: &str, category: &str, series: &str) -> String {
        let mut out = String::new();
        let (x0, x1) = (map.x(self.left), map.x(self.left + self.width));
        let mut title = format!("{category} · {series}: ");
        match self.value {
            Some(v) => title.push_str(&numfmt::precise(v)),
            None => title.push_str("not measured"),
        }
        if let Some((lo, hi)) = self.error {
            title.push_str(&format!(
                " [{} – {}]",
                numfmt::precise(lo),
                numfmt::precise(hi)
            ));
        }
        if let Some(v) = self.value {
            let (y0, y1) = (map.y(0.0), map.y(v));
            out.push_str(&format!(
                "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{colour}\"><title>{}</title></rect>\n",
                y0.min(y1),
                (x1 - x0).max(0.5),
                (y1 - y0).abs(),
                escape(&title)
            ));
        }
        if let Some((lo, hi)) = self.error {
            let x = (x0 + x1) / 2.0;
            let cap = ((x1 - x0) * 0.3).min(5.0);
            let (min, max) = self.limits;
            let (ylo, yhi) = (map.y(lo.max(min)), map.y(hi.min(max)));
            let (low, high) = (
                end_mark(x, cap, ylo, lo < min, false),
                end_mark(x, cap, yhi, hi > max, true),
            );
            out.push_str(&format!(
                "<path d=\"M{x:.1} {ylo:.1}V{yhi:.1}{low}{high}\" stroke=\"#333\" stroke-width=\"1.2\" fill=\"none\"><title>{}</title></path>\n",
                escape(&title)
            ));
            for (cut, v, y) in [(hi > max, hi, yhi + 12.0), (lo < min, lo, ylo - 4.0)] {
                if cut {
                    out.push_str(&format!(
                        "<text class=\"cut\" x=\"{:.1}\" y=\"{y:.1}\" font-family=\"sans-serif\" font-size=\"12\" fill=\"#b00020\">{}</text>\n",
                        x + 6.0,
                        escape(&numfmt::precise(v))
                    ));
                }
            }
        }
        out
    }
}

/// The end of an error bar at `y`: a cap, or where it was cut at the axis an arrowhead
/// pointing on (`up` towards larger values).
fn end_mark(x: f64, cap: f64, y: f64, cut: bool, up: bool) -> String {
    if !cut {
        return format!("M{:.1} {y:.1}H{:.1}", x - cap, x + cap);
    }
    // SVG y grows downwards: a larger value is higher up.
    let back = if up { y + 7.0 } else { y - 7.0 };
    format!(
        "M{:.1} {back:.1}L{x:.1} {y:.1}L{:.1} {back:.1}",
        x - 5.0,
        x + 5.0
    )
}
