//! Plots as inline SVG for the HTML report, drawn with plotters' SVG backend.
//!
//! Every function takes plain data (no records, no database) and returns one
//! `<figure class="plot" …>` element holding an `<svg>`, so a report can be assembled by
//! concatenation and works offline. The figure carries what a reader (and the browser
//! test) needs to check it: `data-plot` (the kind), `data-x-axis` and `data-y-axis` (the
//! axis descriptions, which are also drawn as text in the SVG), and a `<figcaption>`.
//! Empty or non-finite data never panics: such points are skipped, and a chart with
//! nothing left to draw is a sentence saying so (`<p class="no-plot">`), not empty axes.
//!
//! Tick labels: a log x axis of [`TickFormat::Bytes`] ticks at powers of two (4K, 64K, 2M,
//! 1G; values in bytes), other log axes at decades (or 1-2-5 steps when the data spans
//! under three decades), linear axes at 1-2-5 steps sharing one suffix (0.5M, 1M, 1.5M).
//! Every mark carries a `<title>` with its exact value for hover.

/// Width of every figure's viewBox; the SVG scales to its container up to this width,
/// which is the HTML page's text column (72em less its padding, about 1120 px), so a
/// plot is as wide as the tables beside it and its 15 px labels stay 15 px.
pub(crate) const WIDTH: u32 = 1100;
/// Rough width of one character of 12 px sans-serif, for layout estimates.
pub(crate) const CHAR_W: f64 = 7.0;

mod axis;
mod bars;
mod escape;
mod frame;
mod heat;
mod legend;
mod line;
mod numfmt;
mod palette;
mod percentile;
mod stacked;
mod timeline;

pub use bars::bar_chart;
pub use escape::escape;
pub use heat::heat_map;
pub use line::{line_chart, line_chart_with};
pub use percentile::{percentile_chart, PERCENTILE_AXIS};
pub use stacked::stacked_bars;
pub use timeline::{timeline, THREAD_AXIS};

/// One point of a curve, with an optional interval drawn as a band around it.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    pub x: f64,
    pub y: f64,
    /// (low, high) of the interval at `x`, e.g. the bootstrap interval of the median.
    pub band: Option<(f64, f64)>,
    /// Drawn as a hollow marker: a point the report flags (outlier, hit the repetition cap).
    pub flagged: bool,
}

/// One named curve (a variant, a run, a path).
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub name: String,
    pub points: Vec<CurvePoint>,
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base-10 log; values ≤ 0 are skipped.
    Log,
}

/// How tick labels of an axis are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickFormat {
    /// The number, shortened (1000 → "1k" on log axes).
    Plain,
    /// Values are bytes, written 512, 4K, 64K, 2M, 1G (binary multiples).
    Bytes,
}

/// Curves against a common x axis: size scans (log x, bands), CDFs (log x, y 0..1).
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    /// With the unit, e.g. "buffer size (KiB)".
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// How x tick labels are written.
    pub x_format: TickFormat,
    pub curves: Vec<Curve>,
}

/// A horizontal line across a chart at `y`, named in the legend: a limit the curves are
/// read against, such as a PCIe link's theoretical bandwidth.
#[derive(Clone, Debug, PartialEq)]
pub struct RefLine {
    pub name: String,
    pub y: f64,
}

/// Latency percentiles on a "nines" axis: x = −log10(1 − q), ticks 50%, 90%, 99%, 99.9% …
#[derive(Clone, Debug, PartialEq)]
pub struct PercentileChart {
    pub title: String,
    pub y_label: String,
    /// Per curve, (quantile in 0..1, value); quantiles ≥ 1 are skipped.
    pub curves: Vec<(String, Vec<(f64, f64)>)>,
}

/// Grouped bars: one group per category, one bar per series; optional error bars.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BarSeries {
    pub name: String,
    /// One per category; `None` leaves a gap (not measured), never a zero bar.
    pub values: Vec<Option<f64>>,
    /// (low, high) per category, drawn as an error bar.
    pub errors: Vec<Option<(f64, f64)>>,
}

/// Stacked bars, one stack per category, each beside a measured total: the spans of a
/// round trip (in order, from 0 up) next to the round trip itself.
#[derive(Clone, Debug, PartialEq)]
pub struct StackedBars {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// Bottom to top; `None` adds nothing to a stack (nothing matched).
    pub segments: Vec<StackSegment>,
    /// The measured total beside each stack; `None` draws no bar.
    pub total: StackSegment,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StackSegment {
    pub name: String,
    /// One per category.
    pub values: Vec<Option<f64>>,
}

/// A matrix of values, e.g. regression percent per CPU pair (x = partner, y = anchor).
/// Colour runs through a diverging scale centred on 0; a cell without a value is grey.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// What a cell's colour means, with the unit, e.g. "regression (%)".
    pub value_label: String,
    pub x_categories: Vec<String>,
    pub y_categories: Vec<String>,
    /// (x index, y index, value).
    pub cells: Vec<(usize, usize, f64)>,
}

/// Per-thread activity over time: one row per thread, one bar per interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub title: String,
    /// Time axis description with unit, e.g. "time since first start (ms)".
    pub x_label: String,
    pub rows: Vec<TimelineRow>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimelineRow {
    /// The thread, e.g. "c0t1".
    pub name: String,
    pub segments: Vec<TimelineSegment>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimelineSegment {
    pub start: f64,
    pub end: f64,
    /// Colours the bar; the legend lists every CPU shown. `None` = unknown CPU.
    pub cpu: Option<u32>,
    /// Hover text, e.g. "CPU 0 (97% of samples), CPU 1 (3%)".
    pub note: String,
}
