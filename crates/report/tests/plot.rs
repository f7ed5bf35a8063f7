//! The SVG plots: axis descriptions, ticks and legends are present as text, names are
//! escaped, degenerate data never panics, and output is one well-formed figure.
//!
//! `PERFLAB_PLOT_DUMP=dir cargo test -p perflab-report --test main plot::` writes each sample
//! figure to `dir` for a look in a browser.

use perflab_report::plot::*;
use proptest::prelude::*;

fn point(x: f64, y: f64) -> CurvePoint {
    CurvePoint {
        x,
        y,
        band: Some((y * 0.95, y * 1.05)),
        flagged: false,
    }
}

fn scan() -> LineChart {
    let curve = |name: &str, k: f64| Curve {
        name: name.to_string(),
        points: (0..20)
            .map(|i| {
                let x = 32768.0 * 2f64.powi(i);
                let mut p = point(x, k * 1000.0 * (1.0 + (i as f64 / 4.0).sin()));
                p.flagged = i == 7;
                p
            })
            .collect(),
    };
    LineChart {
        title: "bandwidth by buffer size".into(),
        x_label: "buffer size (bytes)".into(),
        y_label: "bandwidth (MiB/s)".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        x_format: TickFormat::Bytes,
        curves: vec![
            curve("4K pages", 1.0),
            curve("2M pages", 1.3),
            curve("old", 0.8),
            curve("new", 1.1),
        ],
    }
}

fn percentiles() -> PercentileChart {
    let curve = |name: &str, k: f64| {
        let points = [0.5, 0.9, 0.99, 0.999, 0.9999]
            .iter()
            .map(|&q: &f64| (q, k * (1.0 + 10.0 * q.powi(8))))
            .collect();
        (name.to_string(), points)
    };
    PercentileChart {
        title: "round-trip latency".into(),
        y_label: "latency (µs)".into(),
        curves: vec![curve("veth", 20.0), curve("tap", 35.0)],
    }
}

fn bars(n: usize) -> BarChart {
    BarChart {
        title: "wakeup latency per CPU pair".into(),
        x_label: "CPU pair".into(),
        y_label: "latency (µs)".into(),
        categories: (0..n).map(|i| format!("{}-{}", i / 8, i % 8)).collect(),
        series: vec![
            BarSeries {
                name: "snooze only".into(),
                values: (0..n).map(|i| Some(3.0 + (i % 5) as f64)).collect(),
                errors: (0..n)
                    .map(|i| Some((2.5 + (i % 5) as f64, 3.5 + (i % 5) as f64)))
                    .collect(),
            },
            BarSeries {
                name: "all idle states".into(),
                values: (0..n)
                    .map(|i| (i % 7 != 3).then_some(6.0 + (i % 3) as f64))
                    .collect(),
                errors: vec![],
            },
        ],
    }
}

fn heat() -> HeatMap {
    let cpus: Vec<String> = (0..8).map(|i| format!("cpu{i}")).collect();
    HeatMap {
        title: "regression per CPU pair".into(),
        x_label: "partner CPU".into(),
        y_label: "anchor CPU".into(),
        value_label: "regression (%)".into(),
        x_categories: cpus.clone(),
        y_categories: cpus,
        cells: (0..8)
            .flat_map(|a| (0..8).map(move |b| (a, b)))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a, b, (a as f64 - b as f64) * 3.5))
            .collect(),
    }
}

fn threads() -> Timeline {
    Timeline {
        title: "threads of one transfer".into(),
        x_label: "time since first start (ms)".into(),
        rows: (0..4)
            .map(|t| TimelineRow {
                name: format!("c0t{t}"),
                segments: (0..3)
                    .map(|k| TimelineSegment {
                        start: k as f64 * 10.0 + t as f64,
                        end: k as f64 * 10.0 + t as f64 + 8.0,
                        cpu: if k == 2 && t == 3 {
                            None
                        } else {
                            Some((t + k) % 3)
                        },
                        note: format!("CPU {} (97% of samples)", (t + k) % 3),
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn dump(name: &str, svg: &str) {
    if let Ok(dir) = std::env::var("PERFLAB_PLOT_DUMP") {
        let page = format!(
            "<!doctype html><meta charset=utf-8><body style=\"max-width:800px\">{svg}</body>"
        );
        std::fs::write(format!("{dir}/{name}.html"), page).expect("dump dir writable");
        let start = svg.find("<svg").expect("svg");
        let end = svg.rfind("</svg>").expect("svg end") + "</svg>".len();
        std::fs::write(format!("{dir}/{name}.svg"), &svg[start..end]).expect("dump dir writable");
    }
}

/// Text content of every `<text>` element, unescaped the way a browser reads it.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let (_, rest) = t.split_once('>')?;
            let (content, _) = rest.split_once("</text>")?;
            Some(unescape(content))
        })
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn attr(figure: &str, name: &str) -> String {
    let key = format!("{name}=\"");
    let start = figure.find(&key).expect("attribute") + key.len();
    let end = figure[start..].find('"').expect("closing quote") + start;
    unescape(&figure[start..end])
}

/// One figure, one balanced svg, no external references, axis descriptions as text; or,
/// for a chart with nothing to draw, one sentence and no plot.
fn assert_well_formed(figure: &str) {
    if figure.starts_with("<p class=\"no-plot\">") {
        assert!(
            !figure.contains("<svg") && !figure.contains("<figure"),
            "{figure}"
        );
        assert_eq!(figure.matches("</p>").count(), 1, "{figure}");
        return;
    }
    assert!(
        figure.starts_with("<figure class=\"plot\" data-plot=\""),
        "{figure}"
    );
    assert_eq!(figure.matches("<figure").count(), 1);
    assert_eq!(figure.matches("</figure>").count(), 1);
    assert_eq!(figure.matches("<figcaption>").count(), 1);
    assert_eq!(figure.matches("<svg").count(), 1);
    assert_eq!(figure.matches("</svg>").count(), 1);
    assert!(figure.contains("viewBox=\"0 0 "));
    assert!(figure.contains("width=\"100%\""));
    assert_eq!(
        figure.matches("http").count(),
        figure.matches("http://www.w3.org/2000/svg").count(),
        "external reference"
    );
    for banned in ["<image", "xlink", "url(", "@import", "NaN", "inf\""] {
        assert!(!figure.contains(banned), "{banned} in {figure}");
    }
    // Balanced elements that carry content.
    for tag in ["text", "title", "g"] {
        let open = figure.matches(&format!("<{tag}>")).count()
            + figure.matches(&format!("<{tag} ")).count();
        let close = figure.matches(&format!("</{tag}>")).count();
        assert_eq!(open, close, "<{tag}> unbalanced");
    }
    let texts = texts(figure);
    for axis in ["data-x-axis", "data-y-axis"] {
        let label = attr(figure, axis);
        assert!(
            texts.contains(&label),
            "{axis} {label:?} not drawn in {texts:?}"
        );
    }
}

fn assert_texts(figure: &str, wanted: &[&str]) {
    let texts = texts(figure);
    for w in wanted {
        assert!(texts.iter().any(|t| t == w), "{w:?} not among {texts:?}");
    }
}

#[test]
fn scan_chart_has_byte_ticks_bands_legend_and_stays_small() {
    let svg = line_chart(&scan());
    dump("scan", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("data-plot=\"line\""));
    assert_texts(
        &svg,
        &[
            "buffer size (bytes)",
            "bandwidth (MiB/s)",
            "64K",
            "1M",
            "1G",
            "4K pages",
            "2M pages",
            "old",
            "new",
            "flagged point",
        ],
    );
    assert_eq!(svg.matches("class=\"band\"").count(), 4);
    assert_eq!(svg.matches("class=\"flagged\"").count(), 4);
    assert!(svg.len() < 100_000, "{} bytes", svg.len());
    assert!(!svg.contains("no data to plot"));
}

#[test]
fn log_y_and_plain_x_use_decades() {
    let mut c = scan();
    c.x_format = TickFormat::Plain;
    c.y_scale = Scale::Log;
    c.curves[0].points[0].y = 1.0;
    let svg = line_chart(&c);
    assert_well_formed(&svg);
    assert_texts(&svg, &["1", "10", "100", "1k", "10M"]);
}

#[test]
fn cdf_on_linear_axes() {
    let c = LineChart {
        title: "CDF".into(),
        x_label: "latency (µs)".into(),
        y_label: "fraction".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x_format: TickFormat::Plain,
        curves: vec![Curve {
            name: "a".into(),
            points: (0..=10)
                .map(|i| CurvePoint {
                    x: 10.0 + i as f64,
                    y: i as f64 / 10.0,
                    band: None,
                    flagged: false,
                })
                .collect(),
        }],
    };
    let svg = line_chart(&c);
    assert_well_formed(&svg);
    assert_texts(&svg, &["0", "0.2", "1", "10", "20", "a"]);
    assert!(!svg.contains("class=\"band\""));
}

#[test]
fn percentile_chart_has_nines_axis() {
    let svg = percentile_chart(&percentiles());
    dump("percentile", &svg);
    assert_well_formed(&svg);
    assert_eq!(attr(&svg, "data-x-axis"), "percentile");
    assert_texts(
        &svg,
        &[
            "50%",
            "90%",
            "99%",
            "99.9%",
            "99.99%",
            "latency (µs)",
            "veth",
            "tap",
        ],
    );
}

#[test]
fn percentile_chart_goes_log_when_the_tail_spans_decades() {
    let c = PercentileChart {
        title: "tail".into(),
        y_label: "latency (ns)".into(),
        curves: vec![(
            "x".into(),
            vec![(0.5, 100.0), (0.99, 1000.0), (0.9999, 1_000_000.0)],
        )],
    };
    let svg = percentile_chart(&c);
    assert_well_formed(&svg);
    assert_texts(&svg, &["100", "1k", "10k", "1M"]);
}

#[test]
fn bar_chart_groups_series_and_leaves_gaps() {
    let svg = bar_chart(&bars(8));
    dump("bars", &svg);
    assert_well_formed(&svg);
    assert_texts(
        &svg,
        &[
            "CPU pair",
            "latency (µs)",
            "0-0",
            "0-7",
            "snooze only",
            "all idle states",
        ],
    );
    // 8 + 7 bars (one None), 8 error bars.
    assert_eq!(
        svg.matches("<rect x=").count() - legend_boxes(&svg),
        15 + background(&svg)
    );
    assert_eq!(svg.matches("<path d=\"M").count(), 8);
}

fn legend_boxes(svg: &str) -> usize {
    svg.matches("width=\"12\" height=\"12\"").count()
}

fn background(svg: &str) -> usize {
    svg.matches("<rect x=\"0\" y=\"0\"").count()
}

fn stacked() -> StackedBars {
    let seg = |name: &str, v: [Option<f64>; 2]| StackSegment {
        name: name.into(),
        values: v.to_vec(),
    };
    StackedBars {
        title: "where the time goes on veth".into(),
        x_label: "load".into(),
        y_label: "µs (p50)".into(),
        categories: vec!["no load".into(), "3 streams".into()],
        segments: vec![
            seg("(a) irq", [Some(1.5), Some(2.0)]),
            seg("(b) never", [None, None]),
            seg("(c) wake", [Some(4.0), Some(f64::NAN)]),
        ],
        total: seg("round trip", [Some(20.0), None]),
    }
}

#[test]
fn stacked_bars_stack_spans_beside_the_total() {
    let svg = stacked_bars(&stacked());
    dump("stacked", &svg);
    assert_well_formed(&svg);
    assert!(svg.contains("data-plot=\"stacked\""));
    assert_texts(
        &svg,
        &["load", "µs (p50)", "no load", "3 streams", "round trip"],
    );
    // Segments with a finite value (3), and one total: no bar for None or NaN.
    assert_eq!(
        svg.matches("<rect x=").count() - legend_boxes(&svg),
        4 + background(&svg)
    );
    assert!(
        svg.contains("spans: 5.5; not covered by a span: 14.5"),
        "{svg}"
    );
    let mut empty = stacked();
    empty.segments.clear();
    empty.total.values = vec![None, None];
    let e = stacked_bars(&empty);
    assert_well_formed(&e);
    assert!(e.contains("no data to plot"));
}

#[test]
fn many_categories_are_thinned_and_rotated() {
    let svg = bar_chart(&bars(1000));
    dump("bars1000", &svg);
    assert_well_formed(&svg);
    let rotated = svg.matches("rotate(-45").count();
    assert!((20..=40).contains(&rotated), "{rotated} rotated labels");
    assert!(svg.len() < 600_000, "{} bytes", svg.len());
    let svg64 = bar_chart(&bars(64));
    dump("bars64", &svg64);
    assert_well_formed(&svg64);
    assert_texts(&svg64, &["0-0", "7-6"]);
}

#[test]
fn histogram_is_one_series() {
    let c = BarChart {
        title: "regression distribution".into(),
        x_label: "regression bucket".into(),
        y_label: "CPU pairs".into(),
        categories: ["< -5%", "-5..0%", "0..5%", "5..10%", "> 10%"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        series: vec![BarSeries {
            name: "pairs".into(),
            values: vec![Some(1.0), Some(10.0), Some(30.0), Some(12.0), Some(3.0)],
            errors: vec![],
        }],
    };
    let svg = bar_chart(&c);
    dump("histogram", &svg);
    assert_well_formed(&svg);
    assert_texts(&svg, &["< -5%", "> 10%", "pairs", "0", "30"]);
}

#[test]
fn heat_map_colours_and_labels_its_scale() {
    let svg = heat_map(&heat());
    dump("heat", &svg);
    assert_well_formed(&svg);
    assert_texts(
        &svg,
        &[
            "partner CPU",
            "anchor CPU",
            "cpu0",
            "cpu7",
            "regression (%)",
            "+24.5",
            "0",
            "−24.5",
        ],
    );
    // Extremes at both ends of the scale, the diagonal left grey.
    assert!(svg.contains("fill=\"#2166ac\""));
    assert!(svg.contains("fill=\"#b2182b\""));
    assert!(svg.contains("fill=\"#d0d0d0\""));
    assert!(svg.contains("<title>partner CPU cpu7, anchor CPU cpu0: regression (%) 24.5</title>"));
    assert_eq!(svg.matches("<title>partner CPU").count(), 56);
}

#[test]
fn a_64_cpu_pair_map_stays_under_a_megabyte() {
    let cpus: Vec<String> = (0..64).map(|i| i.to_string()).collect();
    let h = HeatMap {
        title: "pairs".into(),
        x_label: "partner CPU (cpu_b)".into(),
        y_label: "anchor CPU (cpu_a)".into(),
        value_label: "regression (%)".into(),
        x_categories: cpus.clone(),
        y_categories: cpus,
        cells: (0..64)
            .flat_map(|a| (0..64).map(move |b| (a, b, (a * 64 + b) as f64 / 97.0 - 20.0)))
            .collect(),
    };
    let svg = heat_map(&h);
    dump("heat64", &svg);
    assert_well_formed(&svg);
    assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
}

#[test]
fn timeline_has_lanes_cpu_legend_and_notes() {
    let svg = timeline(&threads());
    dump("timeline", &svg);
    assert_well_formed(&svg);
    assert_eq!(attr(&svg, "data-y-axis"), "thread");
    assert_texts(
        &svg,
        &[
            "thread",
            "time since first start (ms)",
            "c0t0",
            "c0t3",
            "CPU 0",
            "CPU 2",
            "unknown CPU",
        ],
    );
    assert!(svg.contains("CPU 1 (97% of samples)</title>"));
    // The unknown CPU is the last legend entry.
    let legend = &svg[svg.find("class=\"legend\"").expect("legend")..];
    assert!(legend.find("CPU 2").expect("cpu 2") < legend.find("unknown CPU").expect("unknown"));
}

#[test]
fn names_are_escaped_everywhere() {
    let evil = "<b>&\"x'</b>";
    let mut c = scan();
    c.title = evil.into();
    c.x_label = evil.into();
    c.curves[0].name = evil.into();
    let svg = line_chart(&c);
    assert!(!svg.contains("<b>"), "{svg}");
    assert!(svg.contains("&lt;b&gt;&amp;&quot;x"));
    assert_well_formed(&svg);
    assert_texts(&svg, &[evil]);

    let mut b = bars(3);
    b.series[0].name = evil.into();
    b.categories[0] = evil.into();
    let svg = bar_chart(&b);
    assert!(!svg.contains("<b>"));
    assert_texts(&svg, &[evil]);

    let mut h = heat();
    h.value_label = evil.into();
    h.y_label = evil.into();
    let svg = heat_map(&h);
    assert!(!svg.contains("<b>"));
    assert_well_formed(&svg);

    let mut t = threads();
    t.rows[0].segments[0].note = evil.into();
    t.rows[0].name = evil.into();
    let svg = timeline(&t);
    assert!(!svg.contains("<b>"));
    assert_well_formed(&svg);
}

/// Issue 34: a chart with nothing to draw is a sentence, never empty axes (an empty "Idle
/// residency per CPU" on a −1…1 axis told the reader nothing).
#[test]
fn empty_charts_are_a_sentence_not_a_plot() {
    let mut c = scan();
    c.curves.iter_mut().for_each(|k| k.points.clear());
    let svg = line_chart(&c);
    assert_well_formed(&svg);
    assert_eq!(
        svg,
        "<p class=\"no-plot\">bandwidth by buffer size: no data to plot</p>\n"
    );

    let p = percentile_chart(&PercentileChart {
        title: "p".into(),
        y_label: "y".into(),
        curves: vec![],
    });
    assert_well_formed(&p);
    assert!(p.contains("no data to plot"));

    let b = bar_chart(&BarChart {
        title: "b".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        categories: vec![],
        series: vec![],
    });
    assert_well_formed(&b);
    assert!(b.contains("no data to plot"));

    let mut h = heat();
    h.cells.clear();
    assert!(heat_map(&h).contains("no data to plot"));
    let mut t = threads();
    t.rows.iter_mut().for_each(|r| r.segments.clear());
    assert!(timeline(&t).contains("no data to plot"));

    // Bars that are all 0 (no idle residency on any CPU in either variant) say so.
    let mut zero = bars(3);
    for s in &mut zero.series {
        s.values.iter_mut().for_each(|v| *v = v.map(|_| 0.0));
        s.errors.iter_mut().for_each(|e| *e = None);
    }
    let z = bar_chart(&zero);
    assert!(
        z.starts_with("<p class=\"no-plot\">") && z.contains("every value is 0"),
        "{z}"
    );
}

/// Issue 34: one interval of -89 %..+3000 % among bars of about ±20 % stretched the axis
/// until the other bars were slivers. It is cut at the axis with an arrow, and the value
/// it reached is written beside it and in the caption.
#[test]
fn one_huge_interval_is_cut_at_the_axis_and_its_value_printed() {
    let c = BarChart {
        title: "regression per pair".into(),
        x_label: "pair".into(),
        y_label: "regression (%)".into(),
        categories: vec!["0-1".into(), "0-2".into(), "0-3".into()],
        series: vec![BarSeries {
            name: "b vs a".into(),
            values: vec![Some(12.0), Some(-8.0), Some(20.0)],
            errors: vec![
                Some((5.0, 19.0)),
                Some((-15.0, -1.0)),
                Some((-89.0, 3000.0)),
            ],
        }],
    };
    let svg = bar_chart(&c);
    assert_well_formed(&svg);
    assert!(
        svg.contains("0-3 up to 3000"),
        "the caption names the cut: {svg}"
    );
    assert!(svg.contains("0-3 down to -89"), "{svg}");
    assert!(
        texts(&svg).iter().any(|t| t == "3000"),
        "the value is drawn"
    );
    // The axis stops near the bars (20 + 2 x 28), far below 3000: no tick reaches 100.
    let ticks: Vec<f64> = texts(&svg)
        .iter()
        .filter_map(|t| t.parse().ok())
        .filter(|t| ![3000.0, -89.0].contains(t))
        .collect();
    assert!(
        !ticks.is_empty() && ticks.iter().all(|t| *t < 100.0),
        "{ticks:?}"
    );
    // An ordinary interval is not cut.
    assert!(!svg.contains("0-1 up to"), "{svg}");
}

#[test]
fn degenerate_values_render() {
    let single = |x: f64, y: f64| LineChart {
        curves: vec![Curve {
            name: "one".into(),
            points: vec![CurvePoint {
                x,
                y,
                band: Some((f64::NAN, y)),
                flagged: true,
            }],
        }],
        ..scan()
    };
    for (x, y) in [
        (4096.0, 5.0),
        (0.0, 5.0),
        (-1.0, -1.0),
        (f64::NAN, f64::INFINITY),
    ] {
        assert_well_formed(&line_chart(&single(x, y)));
    }
    let mut flat = scan();
    flat.curves
        .iter_mut()
        .flat_map(|k| k.points.iter_mut())
        .for_each(|p| p.y = 7.0);
    assert_well_formed(&line_chart(&flat));

    let mut b = bars(3);
    b.series[0].values = vec![Some(f64::NAN), Some(-2.0), None, Some(1.0)];
    b.series[0].errors = vec![Some((f64::INFINITY, 1.0))];
    assert_well_formed(&bar_chart(&b));

    let mut h = heat();
    h.cells = vec![(0, 0, 0.0), (99, 0, 1.0), (1, 1, f64::NAN)];
    let svg = heat_map(&h);
    assert_well_formed(&svg);
    assert!(svg.contains(">0</text>"));
}

#[test]
fn equal_input_gives_equal_output() {
    assert_eq!(line_chart(&scan()), line_chart(&scan()));
    assert_eq!(heat_map(&heat()), heat_map(&heat()));
    assert_eq!(timeline(&threads()), timeline(&threads()));
}

#[test]
fn small_line_chart_snapshot() {
    let c = LineChart {
        title: "tiny".into(),
        x_label: "size (bytes)".into(),
        y_label: "MiB/s".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        x_format: TickFormat::Bytes,
        curves: vec![Curve {
            name: "a".into(),
            points: vec![point(4096.0, 100.0), point(65536.0, 300.0)],
        }],
    };
    insta::assert_snapshot!(line_chart(&c));
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e6..1e9f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => Just(f64::MAX),
        1 => Just(f64::MIN_POSITIVE),
    ]
}

fn curve_point() -> impl Strategy<Value = CurvePoint> {
    (
        value(),
        value(),
        proptest::option::of((value(), value())),
        any::<bool>(),
    )
        .prop_map(|(x, y, band, flagged)| CurvePoint {
            x,
            y,
            band,
            flagged,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_curves_render(
        curves in proptest::collection::vec(proptest::collection::vec(curve_point(), 0..12), 0..4),
        log_x in any::<bool>(),
        log_y in any::<bool>(),
        bytes in any::<bool>(),
    ) {
        let c = LineChart {
            title: "random".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale: if log_x { Scale::Log } else { Scale::Linear },
            y_scale: if log_y { Scale::Log } else { Scale::Linear },
            x_format: if bytes { TickFormat::Bytes } else { TickFormat::Plain },
            curves: curves
                .into_iter()
                .enumerate()
                .map(|(i, points)| Curve { name: format!("c{i}"), points })
                .collect(),
        };
        let svg = line_chart(&c);
        assert_well_formed(&svg);
        prop_assert!(svg.starts_with("<p class=\"no-plot\">") || texts(&svg).len() >= 6);
    }

    #[test]
    fn random_cells_render(
        nx in 0usize..12,
        ny in 0usize..12,
        cells in proptest::collection::vec((0usize..15, 0usize..15, value()), 0..80),
    ) {
        let h = HeatMap {
            title: "h".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            value_label: "v".into(),
            x_categories: (0..nx).map(|i| format!("x{i}")).collect(),
            y_categories: (0..ny).map(|i| format!("y{i}")).collect(),
            cells,
        };
        assert_well_formed(&heat_map(&h));
    }

    #[test]
    fn random_percentiles_and_segments_render(
        points in proptest::collection::vec((value(), value()), 0..30),
        segments in proptest::collection::vec((value(), value(), proptest::option::of(0u32..200)), 0..30),
    ) {
        let p = PercentileChart {
            title: "p".into(),
            y_label: "y".into(),
            curves: vec![("a".into(), points.clone())],
        };
        assert_well_formed(&percentile_chart(&p));
        let t = Timeline {
            title: "t".into(),
            x_label: "x".into(),
            rows: vec![TimelineRow {
                name: "r".into(),
                segments: segments
                    .into_iter()
                    .map(|(start, end, cpu)| TimelineSegment { start, end, cpu, note: String::new() })
                    .collect(),
            }],
        };
        assert_well_formed(&timeline(&t));
        let b = BarChart {
            title: "b".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            categories: (0..points.len()).map(|i| i.to_string()).collect(),
            series: vec![BarSeries {
                name: "s".into(),
                values: points.iter().map(|p| Some(p.0)).collect(),
                errors: points.iter().map(|p| Some((p.0, p.1))).collect(),
            }],
        };
        assert_well_formed(&bar_chart(&b));
    }
}
