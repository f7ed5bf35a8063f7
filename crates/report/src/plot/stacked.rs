//! Stacked bars with a measured total beside each stack: where a round trip's time goes.
//! One category per load case; the stack holds the spans in order from 0 up, and a grey
//! bar beside it the measured round trip, so the part no span covers shows as the
//! difference in height (and is named in the hover text).

use super::axis::Axis;
use super::frame::{Frame, FrameSpec, Mapper};
use super::legend::{self, Entry};
use super::{escape, numfmt, palette, Scale, StackedBars, TickFormat};

const MAX_LABELS: usize = 40;
/// Share of a category's width the stack and the total fill, side by side.
const STACK: f64 = 0.42;
const TOTAL: f64 = 0.3;
const TOTAL_COLOUR: &str = "#9a9a9a";

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x >= 0.0)
}

/// Renders `c`. A segment without a value (a span that matched nothing) adds nothing to
/// its stack; a category with neither stack nor total is left empty, never a zero bar.
pub fn stacked_bars(c: &StackedBars) -> String {
    let n = c.categories.len();
    let x_axis = Axis::categories(&c.categories, false, MAX_LABELS);
    let sums: Vec<f64> = (0..n)
        .map(|i| {
            c.segments
                .iter()
                .filter_map(|s| finite(s.values.get(i).copied().flatten()))
                .sum()
        })
        .collect();
    let totals: Vec<Option<f64>> = (0..n)
        .map(|i| finite(c.total.values.get(i).copied().flatten()))
        .collect();
    let y_axis = Axis::fit(
        sums.iter().copied().chain(totals.iter().flatten().copied()),
        Scale::Linear,
        TickFormat::Plain,
        true,
    );
    let mut entries: Vec<Entry> = c
        .segments
        .iter()
        .enumerate()
        .map(|(j, s)| Entry::boxed(s.name.clone(), palette::series(j)))
        .collect();
    entries.push(Entry::boxed(c.total.name.clone(), TOTAL_COLOUR));
    let spec = FrameSpec {
        x_grid: false,
        ..FrameSpec::new(
            "stacked",
            &c.title,
            (&c.x_label, &x_axis),
            (&c.y_label, &y_axis),
            &entries,
        )
    };
    let frame = Frame::draw(&spec);
    let mut marks = String::new();
    let mut drawn = false;
    for (i, category) in c.categories.iter().enumerate() {
        let left = i as f64 + (1.0 - STACK - TOTAL) / 2.0;
        let mut base = 0.0;
        for (j, s) in c.segments.iter().enumerate() {
            let Some(v) = finite(s.values.get(i).copied().flatten()) else {
                continue;
            };
            let title = format!("{category} · {}: {}", s.name, numfmt::precise(v));
            marks.push_str(&rect(
                &frame.map,
                (left, STACK),
                (base, base + v),
                palette::series(j),
                &title,
            ));
            base += v;
            drawn = true;
        }
        if let Some(t) = totals[i] {
            let rest = t - sums[i];
            let title = format!(
                "{category} · {}: {}; spans: {}; not covered by a span: {}",
                c.total.name,
                numfmt::precise(t),
                numfmt::precise(sums[i]),
                numfmt::precise(rest)
            );
            marks.push_str(&rect(
                &frame.map,
                (left + STACK, TOTAL),
                (0.0, t),
                TOTAL_COLOUR,
                &title,
            ));
            drawn = true;
        }
    }
    marks.push_str(&legend::render(&entries, spec.plot_height));
    frame.finish(&spec, !drawn, &marks)
}

/// A rectangle from `left` over `width` (category coordinates) and from `lo` to `hi`.
fn rect(
    map: &Mapper,
    (left, width): (f64, f64),
    (lo, hi): (f64, f64),
    colour: &str,
    title: &str,
) -> String {
    let (x0, x1) = (map.x(left), map.x(left + width));
    let (y0, y1) = (map.y(lo), map.y(hi));
    format!(
        "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{colour}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{}</title></rect>\n",
        y0.min(y1),
        (x1 - x0).max(0.5),
        (y1 - y0).abs(),
        escape(title)
    )
}
