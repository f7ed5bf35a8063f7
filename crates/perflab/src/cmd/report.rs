//! `perflab report`: one or more runs as terminal text, Markdown, 72-column mail, JSON,
//! or a self-contained HTML page with the plots.

use perflab_report::full::{build_report, ReportOptions, RunData};

use crate::cli::{Global, ReportArgs, ReportFormat};
use crate::cmd::common;
use crate::exit::input;

pub fn run(g: &Global, a: ReportArgs) -> anyhow::Result<i32> {
    let (stats, buckets) = common::verdict_settings(&a.verdict)?;
    let mut seen = Vec::new();
    for id in &a.runs {
        if seen.contains(id) {
            return Err(input(format!("run {id} is named twice")));
        }
        seen.push(*id);
    }
    let store = common::read_store(g)?;
    let mut runs = Vec::with_capacity(a.runs.len());
    for &id in &a.runs {
        runs.push(RunData {
            info: store.run(id)?,
            ms: store.measurements(id)?,
        });
    }
    let opts = ReportOptions {
        stats,
        metric: a.metric.clone(),
        buckets,
        changes: a.changes,
        figures: a.html.is_some(),
    };
    let report = build_report(&runs, &opts)?;
    if let Some(path) = &a.html {
        let page = report.html();
        std::fs::write(path, &page)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        let figures = page.matches("<figure class=\"plot\"").count();
        eprintln!(
            "report written to {} ({} KiB, {figures} plot{})",
            path.display(),
            page.len().div_ceil(1024),
            if figures == 1 { "" } else { "s" }
        );
    }
    let format = match (a.format, &a.html) {
        (Some(f), _) => Some(f),
        (None, None) => Some(ReportFormat::Text),
        (None, Some(_)) => None,
    };
    match format {
        Some(ReportFormat::Text) => print!("{}", report.text()),
        Some(ReportFormat::Markdown) => print!("{}", report.markdown()),
        Some(ReportFormat::Mail) => print!("{}", report.mail()),
        Some(ReportFormat::Json) => println!("{}", serde_json::to_string_pretty(&report.json)?),
        None => {}
    }
    Ok(0)
}
