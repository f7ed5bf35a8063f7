//! The legend below a chart: entries flow left to right in rows, so any number of curves,
//! series or CPUs fits; the figure grows by the rows it needs.

use super::escape;
use super::{CHAR_W, WIDTH};

const ROW: f64 = 20.0;
const LEFT: f64 = 16.0;
const SWATCH: f64 = 22.0;
const GAP: f64 = 18.0;

/// What stands next to a legend label.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Swatch {
    /// A curve: its colour, dash pattern, and a marker.
    Line {
        colour: String,
        dash: Option<&'static str>,
    },
    /// A filled box: bars, CPUs.
    Box { colour: String },
    /// A hollow marker: what flagged points look like.
    Hollow,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub label: String,
    pub swatch: Swatch,
}

impl Entry {
    /// A filled box of `colour` beside `label` (bars, stacked segments, CPUs).
    pub(crate) fn boxed(label: impl Into<String>, colour: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            swatch: Swatch::Box {
                colour: colour.into(),
            },
        }
    }
}

/// Entries with their (x, y) offsets from the legend's top left, and the height used.
fn place(entries: &[Entry]) -> (Vec<(f64, f64)>, f64) {
    let width = f64::from(WIDTH) - 2.0 * LEFT;
    let (mut x, mut y) = (0.0, 0.0);
    let mut at = Vec::with_capacity(entries.len());
    for e in entries {
        let w = SWATCH + 6.0 + e.label.chars().count() as f64 * CHAR_W + GAP;
        if x > 0.0 && x + w > width {
            x = 0.0;
            y += ROW;
        }
        at.push((x, y));
        x += w;
    }
    let height = if entries.is_empty() { 0.0 } else { y + ROW };
    (at, height)
}

/// Pixels the legend needs below the chart.
pub(crate) fn height(entries: &[Entry]) -> u32 {
    let (_, h) = place(entries);
    if h == 0.0 {
        0
    } else {
        (h + 12.0).ceil() as u32
    }
}

/// The legend as an SVG group, placed under a chart `plot_height` tall.
pub(crate) fn render(entries: &[Entry], plot_height: u32) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let (at, _) = place(entries);
    let top = f64::from(plot_height) + 4.0;
    let mut out =
        String::from("<g class=\"legend\" font-family=\"sans-serif\" font-size=\"12\">\n");
    for (e, (dx, dy)) in entries.iter().zip(at) {
        let x = LEFT + dx;
        let mid = top + dy + ROW / 2.0;
        match &e.swatch {
            Swatch::Line { colour, dash } => {
                let dash = dash.map_or(String::new(), |d| format!(" stroke-dasharray=\"{d}\""));
                out.push_str(&format!(
                    "<line x1=\"{x:.1}\" y1=\"{mid:.1}\" x2=\"{:.1}\" y2=\"{mid:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>\
                     <circle cx=\"{:.1}\" cy=\"{mid:.1}\" r=\"3\" fill=\"{colour}\"/>\n",
                    x + SWATCH,
                    x + SWATCH / 2.0,
                ));
            }
            Swatch::Hollow => out.push_str(&format!(
                "<circle cx=\"{:.1}\" cy=\"{mid:.1}\" r=\"4.5\" fill=\"#fff\" stroke=\"#555\" stroke-width=\"2\"/>\n",
                x + SWATCH / 2.0,
            )),
            Swatch::Box { colour } => out.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{colour}\"/>\n",
                x + 5.0,
                mid - 6.0,
            )),
        }
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            x + SWATCH + 6.0,
            mid + 4.0,
            escape(&e.label)
        ));
    }
    out.push_str("</g>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(label: &str) -> Entry {
        Entry {
            label: label.to_string(),
            swatch: Swatch::Box {
                colour: "#000".into(),
            },
        }
    }

    #[test]
    fn many_entries_wrap_into_rows() {
        let one = height(&[entry("a")]);
        let many: Vec<Entry> = (0..64).map(|i| entry(&format!("CPU {i}"))).collect();
        assert!(height(&many) > 3 * one, "{} vs {one}", height(&many));
        assert_eq!(height(&[]), 0);
    }

    #[test]
    fn labels_are_escaped() {
        let svg = render(&[entry("a<b")], 380);
        assert!(svg.contains(">a&lt;b</text>"), "{svg}");
    }
}
