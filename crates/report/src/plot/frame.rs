//! The frame every chart shares: plotters draws the axes, grid, tick labels and axis
//! descriptions; the chart modules draw their marks (with hover `<title>`s, which plotters
//! cannot emit) as SVG text positioned through a [`Mapper`]; this module wraps it all in
//! the `<figure>` the report concatenates.

use super::axis::{Axis, Tick};
use super::escape;
use super::legend::{self, Entry};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use std::ops::Range;

// The figure width and character width live in `plot` itself: the legend lays out by
// them too, and reaches them there rather than through this file.
pub(crate) use super::{CHAR_W, WIDTH};
/// Usual height of the chart part (axes and labels), without legend rows below it.
pub(crate) const PLOT_HEIGHT: u32 = 420;
const TICK_FONT: (&str, u32) = ("sans-serif", 15);
const DESC_FONT: (&str, u32) = ("sans-serif", 16);
const GRID: RGBColor = RGBColor(225, 225, 225);

/// What a chart asks of the frame.
pub(crate) struct FrameSpec<'a> {
    /// `data-plot` of the figure.
    pub kind: &'a str,
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x: &'a Axis,
    pub y: &'a Axis,
    pub x_grid: bool,
    pub y_grid: bool,
    /// Height of the chart part; taller for many rows (threads, heat-map lines).
    pub plot_height: u32,
    /// Pixels kept free right of the chart (the heat map's colour strip).
    pub right: u32,
    /// Pixels kept free below the chart (legend rows).
    pub bottom: u32,
}

impl<'a> FrameSpec<'a> {
    /// The usual frame: grid lines both ways, the standard height, nothing kept free on the
    /// right, and room for the legend's `entries` below. Charts change what differs.
    pub(crate) fn new(
        kind: &'a str,
        title: &'a str,
        (x_label, x): (&'a str, &'a Axis),
        (y_label, y): (&'a str, &'a Axis),
        entries: &[Entry],
    ) -> Self {
        FrameSpec {
            kind,
            title,
            x_label,
            y_label,
            x,
            y,
            x_grid: true,
            y_grid: true,
            plot_height: PLOT_HEIGHT,
            right: 0,
            bottom: legend::height(entries),
        }
    }
}

/// The chart height for one band per row (thread lanes, heat-map lines): `per_row` pixels
/// each plus `extra`, never below the standard height nor above 1000 pixels.
pub(crate) fn height_for_rows(rows: usize, per_row: u32, extra: u32) -> u32 {
    u32::try_from(rows)
        .unwrap_or(u32::MAX)
        .saturating_mul(per_row)
        .saturating_add(extra)
        .clamp(PLOT_HEIGHT, 1000)
}

/// Maps transformed axis coordinates to pixels of the SVG, clamped into the plot area so
/// a stray value can never draw outside it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mapper {
    px: (f64, f64),
    py: (f64, f64),
    ax: (f64, f64),
    ay: (f64, f64),
}

impl Mapper {
    pub(crate) fn x(&self, v: f64) -> f64 {
        lerp(v, self.ax, self.px)
    }

    pub(crate) fn y(&self, v: f64) -> f64 {
        lerp(v, self.ay, self.py)
    }

    /// (left, top, right, bottom) of the plot area in pixels.
    pub(crate) fn area(&self) -> (f64, f64, f64, f64) {
        (self.px.0, self.py.1, self.px.1, self.py.0)
    }
}

fn lerp(v: f64, (lo, hi): (f64, f64), (p0, p1): (f64, f64)) -> f64 {
    let t = (v - lo) / (hi - lo);
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    p0 + t * (p1 - p0)
}

/// The frame drawn, waiting for marks.
pub(crate) struct Frame {
    pub map: Mapper,
    pub width: u32,
    pub height: u32,
    svg: String,
    /// Category labels plotters could not place (rotated), drawn by us.
    rotated: String,
}

impl Frame {
    /// Draws axes, grid, ticks and descriptions. Plotters reports drawing errors rather
    /// than panicking; a failure leaves a frame without a mesh, still a valid SVG.
    pub(crate) fn draw(spec: &FrameSpec) -> Frame {
        let width = WIDTH;
        let plot_height = spec.plot_height.max(200);
        let height = plot_height + spec.bottom;
        let rotate = needs_rotation(spec.x, WIDTH.saturating_sub(spec.right + 120));
        let y_area = label_area_width(&spec.y.ticks);
        let x_area = if rotate {
            (max_chars(&spec.x.ticks) * CHAR_W * 0.72 + 50.0).clamp(60.0, 170.0) as u32
        } else {
            52
        };
        let mut svg = String::new();
        let mut map = None;
        {
            let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            let _ = root.fill(&WHITE);
            let (top, _) = root.split_vertically(plot_height);
            let (area, _) = top.split_horizontally(width.saturating_sub(spec.right));
            let built = ChartBuilder::on(&area)
                .margin(12)
                .margin_right(24)
                .x_label_area_size(x_area)
                .y_label_area_size(y_area)
                .build_cartesian_2d(Ticked::new(spec.x), Ticked::new(spec.y));
            if let Ok(mut chart) = built {
                let lo = chart.backend_coord(&(spec.x.lo, spec.y.lo));
                let hi = chart.backend_coord(&(spec.x.hi, spec.y.hi));
                map = Some(Mapper {
                    px: (f64::from(lo.0), f64::from(hi.0)),
                    py: (f64::from(lo.1), f64::from(hi.1)),
                    ax: (spec.x.lo, spec.x.hi),
                    ay: (spec.y.lo, spec.y.hi),
                });
                let x_fmt = |v: &f64| {
                    if rotate {
                        String::new()
                    } else {
                        label_at(&spec.x.ticks, *v)
                    }
                };
                let y_fmt = |v: &f64| label_at(&spec.y.ticks, *v);
                let mut mesh = chart.configure_mesh();
                mesh.x_label_formatter(&x_fmt)
                    .y_label_formatter(&y_fmt)
                    .x_desc(spec.x_label)
                    .y_desc(spec.y_label)
                    .label_style(TICK_FONT)
                    .axis_desc_style(DESC_FONT)
                    .bold_line_style(GRID)
                    .light_line_style(TRANSPARENT);
                if !spec.x_grid {
                    mesh.disable_x_mesh();
                }
                if !spec.y_grid {
                    mesh.disable_y_mesh();
                }
                let _ = mesh.draw();
            }
            let _ = root.present();
        }
        // Without a chart (plotters refused the layout) marks land in a fixed box.
        let map = map.unwrap_or(Mapper {
            px: (80.0, f64::from(width) - 24.0),
            py: (f64::from(plot_height) - 60.0, 12.0),
            ax: (spec.x.lo, spec.x.hi),
            ay: (spec.y.lo, spec.y.hi),
        });
        let rotated = if rotate {
            rotated_labels(spec.x, &map)
        } else {
            String::new()
        };
        Frame {
            map,
            width,
            height,
            svg,
            rotated,
        }
    }

    /// The finished `<figure>`: frame, then `marks` (SVG elements, already escaped) on top;
    /// with nothing drawn (`empty`), the sentence [`no_plot`] instead of empty axes.
    pub(crate) fn finish(self, spec: &FrameSpec, empty: bool, marks: &str) -> String {
        if empty {
            return no_plot(spec.title, "no data to plot");
        }
        let body = tidy(&self.svg);
        let body = body.trim_end().strip_suffix("</svg>").unwrap_or(&body);
        let body = body.split_once('>').map_or(body, |(_, rest)| rest);
        let caption = escape(spec.title);
        format!(
            "<figure class=\"plot\" data-plot=\"{kind}\" data-x-axis=\"{x}\" data-y-axis=\"{y}\">\n\
             <figcaption>{caption}</figcaption>\n\
             <svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"100%\" \
             style=\"max-width:{w}px;height:auto\" role=\"img\" aria-label=\"{title}\">\n\
             <g class=\"axes\">{body}{rotated}</g>\n<g class=\"marks\">\n{marks}</g>\n</svg>\n</figure>\n",
            kind = escape(spec.kind),
            x = escape(spec.x_label),
            y = escape(spec.y_label),
            w = self.width,
            h = self.height,
            title = escape(spec.title),
            rotated = self.rotated,
        )
    }
}

/// What a chart with nothing to draw is instead of a plot (issue 34: an empty "Idle
/// residency per CPU" on a −1…1 axis told the reader nothing): its title and why, one
/// sentence the page shows where the plot would be. It is no `figure.plot`.
pub(crate) fn no_plot(title: &str, why: &str) -> String {
    format!(
        "<p class=\"no-plot\">{}: {}</p>\n",
        escape(title),
        escape(why)
    )
}

/// A linear f64 range whose only key points are our ticks. Plotters' own
/// `WithKeyPoints` cannot take a label formatter, hence this small coordinate.
struct Ticked {
    lo: f64,
    hi: f64,
    keys: Vec<f64>,
}

impl Ticked {
    fn new(axis: &Axis) -> Ticked {
        Ticked {
            lo: axis.lo,
            hi: axis.hi,
            keys: axis.ticks.iter().map(|t| t.pos).collect(),
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        let t = if t.is_finite() {
            t.clamp(-1.0, 2.0)
        } else {
            0.0
        };
        limit.0 + (f64::from(limit.1 - limit.0) * t).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Light points would be minor grid lines: none, they only add bytes.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

fn label_at(ticks: &[Tick], v: f64) -> String {
    ticks
        .iter()
        .find(|t| t.pos == v)
        .map_or_else(|| super::numfmt::short(v), |t| t.label.clone())
}

fn max_chars(ticks: &[Tick]) -> f64 {
    ticks
        .iter()
        .map(|t| t.label.chars().count())
        .max()
        .unwrap_or(1) as f64
}

fn label_area_width(ticks: &[Tick]) -> u32 {
    (max_chars(ticks) * CHAR_W + 40.0).clamp(50.0, 220.0) as u32
}

/// Whether horizontal x labels would overlap their neighbours.
fn needs_rotation(axis: &Axis, plot_width: u32) -> bool {
    let n = axis.ticks.len().max(1) as f64;
    let room = f64::from(plot_width) / n;
    max_chars(&axis.ticks) * CHAR_W + 6.0 > room
}

fn rotated_labels(axis: &Axis, map: &Mapper) -> String {
    let (_, _, _, bottom) = map.area();
    let y = bottom + 12.0;
    axis.ticks
        .iter()
        .map(|t| {
            let x = map.x(t.pos);
            format!(
                "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"end\" font-family=\"sans-serif\" \
                 font-size=\"12\" fill=\"#000\" transform=\"rotate(-45 {x:.1} {y:.1})\">{}</text>\n",
                escape(&t.label)
            )
        })
        .collect()
}

/// Plotters writes `<text …>\nlabel\n</text>`; the browser then reads the label with
/// newlines around it, which breaks exact text matching, so they go. Empty texts (the
/// x labels we draw ourselves when rotated) go too.
fn tidy(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        out.push_str(&rest[..start]);
        let text = &rest[start..];
        let Some(end) = text.find("</text>") else {
            out.push_str(text);
            return out;
        };
        let element = &text[..end];
        let (open, content) = element.split_once('>').unwrap_or((element, ""));
        let content = content.trim_matches('\n');
        if !content.is_empty() {
            out.push_str(&round_font_size(open));
            out.push('>');
            out.push_str(content);
            out.push_str("</text>");
        }
        rest = &text[end + "</text>".len()..];
        rest = rest.strip_prefix('\n').unwrap_or(rest);
        if !content.is_empty() {
            out.push('\n');
        }
    }
    out.push_str(rest);
    out
}

/// Plotters writes font sizes as size / 1.24 with every digit (12.096774193548388).
fn round_font_size(open: &str) -> String {
    const KEY: &str = "font-size=\"";
    let Some(start) = open.find(KEY).map(|i| i + KEY.len()) else {
        return open.to_string();
    };
    let Some(len) = open[start..].find('"') else {
        return open.to_string();
    };
    match open[start..start + len].parse::<f64>() {
        Ok(size) => format!("{}{size:.1}{}", &open[..start], &open[start + len..]),
        Err(_) => open.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::tidy;

    #[test]
    fn tidy_trims_text_and_drops_empty_ones() {
        let svg =
            "<svg>\n<text x=\"1\" font-size=\"12.096774193548388\">\nabc\n</text>\n<text x=\"2\">\n\n</text>\n<line/>\n</svg>\n";
        assert_eq!(
            tidy(svg),
            "<svg>\n<text x=\"1\" font-size=\"12.1\">abc</text>\n<line/>\n</svg>\n"
        );
    }
}
