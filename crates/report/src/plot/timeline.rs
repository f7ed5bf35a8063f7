//! Per-thread activity over time: a lane per thread, a bar per interval coloured by CPU.

use super::axis::Axis;
use super::frame::{height_for_rows, Frame, FrameSpec, Mapper};
use super::legend::{self, Entry, Swatch};
use super::{escape, numfmt, palette, Scale, TickFormat, Timeline, TimelineSegment};
use std::collections::BTreeSet;

/// The y axis description (and `data-y-axis`) of every timeline.
pub const THREAD_AXIS: &str = "thread";
const MAX_LABELS: usize = 40;
/// Share of a lane's height a bar fills.
const BAR: f64 = 0.7;

/// Renders `c`: the first row on top; each segment a bar from start to end coloured by
/// its CPU (grey when unknown), its note in the `<title>`; a legend of every CPU shown.
/// Segments with a non-finite end are skipped; reversed ones are drawn the right way round.
pub fn timeline(c: &Timeline) -> String {
    let names: Vec<String> = c.rows.iter().map(|r| r.name.clone()).collect();
    let y_axis = Axis::categories(&names, true, MAX_LABELS);
    let segments = || {
        c.rows
            .iter()
            .flat_map(|r| r.segments.iter())
            .filter_map(span)
    };
    let x_axis = Axis::fit(
        segments().flat_map(|(a, b)| [a, b]),
        Scale::Linear,
        TickFormat::Plain,
        false,
    );
    let cpus: BTreeSet<Option<u32>> = c
        .rows
        .iter()
        .flat_map(|r| r.segments.iter())
        .filter(|s| span(s).is_some())
        .map(|s| s.cpu)
        .collect();
    // BTreeSet orders None first; the unknown CPU reads better last.
    let entries: Vec<Entry> = cpus
        .iter()
        .filter_map(|c| c.map(|n| (format!("CPU {n}"), palette::cpu(n))))
        .chain(
            cpus.contains(&None)
                .then(|| ("unknown CPU".to_string(), palette::MISSING.to_string())),
        )
        .map(|(label, colour)| Entry {
            label,
            swatch: Swatch::Box { colour },
        })
        .collect();
    let spec = FrameSpec {
        y_grid: false,
        plot_height: height_for_rows(c.rows.len(), 18, 110),
        ..FrameSpec::new(
            "timeline",
            &c.title,
            (&c.x_label, &x_axis),
            (THREAD_AXIS, &y_axis),
            &entries,
        )
    };
    let frame = Frame::draw(&spec);
    let mut marks = String::new();
    let n = c.rows.len();
    for (i, row) in c.rows.iter().enumerate() {
        for s in &row.segments {
            if let Some((a, b)) = span(s) {
                marks.push_str(&bar(&frame.map, n, i, &row.name, s, (a, b)));
            }
        }
    }
    marks.push_str(&legend::render(&entries, spec.plot_height));
    frame.finish(&spec, segments().next().is_none(), &marks)
}

/// (start, end) ordered, or `None` when either is not finite.
fn span(s: &TimelineSegment) -> Option<(f64, f64)> {
    (s.start.is_finite() && s.end.is_finite()).then(|| (s.start.min(s.end), s.start.max(s.end)))
}

fn bar(
    map: &Mapper,
    n: usize,
    i: usize,
    thread: &str,
    s: &TimelineSegment,
    (a, b): (f64, f64),
) -> String {
    let centre = n as f64 - i as f64 - 0.5;
    let (y0, y1) = (map.y(centre + BAR / 2.0), map.y(centre - BAR / 2.0));
    let (x0, x1) = (map.x(a), map.x(b));
    let colour = s
        .cpu
        .map_or_else(|| palette::MISSING.to_string(), palette::cpu);
    let mut title = format!("{thread}: {} – {}", numfmt::precise(a), numfmt::precise(b));
    if !s.note.is_empty() {
        title.push_str(": ");
        title.push_str(&s.note);
    }
    format!(
        "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{colour}\"><title>{}</title></rect>\n",
        y0.min(y1),
        (x1 - x0).max(1.0),
        (y1 - y0).abs(),
        escape(&title)
    )
}
