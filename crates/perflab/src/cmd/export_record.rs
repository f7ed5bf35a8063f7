//! A measurement as the JSON export writes it (format_version 2): the stored record's
//! own fields, in its order and under its names, except two lists that are most of a
//! measurement. Each histogram's HDR encoding is one base64 string instead of an array
//! of byte values (the array made a 50,000-measurement export 2.5 GB, five times what
//! base64 takes), and each telemetry row is an array of its fields in the order the
//! head's `telemetry_columns` names ([`TELEMETRY_COLUMNS`]), not an object repeating
//! their names: 59 rows a measurement on a 2-CPU machine, hundreds on a big one, and
//! their names were a quarter of the export. Records read either form of both back
//! (`perflab_core::serde_base64`; serde reads a struct from an array of its fields in
//! order), so `import` takes both versions.
//!
//! The record is taken apart field by field, with no `..`: a field added to
//! `MeasurementRecord`, `WorkloadOutput` or `HistogramData` does not compile here until
//! the export writes it too.

use perflab_core::{
    AboveRange, HistogramData, Metric, Params, TelemetryRow, ThreadRecord, Unit, WorkloadOutput,
};
use perflab_store::{MeasurementRecord, MeasurementStatus, Role};
use serde::Serialize;

/// The fields of a telemetry row in the order each row lists them: `TelemetryRow`'s own
/// order, which is how serde reads a row written as an array back.
pub const TELEMETRY_COLUMNS: [&str; 6] = ["source", "key", "label", "cpu", "value", "unit"];

#[derive(Serialize)]
pub struct ExportedMeasurement<'a> {
    seq: u32,
    point: u32,
    params: &'a Params,
    variant: &'a str,
    rep: u32,
    status: &'a MeasurementStatus,
    started_at: f64,
    elapsed_s: f64,
    output: Output<'a>,
    telemetry: Vec<Row<'a>>,
    role: Role,
    monitors: &'a [String],
}

#[derive(Serialize)]
struct Output<'a> {
    metrics: &'a [Metric],
    histograms: Vec<Histogram<'a>>,
    threads: &'a [ThreadRecord],
    notes: &'a [String],
}

/// A telemetry row as the array of its fields, in [`TELEMETRY_COLUMNS`]' order.
#[derive(Serialize)]
struct Row<'a>(&'a str, &'a str, &'a str, Option<u32>, f64, Unit);

impl<'a> Row<'a> {
    fn new(t: &'a TelemetryRow) -> Self {
        let TelemetryRow {
            source,
            key,
            label,
            cpu,
            value,
            unit,
        } = t;
        Row(source, key, label, *cpu, *value, *unit)
    }
}

/// `HistogramData` with its bytes as base64; its attributes as there.
#[derive(Serialize)]
struct Histogram<'a> {
    name: &'a str,
    unit: Unit,
    count: u64,
    min: f64,
    mean: f64,
    max: f64,
    stddev: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    p9999: f64,
    #[serde(
        skip_serializing_if = "<[u8]>::is_empty",
        serialize_with = "perflab_core::serde_base64::base64"
    )]
    encoded: &'a [u8],
    #[serde(skip_serializing_if = "Option::is_none")]
    above: Option<AboveRange>,
}

impl<'a> ExportedMeasurement<'a> {
    pub fn new(m: &'a MeasurementRecord) -> Self {
        let MeasurementRecord {
            seq,
            point,
            params,
            variant,
            rep,
            status,
            started_at,
            elapsed_s,
            output,
            telemetry,
            role,
            monitors,
        } = m;
        let WorkloadOutput {
            metrics,
            histograms,
            threads,
            notes,
        } = output;
        Self {
            seq: *seq,
            point: *point,
            params,
            variant,
            rep: *rep,
            status,
            started_at: *started_at,
            elapsed_s: *elapsed_s,
            output: Output {
                metrics,
                histograms: histograms.iter().map(Histogram::new).collect(),
                threads,
                notes,
            },
            telemetry: telemetry.iter().map(Row::new).collect(),
            role: *role,
            monitors,
        }
    }
}

impl<'a> Histogram<'a> {
    fn new(h: &'a HistogramData) -> Self {
        let HistogramData {
            name,
            unit,
            count,
            min,
            mean,
            max,
            stddev,
            p50,
            p90,
            p99,
            p999,
            p9999,
            encoded,
            above,
        } = h;
        Self {
            name,
            unit: *unit,
            count: *count,
            min: *min,
            mean: *mean,
            max: *max,
            stddev: *stddev,
            p50: *p50,
            p90: *p90,
            p99: *p99,
            p999: *p999,
            p9999: *p9999,
            encoded,
            above: *above,
        }
    }
}
