//! `perflab import`: a tool's saved output becomes a stored run, so old logs can be
//! listed, shown and compared like anything perflab measured. A table with several rows
//! (a size scan, one column per software version) becomes points and variants.

use std::collections::BTreeMap;

use perflab_core::spec::{CompareSpec, VariantSpec};
use perflab_core::{Imported, ParamValue, Params, RunSpec, ToolSummary, WorkloadOutput};
use perflab_store::{MeasurementRecord, MeasurementStatus, NewRun, PlannedMeasurement};

use crate::cli::{Global, ImportArgs};
use crate::cmd::common;
use crate::exit::input;

pub fn run(g: &Global, a: ImportArgs) -> anyhow::Result<i32> {
    if a.parser == super::import_json::NAME {
        return super::import_json::run(g, &a);
    }
    let parser = perflab_parsers::by_name(&a.parser).ok_or_else(|| {
        input(format!(
            "unknown parser {:?} (known: {}, {})",
            a.parser,
            perflab_parsers::names().join(", "),
            super::import_json::NAME
        ))
    })?;
    let text = common::read_input(&a.file)?;
    let parsed = parser
        .read(&text)
        .map_err(|e| input(format!("{}: {e}", a.file.display())))?;
    let records = to_records(&parsed);
    if records.is_empty() {
        return Err(input(format!("{}: no results found", a.file.display())));
    }
    let mut store = common::open_store(g)?;
    let study = a
        .study
        .clone()
        .unwrap_or_else(|| format!("import-{}", parser.name));
    let summaries = tool_summaries(&parsed, &records);
    let mut new = new_run(&study, parser.name, &a, &records, &parsed.notes);
    // The report finds an imported run's parameters by the roles its parser declared.
    new.spec.param_roles = parsed.param_roles.clone();
    if let Some(imported) = new.spec.imported.as_mut() {
        imported.summaries = summaries;
    }
    let now = perflab_lab::runner::now_epoch();
    let id = store.create_run(&new, now)?;
    for mut rec in records {
        rec.started_at = now;
        store.record(id, &rec)?;
    }
    store.set_status(id, perflab_store::RunStatus::Complete)?;
    let mut summary = super::import_summary::ImportSummary::new(&a, &store, id, parser.name);
    summary.study = study;
    summary.measurements = new.plan.len() as u64;
    summary.notes = parsed.notes.clone();
    summary.say(a.format)?;
    Ok(0)
}

/// The tool's own summaries (hyperfine's per command), each filed under the point and
/// variant of the rows it summarises; one whose rows are not there is left out.
fn tool_summaries(
    parsed: &perflab_parsers::Parsed,
    records: &[MeasurementRecord],
) -> Vec<ToolSummary> {
    parsed
        .summaries
        .iter()
        .filter_map(|s| {
            let params = to_params(&s.params);
            let variant = s.series.clone().unwrap_or_else(|| "default".into());
            let at = records
                .iter()
                .find(|r| r.params == params && r.variant == variant)?;
            Some(ToolSummary {
                point: at.point,
                variant,
                metrics: s.metrics.clone(),
            })
        })
        .collect()
}

fn to_params(pairs: &[(String, String)]) -> Params {
    Params(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), param_value(v)))
            .collect(),
    )
}

fn param_value(text: &str) -> ParamValue {
    match text.parse::<i64>() {
        Ok(i) => ParamValue::Int(i),
        Err(_) => ParamValue::Str(text.to_string()),
    }
}

/// One measurement per parsed row (or one for single-result output), numbered as a plan
/// would: points by first appearance, repetitions counted per point and variant.
fn to_records(parsed: &perflab_parsers::Parsed) -> Vec<MeasurementRecord> {
    type Row = (
        Params,
        String,
        Vec<perflab_core::Metric>,
        Vec<perflab_core::HistogramData>,
        Vec<perflab_core::TelemetryRow>,
    );
    let rows: Vec<Row> = if parsed.rows.is_empty() {
        if parsed.metrics.is_empty() {
            return Vec::new();
        }
        vec![(
            Params::default(),
            "default".into(),
            parsed.metrics.clone(),
            Vec::new(),
            parsed.telemetry.clone(),
        )]
    } else {
        parsed
            .rows
            .iter()
            .map(|r| {
                let params = to_params(&r.params);
                let variant = r.series.clone().unwrap_or_else(|| "default".into());
                let row = (r.metrics.clone(), r.histograms.clone(), r.telemetry.clone());
                (params, variant, row.0, row.1, row.2)
            })
            .collect()
    };
    let mut points: Vec<Params> = Vec::new();
    let mut reps: BTreeMap<(usize, String), u32> = BTreeMap::new();
    let mut out = Vec::new();
    for (seq, (params, variant, metrics, mut histograms, telemetry)) in rows.into_iter().enumerate()
    {
        let point = match points.iter().position(|p| *p == params) {
            Some(i) => i,
            None => {
                points.push(params.clone());
                points.len() - 1
            }
        };
        let rep = reps.entry((point, variant.clone())).or_default();
        out.push(MeasurementRecord {
            seq: seq as u32,
            point: point as u32,
            params,
            variant,
            rep: *rep,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 0.0,
            output: WorkloadOutput {
                metrics,
                // A row's own histograms (a cyclictest thread's) go with it; those of the
                // whole output with the first measurement.
                histograms: if seq == 0 {
                    histograms.splice(0..0, parsed.histograms.iter().cloned());
                    histograms
                } else {
                    histograms
                },
                threads: Vec::new(),
                notes: Vec::new(),
            },
            // Telemetry (perf stat's counts as the counters monitor's rows) of the
            // row, or of single-result output, which is its one measurement.
            telemetry,
            role: Default::default(),
            monitors: Vec::new(),
        });
        *rep += 1;
    }
    out
}

fn new_run(
    study: &str,
    parser: &str,
    a: &ImportArgs,
    records: &[MeasurementRecord],
    notes: &[String],
) -> NewRun {
    let primary = records
        .first()
        .and_then(|r| r.output.metrics.first())
        .map(|m| m.name.clone())
        .unwrap_or_default();
    let mut variants: Vec<&str> = Vec::new();
    for r in records {
        if !variants.contains(&r.variant.as_str()) {
            variants.push(&r.variant);
        }
    }
    let spec = RunSpec {
        name: study.to_string(),
        workload: format!("import:{parser}"),
        primary_metric: primary,
        variants: variants
            .iter()
            .map(|v| VariantSpec {
                name: v.to_string(),
                knobs: Default::default(),
                params: Default::default(),
            })
            .collect(),
        compare: CompareSpec {
            baseline: variants.first().map(|v| v.to_string()),
            ..CompareSpec::default()
        },
        imported: Some(Imported {
            file: a.file.display().to_string(),
            parser: parser.to_string(),
            notes: notes.to_vec(),
            summaries: Vec::new(),
        }),
        ..RunSpec::default()
    };
    NewRun {
        study: study.to_string(),
        workload: format!("import:{parser}"),
        label: a.label.clone(),
        spec,
        fingerprint: perflab_core::Fingerprint {
            hostname: Some("imported".into()),
            perflab_version: Some(perflab_core::VERSION.into()),
            extra: [(
                "imported_from".to_string(),
                serde_json::Value::from(a.file.display().to_string()),
            )]
            .into(),
            ..Default::default()
        },
        plan: records
            .iter()
            .map(|r| PlannedMeasurement {
                seq: r.seq,
                point: r.point,
                params: r.params.clone(),
                variant: r.variant.clone(),
                rep: r.rep,
                role: r.role,
            })
            .collect(),
        unavailable: Vec::new(),
        uid: None,
    }
}
