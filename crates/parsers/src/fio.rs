//! `fio --output-format=json`: per job and direction (read, write, trim), bandwidth, IOPS
//! and completion latency (fio 3's `clat_ns`; its percentiles as fio chose them).

use perflab_core::descriptor::{Descriptor, Kind, Needs, ReportHints};
use perflab_core::{Better, Metric, Unit};
use serde_json::Value;

use crate::error::ParseError;
use crate::json::{document, f64_at, line_of};
use crate::parsed::{Parsed, ParsedRow};
use crate::text::{bad, metric, not_this, percentile_name};

pub(crate) static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Parser,
    name: "fio",
    help: "fio --output-format=json: per direction bandwidth, IOPS, completion latency \
           percentiles; one row per job when there are several (--group_reporting \
           gives one result)",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::None,
};

const TOOL: &str = "fio";

pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    let (doc, first_line) = document(text, TOOL, "\"fio version\"")?;
    if doc.get("fio version").is_none() {
        return Err(not_this(TOOL, "the JSON has no \"fio version\""));
    }
    let Some(jobs) = doc.get("jobs").and_then(Value::as_array) else {
        return Err(bad(TOOL, first_line, "the JSON has no \"jobs\" array"));
    };
    let mut out = Parsed::default();
    let mut named: Vec<(String, Vec<Metric>)> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .map_or_else(|| format!("job{i}"), str::to_string);
        if let Some(err) = job.get("error").and_then(Value::as_i64).filter(|e| *e != 0) {
            out.notes
                .push(format!("fio job {name} reported error {err}"));
        }
        let metrics = job_metrics(job)
            .map_err(|why| bad(TOOL, line_of(text, &format!("\"{name}\""), first_line), why))?;
        named.push((name, metrics));
    }
    if named.is_empty() {
        return Err(bad(TOOL, first_line, "the \"jobs\" array is empty"));
    }
    if named.len() == 1 {
        if let Some((_, metrics)) = named.pop() {
            out.metrics = metrics;
        }
        return Ok(out);
    }
    // numjobs=N without group_reporting gives N jobs with one name; the instance number
    // keeps them apart rather than letting them pass for repetitions.
    let repeated = |n: &str| named.iter().filter(|(m, _)| m == n).count() > 1;
    let mut instance: Vec<(String, usize)> = Vec::new();
    let mut rows = Vec::new();
    for (name, metrics) in &named {
        let mut params = vec![("job".to_string(), name.clone())];
        if repeated(name) {
            let k = match instance.iter_mut().find(|(n, _)| n == name) {
                Some((_, k)) => {
                    *k += 1;
                    *k
                }
                None => {
                    instance.push((name.clone(), 0));
                    0
                }
            };
            params.push(("instance".to_string(), k.to_string()));
        }
        rows.push(ParsedRow {
            histograms: Vec::new(),
            telemetry: Vec::new(),
            params,
            series: None,
            metrics: metrics.clone(),
        });
    }
    out.rows = rows;
    Ok(out)
}

fn job_metrics(job: &Value) -> Result<Vec<Metric>, String> {
    let mut m = Vec::new();
    for dir in ["read", "write", "trim"] {
        let Some(d) = job.get(dir) else { continue };
        // fio lists every direction; one that did no I/O has zeros, not measurements.
        if f64_at(d, &["total_ios"]).unwrap_or(0.0) <= 0.0
            && f64_at(d, &["io_bytes"]).unwrap_or(0.0) <= 0.0
        {
            continue;
        }
        let bw = f64_at(d, &["bw_bytes"])
            .or_else(|| f64_at(d, &["bw"]).map(|kib| kib * 1024.0))
            .ok_or_else(|| format!("{dir}: no bw_bytes or bw"))?;
        m.push(metric(
            format!("{dir}_bw_bytes_s"),
            bw,
            Unit::BytesPerSecond,
            Better::Higher,
        ));
        let iops = f64_at(d, &["iops"]).ok_or_else(|| format!("{dir}: no iops"))?;
        m.push(metric(
            format!("{dir}_iops"),
            iops,
            Unit::PerSecond,
            Better::Higher,
        ));
        if let Some(b) = f64_at(d, &["io_bytes"]) {
            m.push(metric(
                format!("{dir}_io_bytes"),
                b,
                Unit::Bytes,
                Better::Neither,
            ));
        }
        latency(&mut m, d, dir, "clat_ns", "clat");
        latency(&mut m, d, dir, "lat_ns", "lat");
    }
    if m.is_empty() {
        return Err("no direction did any I/O".to_string());
    }
    for (key, name) in [("usr_cpu", "usr_cpu_pct"), ("sys_cpu", "sys_cpu_pct")] {
        if let Some(v) = f64_at(job, &[key]) {
            m.push(metric(name, v, Unit::Percent, Better::Neither));
        }
    }
    if let Some(v) = f64_at(job, &["ctx"]) {
        m.push(metric("context_switches", v, Unit::Count, Better::Neither));
    }
    Ok(m)
}

fn latency(m: &mut Vec<Metric>, d: &Value, dir: &str, key: &str, what: &str) {
    let Some(l) = d.get(key) else { return };
    if f64_at(l, &["N"]).unwrap_or(0.0) <= 0.0 {
        return;
    }
    for stat in ["mean", "stddev", "min", "max"] {
        if let Some(v) = f64_at(l, &[stat]) {
            m.push(metric(
                format!("{dir}_{what}_{stat}_ns"),
                v,
                Unit::Nanoseconds,
                Better::Lower,
            ));
        }
    }
    let Some(pcts) = l.get("percentile").and_then(Value::as_object) else {
        return;
    };
    // serde_json's map is sorted as text ("10" before "5"); sort by percentile.
    let mut found: Vec<(f64, String, f64)> = pcts
        .iter()
        .filter_map(|(label, v)| {
            Some((
                crate::text::num(label)?,
                percentile_name(label)?,
                v.as_f64()?,
            ))
        })
        .collect();
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (_, p, v) in found {
        m.push(metric(
            format!("{dir}_{what}_{p}_ns"),
            v,
            Unit::Nanoseconds,
            Better::Lower,
        ));
    }
}
