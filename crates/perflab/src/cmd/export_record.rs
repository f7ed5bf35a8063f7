//! A measurement as the JSON export writes it (format_version 2): the stored record's
//! own fields, in its order and under its names, except that each histogram's HDR
//! encoding is one base64 string instead of an array of byte values (the array made a
//! 50,000-measurement export 2.5 GB, five times what base64 takes). Records read either
//! form back (`perflab_core::serde_base64`), so `import` takes both versions.
//!
//! The record is taken apart field by field, with no `..`: a field added to
//! `MeasurementRecord`, `WorkloadOutput` or `HistogramData` does not compile here until
//! the export writes it too.

use perflab_core::{
    AboveRange, HistogramData, Metric, Params, TelemetryRow, ThreadRecord, Unit, WorkloadOutput,
};
use perflab_store::{MeasurementRecord, MeasurementStatus, Role};
use serde::Serialize;

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
    telemetry: &'a [TelemetryRow],
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
            telemetry,
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
