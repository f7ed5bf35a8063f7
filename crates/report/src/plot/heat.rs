//! A matrix of values on a diverging colour scale centred on 0, e.g. regression per CPU
//! pair.

use super::axis::Axis;
use super::frame::{height_for_rows, Frame, FrameSpec, Mapper, WIDTH};
use super::{escape, numfmt, palette, HeatMap};
use std::collections::BTreeMap;

const MAX_LABELS: usize = 40;
/// Room right of the chart for the colour strip and its labels.
const STRIP_AREA: u32 = 110;
const STRIP_STEPS: usize = 24;

/// Renders `c`: a cell per value, coloured blue (negative) through white (0) to red
/// (positive) on a range symmetric around 0 set by the largest |value|; cells without a
/// value are grey. Each cell's `<title>` holds its categories and value. A cell given
/// twice keeps its last value; out-of-range indices and non-finite values are skipped.
pub fn heat_map(c: &HeatMap) -> String {
    let (nx, ny) = (c.x_categories.len(), c.y_categories.len());
    let cells: BTreeMap<(usize, usize), f64> = c
        .cells
        .iter()
        .filter(|(x, y, v)| *x < nx && *y < ny && v.is_finite())
        .map(|&(x, y, v)| ((x, y), v))
        .collect();
    let max_abs = cells.values().fold(0.0f64, |m, v| m.max(v.abs()));
    let x_axis = Axis::categories(&c.x_categories, false, MAX_LABELS);
    let y_axis = Axis::categories(&c.y_categories, true, MAX_LABELS);
    // No legend: the colour strip on the right explains the colours.
    let spec = FrameSpec {
        x_grid: false,
        y_grid: false,
        plot_height: height_for_rows(ny, 14, 140),
        right: STRIP_AREA,
        ..FrameSpec::new(
            "heatmap",
            &c.title,
            (&c.x_label, &x_axis),
            (&c.y_label, &y_axis),
            &[],
        )
    };
    let frame = Frame::draw(&spec);
    let map = frame.map;
    let (left, top, right, bottom) = map.area();
    let mut marks = format!(
        "<rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>no value</title></rect>\n",
        right - left,
        bottom - top,
        palette::MISSING
    );
    // Crisp edges: anti-aliased neighbours would show hairline seams between cells.
    marks.push_str("<g class=\"cells\" shape-rendering=\"crispEdges\">\n");
    for (&(x, y), &v) in &cells {
        marks.push_str(&cell(c, &map, (x, y), v, max_abs));
    }
    marks.push_str("</g>\n");
    marks.push_str(&strip(&c.value_label, max_abs, top, bottom));
    frame.finish(&spec, cells.is_empty(), &marks)
}

fn cell(c: &HeatMap, map: &Mapper, (x, y): (usize, usize), v: f64, max_abs: f64) -> String {
    let ny = c.y_categories.len() as f64;
    let (x0, x1) = (map.x(x as f64), map.x(x as f64 + 1.0));
    // Row y counts from the top: it spans ny-y-1 .. ny-y on the axis.
    let (y0, y1) = (map.y(ny - y as f64), map.y(ny - y as f64 - 1.0));
    let t = if max_abs > 0.0 { v / max_abs } else { 0.0 };
    let title = format!(
        "{} {}, {} {}: {} {}",
        c.x_label,
        c.x_categories[x],
        c.y_label,
        c.y_categories[y],
        c.value_label,
        numfmt::precise(v)
    );
    format!(
        "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{}\"><title>{}</title></rect>\n",
        y0.min(y1),
        (x1 - x0).abs().max(0.5),
        (y1 - y0).abs().max(0.5),
        palette::diverging(t),
        escape(&title)
    )
}

/// The colour legend: a vertical strip from +max (top, red) through 0 to −max (bottom,
/// blue), labelled at both ends and the middle, with the value label beside it. Stacked
/// rectangles rather than a gradient: gradient ids would clash between inline SVGs.
fn strip(label: &str, max_abs: f64, top: f64, bottom: f64) -> String {
    let x = f64::from(WIDTH - STRIP_AREA) + 16.0;
    let (top, bottom) = (top + 10.0, bottom - 10.0);
    let h = (bottom - top) / STRIP_STEPS as f64;
    let mut out =
        String::from("<g class=\"colour-scale\" font-family=\"sans-serif\" font-size=\"12\">\n");
    for k in 0..STRIP_STEPS {
        let t = 1.0 - 2.0 * (k as f64 + 0.5) / STRIP_STEPS as f64;
        out.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"16\" height=\"{:.2}\" fill=\"{}\"/>\n",
            top + k as f64 * h,
            h + 0.3,
            palette::diverging(t)
        ));
    }
    let (plus, minus) = if max_abs > 0.0 {
        let m = numfmt::short(max_abs);
        (format!("+{m}"), format!("−{m}"))
    } else {
        ("0".to_string(), "0".to_string())
    };
    let labels = [
        (top, plus),
        ((top + bottom) / 2.0, "0".to_string()),
        (bottom, minus),
    ];
    for (y, text) in labels {
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" dy=\"0.35em\">{}</text>\n",
            x + 22.0,
            y,
            escape(&text)
        ));
    }
    let lx = x + 72.0;
    let ly = (top + bottom) / 2.0;
    out.push_str(&format!(
        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"middle\" transform=\"rotate(90 {lx:.1} {ly:.1})\">{}</text>\n",
        escape(label)
    ));
    out.push_str("</g>\n");
    out
}
