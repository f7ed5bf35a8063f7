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

/// Renders `c`: one group per category, one bar per series from 0, an error bar where
/// the series has one. `None` (or a non-finite value) leaves a gap, never a zero bar.
pub fn bar_chart(c: &BarChart) -> String {
    let x_axis = Axis::categories(&c.categories, false, MAX_LABELS);
    let n = c.categories.len();
    let values = c.series.iter().flat_map(|s| {
        let bars = (0..n).filter_map(|i| value(s, i));
        let errors = (0..n)
            .filter_map(|i| error(s, i))
            .flat_map(|(lo, hi)| [lo, hi]);
        bars.chain(errors)
    });
    let y_axis = Axis::fit(values, Scale::Linear, TickFormat::Plain, true);
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
            &c.title,
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
            let (ylo, yhi) = (map.y(lo), map.y(hi));
            out.push_str(&format!(
                "<path d=\"M{x:.1} {ylo:.1}V{yhi:.1}M{:.1} {ylo:.1}H{:.1}M{:.1} {yhi:.1}H{:.1}\" stroke=\"#333\" stroke-width=\"1.2\" fill=\"none\"><title>{}</title></path>\n",
                x - cap,
                x + cap,
                x - cap,
                x + cap,
                escape(&title)
            ));
        }
        out
    }
}
