//! `perflab compare`: two variants of one run, or two runs matched by parameters, with
//! the regression distribution for CPU-pair studies and, on request, the drill-down.
//! Every table says its design (interleaved within one run, or separate runs with the
//! drift guard of their timing probes); the JSON carries both as data.

use perflab_report as report;
use perflab_report::{Format, Section};

use crate::cli::{CompareArgs, Global, TextFormat};
use crate::cmd::{common, show};
use crate::exit::input;

pub fn run(g: &Global, a: CompareArgs) -> anyhow::Result<i32> {
    let (cfg, buckets) = common::verdict_settings(&a.verdict)?;
    report::section::check_ids(&a.section, report::section::COMPARE).map_err(input)?;
    let store = common::read_store(g)?;
    let info = store.run(a.runs[0])?;
    // Only the drill-down reads telemetry; the tables read metrics and histograms.
    let telemetry = a.drilldown.is_some();
    let ms = common::report_records(&store, a.runs[0], telemetry)?;
    let mut setup_differences = Vec::new();
    // The latency percentiles of what the comparison reads: both runs, or within one run
    // the two variants.
    let percentiles;
    let table = if let Some(&other_run) = a.runs.get(1) {
        if a.variants.is_some() {
            return Err(input("--variants compares within one run; give one RUN"));
        }
        let info_b = store.run(other_run)?;
        let ms_b = common::report_records(&store, other_run, telemetry)?;
        setup_differences = fingerprint_differences(&info, &info_b);
        percentiles = report::latency_percentiles(&[(&info, &ms), (&info_b, &ms_b)]);
        report::compare_runs(&info, &ms, &info_b, &ms_b, a.metric.as_deref(), &cfg)?
    } else {
        let measured = report::measured_variants(&ms);
        let (base, other) = match &a.variants {
            Some(v) => {
                let (x, y) = v
                    .split_once(',')
                    .ok_or_else(|| input(format!("--variants {v:?}: expected A,B")))?;
                (x.trim().to_string(), y.trim().to_string())
            }
            None => show::baseline_and_other(&info, &measured).ok_or_else(|| {
                let why: Vec<String> = info
                    .unavailable
                    .iter()
                    .map(|u| format!("{} was unavailable: {}", u.variant, u.reason))
                    .collect();
                input(format!(
                    "run {} measured {} variant(s) ({}); nothing to compare{}",
                    info.id,
                    measured.len(),
                    measured.join(", "),
                    if why.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", why.join("; "))
                    }
                ))
            })?,
        };
        let t = report::compare_variants(&info, &ms, &base, &other, a.metric.as_deref(), &cfg)?;
        // The percentiles read histograms only: the two variants' records are copied
        // without their telemetry rows, most of a record (unless that is all of them
        // already: no telemetry is read without --drilldown).
        let theirs = |m: &perflab_store::MeasurementRecord| m.variant == base || m.variant == other;
        percentiles = if ms.iter().all(|m| theirs(m) && m.telemetry.is_empty()) {
            report::latency_percentiles(&[(&info, &ms)])
        } else {
            let two: Vec<_> = ms
                .iter()
                .filter(|m| theirs(m))
                .map(report::slim::without_telemetry)
                .collect();
            report::latency_percentiles(&[(&info, &two)])
        };
        t
    };
    let pairs = table.rows.iter().any(|r| r.pair.is_some());
    let dist = pairs.then(|| report::distribution(&table, &buckets));
    // A size scan reads best in the seed's shape: one row per buffer size.
    let scan = report::scan_tables(&table, "size");
    match a.format {
        TextFormat::Json => {
            let mut doc = serde_json::json!({ "comparison": serde_json::from_str::<serde_json::Value>(&table.to_json()?)? });
            if !setup_differences.is_empty() {
                // Data, not a preamble: anything before the JSON would break its readers.
                doc["setup_differences"] = serde_json::to_value(&setup_differences)?;
            }
            if let Some(d) = &dist {
                doc["distribution"] = serde_json::from_str(&d.to_json()?)?;
            }
            if let Some(s) = &scan {
                doc["scan"] = serde_json::from_str(&s.to_json()?)?;
            }
            if let Some(p) = &percentiles {
                doc["latency_percentiles"] = serde_json::to_value(p)?;
            }
            crate::cmd::envelope::print(&doc)?;
        }
        TextFormat::Markdown | TextFormat::Text => {
            print_setup_differences(&setup_differences);
            let mut sections: Vec<&dyn Section> = Vec::new();
            match &scan {
                Some(s) => sections.push(s),
                None => sections.push(&table),
            }
            if let Some(d) = &dist {
                sections.push(d);
            }
            if let Some(p) = &percentiles {
                sections.push(p);
            }
            let format = match a.format {
                TextFormat::Markdown => Format::Markdown,
                _ => Format::Text,
            };
            let sections = report::section::select(sections, &a.section, report::section::COMPARE)
                .map_err(input)?;
            print!("{}", report::section::render(&sections, format));
        }
    }
    if let Some(dir) = &a.drilldown {
        report::write_drilldown(dir, &info, &ms, &table, &buckets)?;
        eprintln!("drill-down per pair written to {}/", dir.display());
    }
    Ok(0)
}

/// A fingerprint field two runs differ in.
#[derive(serde::Serialize)]
struct SetupDifference {
    field: String,
    run_a: i64,
    value_a: String,
    run_b: i64,
    value_b: String,
}

/// Comparing runs from different setups is allowed, never silent.
fn fingerprint_differences(
    a: &perflab_store::RunInfo,
    b: &perflab_store::RunInfo,
) -> Vec<SetupDifference> {
    a.fingerprint
        .diff(&b.fingerprint)
        .into_iter()
        .map(|d| SetupDifference {
            field: d.field.to_string(),
            run_a: a.id,
            value_a: d.a.unwrap_or_default(),
            run_b: b.id,
            value_b: d.b.unwrap_or_default(),
        })
        .collect()
}

fn print_setup_differences(diffs: &[SetupDifference]) {
    if diffs.is_empty() {
        return;
    }
    println!("The two runs come from different setups:");
    for d in diffs {
        println!(
            "  {}: run {} {:?}  vs  run {} {:?}",
            d.field, d.run_a, d.value_a, d.run_b, d.value_b
        );
    }
    println!();
}
