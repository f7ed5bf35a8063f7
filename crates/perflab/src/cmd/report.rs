//! `perflab report`: one or more runs as terminal text, Markdown, 72-column mail, JSON,
//! or a self-contained HTML page with the plots.

use perflab_report::full::{ReportOptions, RunData};
use perflab_report::views::report;
use perflab_report::Format;

use crate::cli::{Global, ReportArgs, ReportFormat};
use crate::cmd::{common, hint};
use crate::exit::input;

pub fn run(g: &Global, a: ReportArgs) -> anyhow::Result<i32> {
    let (stats, buckets) = common::verdict_settings(&a.verdict)?;
    if let Some(path) = a.html.as_deref().filter(|p| !is_stdout(p)) {
        html_dir_exists(path)?;
    }
    let store = common::read_store(g)?;
    let ids = crate::run_ref::resolve_all(&store, &a.runs)?;
    // After resolving: `report 7 last` names run 7 twice when it is the newest.
    let mut seen = Vec::new();
    for (id, named) in ids.iter().zip(&a.runs) {
        if seen.contains(id) {
            return Err(input(match named {
                crate::run_ref::RunRef::Id(_) => format!("run {id} is named twice"),
                other => format!("run {id} is named twice ({other} is run {id})"),
            }));
        }
        seen.push(*id);
    }
    let mut runs = Vec::with_capacity(ids.len());
    for &id in &ids {
        runs.push(RunData {
            info: store.run(id)?,
            ms: common::report_records(&store, id, true)?,
        });
    }
    let opts = ReportOptions {
        stats,
        metric: a.metric.clone(),
        buckets,
        changes: a.changes,
        figures: a.html.is_some(),
        db_flag: hint::db_flag(g),
    };
    emit(&runs, &opts, a.html.as_deref(), a.format, &a.section)?;
    Ok(0)
}

/// Builds the report of `runs` and writes it: the HTML page to `html` when asked (`-` is
/// standard output), and the chosen format on standard output (text when neither is
/// asked).
pub fn emit(
    runs: &[RunData],
    opts: &ReportOptions,
    html: Option<&std::path::Path>,
    format: Option<ReportFormat>,
    sections: &[String],
) -> anyhow::Result<()> {
    perflab_report::section::check_ids(sections, perflab_report::section::REPORT).map_err(input)?;
    let to_stdout = html.is_some_and(is_stdout);
    if to_stdout {
        // One stream cannot carry a page and a table that a reader could split again.
        if let Some(f) = format {
            return Err(input(format!(
                "--html - writes the page to standard output; --format {} cannot go there \
                 too (write the page to a file, or leave out --format)",
                format_name(f)
            )));
        }
    } else if let Some(path) = html {
        html_dir_exists(path)?;
    }
    let view = report::view(runs, opts)?;
    if let Some(path) = html {
        let page = view.render(Format::Html, sections)?;
        if to_stdout {
            crate::stdout_guard::print(&page)?;
        } else {
            // As `export -o`: a file that cannot be created is the user's to fix (exit 2); a
            // write that fails once it exists (a full disk) is a failure (exit 1).
            let mut file = std::fs::File::create(path)
                .map_err(|e| input(format!("--html {}: cannot create: {e}", path.display())))?;
            std::io::Write::write_all(&mut file, page.as_bytes())
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        let figures = page.matches("<figure class=\"plot\"").count();
        eprintln!(
            "report written to {} ({} KiB, {figures} plot{})",
            if to_stdout {
                "standard output".to_string()
            } else {
                path.display().to_string()
            },
            page.len().div_ceil(1024),
            if figures == 1 { "" } else { "s" }
        );
    }
    let text = |f: Format| view.render(f, sections);
    let format = match (format, html) {
        (Some(f), _) => Some(f),
        (None, None) => Some(ReportFormat::Text),
        (None, Some(_)) => None,
    };
    match format {
        Some(ReportFormat::Text) => crate::stdout_guard::print(text(Format::Text)?)?,
        Some(ReportFormat::Markdown) => crate::stdout_guard::print(text(Format::Markdown)?)?,
        Some(ReportFormat::Mail) => crate::stdout_guard::print(text(Format::Mail)?)?,
        Some(ReportFormat::Json) => crate::cmd::envelope::print(&view.json(sections)?)?,
        None => {}
    }
    Ok(())
}

/// `--html -`: the page goes to standard output, as `-` means for a file elsewhere.
fn is_stdout(path: &std::path::Path) -> bool {
    path.as_os_str() == "-"
}

fn format_name(f: ReportFormat) -> &'static str {
    match f {
        ReportFormat::Text => "text",
        ReportFormat::Markdown => "markdown",
        ReportFormat::Mail => "mail",
        ReportFormat::Json => "json",
    }
}

/// The page's directory must exist before any work is done; perflab does not create it,
/// so a typo in the path is an input error that leaves nothing behind.
fn html_dir_exists(path: &std::path::Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => return Ok(()),
    };
    let Some(why) = super::common::missing_dir(dir) else {
        return Ok(());
    };
    Err(input(format!(
        "--html {}: cannot create: {} {why}",
        path.display(),
        dir.display()
    )))
}
