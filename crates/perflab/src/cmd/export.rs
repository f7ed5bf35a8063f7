//! `perflab export`: a run's measurements for other tools, as JSON (everything), CSV
//! (one row per measurement and metric) or Go's benchmark format (for `benchstat`).

use std::io::Write;

use perflab_store::{MeasurementRecord, RunId, RunInfo, Store, StoreError};

use crate::cli::{ExportArgs, ExportFormat, Global};
use crate::cmd::common;
use crate::cmd::export_stream::{self, Head};

/// What the JSON document says it is, first, so a reader (`perflab import --parser
/// perflab-json`, a script) knows what it holds before reading on.
pub const FORMAT: &str = "perflab-export";
/// The version every JSON document of perflab carries (docs/export.md lists the fields of
/// each version).
pub use crate::cmd::envelope::FORMAT_VERSION;

pub fn run(g: &Global, a: ExportArgs) -> anyhow::Result<i32> {
    let store = common::read_store(g)?;
    let info = store.run(a.run)?;
    // Measurements are written as the store hands them out, never all held at once.
    // `Send`: the JSON is written on a thread beside the reading (see `export_stream`).
    let out: Box<dyn Write + Send> = match &a.output {
        Some(p) => Box::new(
            std::fs::File::create(p)
                .map_err(|e| crate::exit::input(format!("{}: cannot create: {e}", p.display())))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    // Large writes: a JSON export of 50,000 measurements is hundreds of MB.
    let out = std::io::BufWriter::with_capacity(1 << 20, out);
    match a.format {
        ExportFormat::Json => json(&store, &info, out),
        ExportFormat::Benchstat => benchstat(&store, &info, out),
        ExportFormat::Csv => csv(&store, a.run, out),
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

/// The CSV's columns.
const CSV_HEAD: [&str; 14] = [
    "run",
    "seq",
    "point",
    "variant",
    "rep",
    "params",
    "status",
    "metric",
    "value",
    "unit",
    "started_at",
    "elapsed_s",
    "error",
    // headline (a result) or telemetry (carried the disturbing monitors only)
    "role",
];

/// One row per measurement and metric (one without a metric for a measurement that has
/// none); the telemetry rows are not read at all.
fn csv(store: &Store, run: RunId, out: impl Write) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEAD)?;
    visit(store, run, false, |m| {
        for row in csv_rows(run, &m) {
            w.write_record(&row)?;
        }
        Ok::<(), csv::Error>(())
    })?;
    w.flush()?;
    Ok(())
}

/// The rows of one measurement, in [`CSV_HEAD`]'s columns.
fn csv_rows(run: RunId, m: &MeasurementRecord) -> Vec<Vec<String>> {
    let base = [
        run.to_string(),
        m.seq.to_string(),
        m.point.to_string(),
        m.variant.clone(),
        m.rep.to_string(),
        m.params.describe(),
        m.status.word().to_string(),
    ];
    let tail = [
        m.started_at.to_string(),
        m.elapsed_s.to_string(),
        m.status.message().unwrap_or_default().to_string(),
        m.role.as_str().to_string(),
    ];
    let row = |metric: [String; 3]| [&base[..], &metric, &tail].concat();
    if m.output.metrics.is_empty() {
        return vec![row(Default::default())];
    }
    m.output
        .metrics
        .iter()
        .map(|metric| {
            row([
                metric.name.clone(),
                metric.value.to_string(),
                metric.unit.symbol().to_string(),
            ])
        })
        .collect()
}

/// [`perflab_store::Store::visit_measurements`] (with every record's telemetry rows, or
/// none) with a visitor whose own error (a write that failed) stops the read and comes
/// back as itself.
fn visit<E>(
    store: &Store,
    run: RunId,
    telemetry: bool,
    mut f: impl FnMut(MeasurementRecord) -> Result<(), E>,
) -> anyhow::Result<()>
where
    E: std::error::Error + Send + Sync + 'static,
{
    store
        .visit_measurements(run, &mut |_| telemetry, &mut |m| {
            f(m).map_err(|e| StoreError::Visitor(Box::new(e)))
        })
        .map_err(|e| match e {
            StoreError::Visitor(inner) => anyhow::Error::from_boxed(inner),
            e => e.into(),
        })
}
