//! The sections `perflab history` prints: the list of series, the events across series,
//! and each selected series with its change points (a table, and on the HTML page its
//! plot with the change points marked). Every format renders these same sections
//! (perflab_report's one report path); JSON carries them keyed by section id.

use perflab_report::doc::{Block, Table};
use perflab_report::fmt;
use perflab_report::plot::{line_chart, Curve, CurvePoint, LineChart, Scale, TickFormat};
use perflab_report::section::{self, Format, Section, SectionId};
use perflab_report::views::Data;
use serde_json::{json, Map, Value};

use crate::analyse::{Change, SeriesHistory};
use crate::events::Event;
use crate::series::Series;

/// The section ids, in the order they print.
pub const SECTIONS: &[&str] = &["series", "events", "history"];

/// What `perflab history` prints.
pub struct HistoryView {
    sections: Vec<Data>,
}

impl HistoryView {
    /// The list of every series (no selection).
    pub fn listing(all: &[Series], location: &str) -> Self {
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|s| {
                let last = s.points.last();
                vec![
                    s.key.name(),
                    s.points.len().to_string(),
                    last.map_or(String::new(), |p| fmt::value(p.value)),
                    s.unit.symbol().to_string(),
                ]
            })
            .collect();
        let blocks = if all.is_empty() {
            vec![Block::Para(format!("no series in {location}"))]
        } else {
            vec![
                Block::Caption(format!("{} series in {location}", all.len())),
                Block::Table(Table::new(
                    vec!["series".into(), "runs".into(), "last".into(), "unit".into()],
                    rows,
                    vec![0, 3],
                )),
                Block::Note("perflab history SERIES prints one; --study, --point, --variant, --metric and --host select several.".into()),
            ]
        };
        let list: Vec<Value> = all
            .iter()
            .map(|s| json!({"name": s.key.name(), "key": s.key, "unit": s.unit, "better": s.better, "runs": s.points.len()}))
            .collect();
        Self {
            sections: vec![Data {
                id: SectionId::Series,
                title: "Series".into(),
                blocks,
                json: Some(Value::Array(list)),
            }],
        }
    }

    /// The selected series with their change points, and the events they make.
    pub fn histories(histories: &[SeriesHistory], events: &[Event]) -> Self {
        let mut sections = vec![events_section(events)];
        sections.extend(histories.iter().map(history_section));
        Self { sections }
    }

    pub fn render(&self, format: Format) -> String {
        let refs: Vec<&dyn Section> = self.sections.iter().map(|s| s as &dyn Section).collect();
        section::render(&refs, format)
    }

    pub fn json(&self) -> Map<String, Value> {
        let refs: Vec<&dyn Section> = self.sections.iter().map(|s| s as &dyn Section).collect();
        section::json(&refs, &[SectionId::History])
    }
}

fn events_section(events: &[Event]) -> Data {
    let mut blocks = vec![Block::Heading {
        level: 2,
        text: "Events".into(),
    }];
    if events.is_empty() {
        blocks.push(Block::Para("No series moved.".into()));
    } else {
        let rows = events
            .iter()
            .map(|e| {
                vec![
                    e.after.describe(),
                    e.before.describe(),
                    e.host.clone(),
                    e.series.len().to_string(),
                    e.worse.to_string(),
                    e.better.to_string(),
                    e.other.to_string(),
                    if e.kernel_changed {
                        "yes".into()
                    } else {
                        String::new()
                    },
                ]
            })
            .collect();
        blocks.push(Block::Caption(
            "Series that moved at the same run are one event".into(),
        ));
        blocks.push(Block::Table(Table::new(
            [
                "at",
                "after",
                "host",
                "series",
                "worse",
                "better",
                "other",
                "kernel changed",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            vec![0, 1, 2, 7],
        )));
    }
    Data {
        id: SectionId::Events,
        title: "Events".into(),
        blocks,
        json: Some(serde_json::to_value(events).unwrap_or(Value::Null)),
    }
}

fn history_section(h: &SeriesHistory) -> Data {
    let mut blocks = vec![
        Block::Heading {
            level: 2,
            text: h.name.clone(),
        },
        Block::Para(format!(
            "{} runs of {}{}, {} change point{}.",
            h.points.len(),
            h.key.metric,
            unit_suffix(h.unit.symbol()),
            h.changes.len(),
            if h.changes.len() == 1 { "" } else { "s" }
        )),
    ];
    if !h.changes.is_empty() {
        blocks.push(Block::Table(change_table(h)));
        blocks.push(Block::Note(
            "before/after: medians of the run medians between neighbouring change points; change: its interval and verdict as perflab compare decides them.".into(),
        ));
    }
    blocks.push(Block::Table(run_table(h)));
    blocks.push(Block::Figure(plot(h)));
    Data {
        id: SectionId::History,
        title: h.name.clone(),
        blocks,
        json: Some(serde_json::to_value(h).unwrap_or(Value::Null)),
    }
}

fn change_table(h: &SeriesHistory) -> Table {
    let rows = h.changes.iter().map(|c| change_row(c, h)).collect();
    Table::new(
        [
            "last before",
            "first after",
            "runs",
            "before",
            "after",
            "change",
            "interval",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        vec![0, 1, 7],
    )
}

fn change_row(c: &Change, h: &SeriesHistory) -> Vec<String> {
    let _ = h;
    vec![
        c.before.describe(),
        c.after.describe(),
        format!("{}+{}", c.runs_before, c.runs_after),
        fmt::value(c.median_before),
        fmt::value(c.median_after),
        c.change_pct.map_or("-".into(), fmt::pct),
        c.change_ci_pct.map_or("-".into(), fmt::pct_ci),
        c.verdict.symbol().to_string(),
    ]
}

fn run_table(h: &SeriesHistory) -> Table {
    let starts: Vec<usize> = h.changes.iter().map(|c| c.index).collect();
    let rows = h
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            vec![
                p.run.to_string(),
                fmt::utc(p.created_at),
                p.label.clone().unwrap_or_default(),
                p.kernel.clone().unwrap_or_default(),
                fmt::value(p.value),
                if starts.contains(&i) {
                    "<- change".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    Table::new(
        ["run", "created (UTC)", "label", "kernel", "median", ""]
            .map(String::from)
            .to_vec(),
        rows,
        vec![1, 2, 3, 5],
    )
}

/// The run medians in run order, the first run after each change point drawn hollow.
fn plot(h: &SeriesHistory) -> String {
    let starts: Vec<usize> = h.changes.iter().map(|c| c.index).collect();
    let points = h
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| CurvePoint {
            x: (i + 1) as f64,
            y: p.value,
            band: None,
            flagged: starts.contains(&i),
        })
        .collect();
    line_chart(&LineChart {
        title: format!("{} (hollow: first run after a change point)", h.name),
        x_label: "run, oldest first".into(),
        y_label: format!("{}{}", h.key.metric, unit_suffix(h.unit.symbol())),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x_format: TickFormat::Plain,
        curves: vec![Curve {
            name: h.key.variant.clone(),
            points,
        }],
    })
}

fn unit_suffix(symbol: &str) -> String {
    if symbol.is_empty() {
        String::new()
    } else {
        format!(" ({symbol})")
    }
}
