//! Curves against a common x axis (size scans, CDFs), with interval bands and markers.

use super::axis::{Axis, Transform};
use super::frame::{Frame, FrameSpec, Mapper};
use super::legend::{self, Entry, Swatch};
use super::{escape, numfmt, palette, Curve, LineChart, RefLine, TickFormat};

/// Legend text for hollow markers.
pub(crate) const FLAGGED: &str = "flagged point";

/// A point the axes can show, in transformed coordinates.
struct Drawable {
    x: f64,
    y: f64,
    /// Transformed band; a low the log axis cannot show sits at the axis bottom.
    band: Option<(Option<f64>, f64)>,
    flagged: bool,
    raw: (f64, f64, Option<(f64, f64)>),
}

/// Renders `c` as a `<figure>` with curves, their bands and markers, and a legend of every
/// curve. Points the axes cannot show (non-finite, ≤ 0 on a log axis) are skipped.
pub fn line_chart(c: &LineChart) -> String {
    line_chart_with(c, &[])
}

/// [`line_chart`] with horizontal reference lines (a link's theoretical bandwidth) across
/// the plot, each in the legend; the y axis reaches them.
pub fn line_chart_with(c: &LineChart, refs: &[RefLine]) -> String {
    let xt = Transform::of(c.x_scale, c.x_format);
    let yt = Transform::of(c.y_scale, TickFormat::Plain);
    let curves: Vec<Vec<Drawable>> = c.curves.iter().map(|k| drawable(k, xt, yt)).collect();
    let x_axis = Axis::fit(
        curves.iter().flatten().map(|p| p.raw.0),
        c.x_scale,
        c.x_format,
        false,
    );
    let refs: Vec<&RefLine> = refs.iter().filter(|r| yt.apply(r.y).is_some()).collect();
    let y_axis = Axis::fit(
        curves
            .iter()
            .flatten()
            .flat_map(|p| {
                let (lo, hi) = p.raw.2.unwrap_or((p.raw.1, p.raw.1));
                [p.raw.1, lo, hi]
            })
            .chain(refs.iter().map(|r| r.y)),
        c.y_scale,
        TickFormat::Plain,
        false,
    );
    let mut entries: Vec<Entry> = c
        .curves
        .iter()
        .enumerate()
        .map(|(i, k)| Entry {
            label: k.name.clone(),
            swatch: Swatch::Line {
                colour: palette::series(i).to_string(),
                dash: palette::dash(i),
            },
        })
        .collect();
    entries.extend(refs.iter().map(|r| Entry {
        label: r.name.clone(),
        swatch: Swatch::Line {
            colour: REF_COLOUR.to_string(),
            dash: Some(REF_DASH),
        },
    }));
    if curves.iter().flatten().any(|p| p.flagged) {
        entries.push(Entry {
            label: FLAGGED.to_string(),
            swatch: Swatch::Hollow,
        });
    }
    let spec = FrameSpec::new(
        "line",
        &c.title,
        (&c.x_label, &x_axis),
        (&c.y_label, &y_axis),
        &entries,
    );
    let frame = Frame::draw(&spec);
    let mut marks = String::new();
    for (i, points) in curves.iter().enumerate() {
        marks.push_str(&bands(points, &frame.map, y_axis.lo, palette::series(i)));
    }
    for (i, (curve, points)) in c.curves.iter().zip(&curves).enumerate() {
        marks.push_str(&line(points, &frame.map, i));
        marks.push_str(&markers(curve, points, &frame.map, i, c.x_format));
    }
    for r in &refs {
        marks.push_str(&reference(r, &frame.map, yt));
    }
    marks.push_str(&legend::render(&entries, spec.plot_height));
    let empty = curves.iter().all(Vec::is_empty);
    frame.finish(&spec, empty, &marks)
}

const REF_COLOUR: &str = "#555555";
const REF_DASH: &str = "8,4";

/// A reference line across the plot area, with its value for hover.
fn reference(r: &RefLine, map: &Mapper, yt: Transform) -> String {
    let Some(y) = yt.apply(r.y) else {
        return String::new();
    };
    let (left, _, right, _) = map.area();
    let y = map.y(y);
    format!(
        "<line class=\"reference\" x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{right:.1}\" y2=\"{y:.1}\" \
         stroke=\"{REF_COLOUR}\" stroke-width=\"1.5\" stroke-dasharray=\"{REF_DASH}\">\
         <title>{}</title></line>\n",
        escape(&format!("{}: {}", r.name, numfmt::precise(r.y)))
    )
}

fn drawable(curve: &Curve, xt: Transform, yt: Transform) -> Vec<Drawable> {
    let mut points: Vec<Drawable> = curve
        .points
        .iter()
        .filter_map(|p| {
            let x = xt.apply(p.x)?;
            let y = yt.apply(p.y)?;
            let band = p
                .band
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
                .and_then(|(lo, hi)| {
                    let (lo, hi) = (lo.min(hi), lo.max(hi));
                    Some(((lo, hi), (yt.apply(lo), yt.apply(hi)?)))
                });
            Some(Drawable {
                x,
                y,
                band: band.map(|(_, t)| t),
                flagged: p.flagged,
                raw: (p.x, p.y, band.map(|(r, _)| r)),
            })
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    points
}

/// One translucent polygon per run of neighbouring points that have a band; a lone
/// banded point gets a vertical bar instead, since a polygon of it would be invisible.
fn bands(points: &[Drawable], map: &Mapper, y_floor: f64, colour: &str) -> String {
    let mut out = String::new();
    for run in points.split(|p| p.band.is_none()) {
        let corners: Vec<(f64, f64, f64)> = run
            .iter()
            .filter_map(|p| {
                let (lo, hi) = p.band?;
                Some((map.x(p.x), map.y(lo.unwrap_or(y_floor)), map.y(hi)))
            })
            .collect();
        match corners.as_slice() {
            [] => {}
            [(x, lo, hi)] => out.push_str(&format!(
                "<line x1=\"{x:.1}\" y1=\"{lo:.1}\" x2=\"{x:.1}\" y2=\"{hi:.1}\" stroke=\"{colour}\" stroke-opacity=\"0.35\" stroke-width=\"6\"/>\n"
            )),
            _ => {
                let highs = corners.iter().map(|(x, _, hi)| format!("{x:.1},{hi:.1}"));
                let lows = corners.iter().rev().map(|(x, lo, _)| format!("{x:.1},{lo:.1}"));
                let pts: Vec<String> = highs.chain(lows).collect();
                out.push_str(&format!(
                    "<polygon class=\"band\" points=\"{}\" fill=\"{colour}\" fill-opacity=\"0.2\" stroke=\"none\"/>\n",
                    pts.join(" ")
                ));
            }
        }
    }
    out
}

fn line(points: &[Drawable], map: &Mapper, i: usize) -> String {
    if points.len() < 2 {
        return String::new();
    }
    let pts: Vec<String> = points
        .iter()
        .map(|p| format!("{:.1},{:.1}", map.x(p.x), map.y(p.y)))
        .collect();
    let dash = palette::dash(i).map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
    format!(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\n",
        pts.join(" "),
        palette::series(i)
    )
}

/// Curves with more points than this are drawn without markers.
const MAX_MARKERS: usize = 40;

fn markers(curve: &Curve, points: &[Drawable], map: &Mapper, i: usize, xf: TickFormat) -> String {
    let colour = palette::series(i);
    let mut out = String::new();
    // A dense curve (a CDF of a hundred quantiles) reads as a line; its markers would
    // only hide it. Flagged points are always drawn.
    let dense = points.len() > MAX_MARKERS;
    for p in points.iter().filter(|p| !dense || p.flagged) {
        let (x, y, band) = p.raw;
        let x_text = match xf {
            TickFormat::Bytes => numfmt::bytes(x),
            TickFormat::Plain => numfmt::precise(x),
        };
        let mut title = format!("{}: x {x_text}, y {}", curve.name, numfmt::precise(y));
        if let Some((lo, hi)) = band {
            title.push_str(&format!(
                " [{} – {}]",
                numfmt::precise(lo),
                numfmt::precise(hi)
            ));
        }
        let style = if p.flagged {
            title.push_str(" (flagged)");
            format!(
                "r=\"4.5\" fill=\"#fff\" stroke=\"{colour}\" stroke-width=\"2\" class=\"flagged\""
            )
        } else {
            format!("r=\"3.5\" fill=\"{colour}\"")
        };
        out.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" {style}><title>{}</title></circle>\n",
            map.x(p.x),
            map.y(p.y),
            escape(&title)
        ));
    }
    out
}
