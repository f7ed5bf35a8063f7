//! `perflab export`: a run's measurements for other tools, as JSON (everything), CSV
//! (one row per measurement and metric, one column per parameter: `export_csv`) or Go's
//! benchmark format (for `benchstat`).

use std::io::Write;

use perflab_store::{RunInfo, Store};

use crate::cli::{ExportArgs, ExportFormat, Global};
use crate::cmd::common;
use crate::cmd::export_stream::{self, Head};
use crate::cmd::export_visit::visit;

/// What the JSON document says it is, first, so a reader (`perflab import --parser
/// perflab-json`, a script) knows what it holds before reading on.
pub const FORMAT: &str = "perflab-export";
/// The version every JSON document of perflab carries (docs/export.md lists the fields of
/// each version).
pub use crate::cmd::envelope::FORMAT_VERSION;

pub fn run(g: &Global, a: ExportArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    let info = store.run(crate::run_ref::resolve(&store, a.run)?)?;
    // Measurements are written as the store hands them out, never all held at once.
    // `Send`: the JSON is written on a thread beside the reading (see `export_stream`).
    let out: Box<dyn Write + Send> = match &a.output {
        Some(p) => Box::new(
            std::fs::File::create(p)
                .map_err(|e| crate::exit::input(format!("{}: cannot create: {e}", p.display())))?,
        ),
        None => Box::new(crate::stdout_guard::Stdout),
    };
    // Large writes: a JSON export of 50,000 measurements is hundreds of MB.
    let out = std::io::BufWriter::with_capacity(1 << 20, out);
    match a.format {
        ExportFormat::Json => json(&store, &info, out),
        ExportFormat::Benchstat => benchstat(&store, &info, out),
        ExportFormat::Csv => crate::cmd::export_csv::write(&store, &info, out),
    }?;
    Ok(0)
}

/// The whole run: its record, its plan, then every measurement with its telemetry.
fn json(store: &Store, info: &RunInfo, out: impl Write + Send) -> anyhow::Result<()> {
    let plan = store.plan(info.id)?;
    let head = Head {
        format: FORMAT,
        format_version: FORMAT_VERSION,
        command: crate::cmd::envelope::command(),
        run: info,
    };
    export_stream::write(out, &head, &plan, |send| visit(store, info.id, true, send))?;
    Ok(())
}

/// Go's benchmark format. Its header needs every result's parameters and units first; it
/// reads no histograms, threads or telemetry, so only the rest of each record is kept.
fn benchstat(store: &Store, info: &RunInfo, mut out: impl Write) -> anyhow::Result<()> {
    let mut ms = Vec::new();
    visit(store, info.id, false, |m| {
        ms.push(perflab_report::slim::without_detail(m));
        Ok::<(), std::io::Error>(())
    })?;
    let text = perflab_report::benchstat::benchstat_text(info, &ms);
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
