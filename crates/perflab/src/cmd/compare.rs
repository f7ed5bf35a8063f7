//! `perflab compare`: two variants of one run, or two runs matched by parameters, with
//! the regression distribution for CPU-pair studies and, on request, the drill-down.

use perflab_report as report;

use crate::cli::{CompareArgs, Global, TextFormat};
use crate::cmd::{common, show};
use crate::exit::input;

pub fn run(g: &Global, a: CompareArgs) -> anyhow::Result<i32> {
    let (cfg, buckets) = common::verdict_settings(&a.verdict)?;
    let store = common::read_store(g)?;
    let info = store.run(a.runs[0])?;
    let ms = store.measurements(a.runs[0])?;
    let table = if let Some(&other_run) = a.runs.get(1) {
        if a.variants.is_some() {
            return Err(input("--variants compares within one run; give one RUN"));
        }
        let info_b = store.run(other_run)?;
        let ms_b = store.measurements(other_run)?;
        print_fingerprint_differences(&info, &info_b);
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
        report::compare_variants(&info, &ms, &base, &other, a.metric.as_deref(), &cfg)?
    };
    let pairs = table.rows.iter().any(|r| r.pair.is_some());
    let dist = pairs.then(|| report::distribution(&table, &buckets));
    // A size scan reads best in the seed's shape: one row per buffer size.
    let scan = report::scan_tables(&table, "size");
    match a.format {
        TextFormat::Json => {
            let mut doc = serde_json::json!({ "comparison": serde_json::from_str::<serde_json::Value>(&table.to_json()?)? });
            if let Some(d) = &dist {
                doc["distribution"] = serde_json::from_str(&d.to_json()?)?;
            }
            if let Some(s) = &scan {
                doc["scan"] = serde_json::from_str(&s.to_json()?)?;
            }
            println!("{}", serde_json::to_string_pretty(&doc)?);
        }
        TextFormat::Markdown => {
            match &scan {
                Some(s) => print!("{}", s.render_markdown()),
                None => print!("{}", table.render_markdown()),
            }
            if let Some(d) = &dist {
                println!();
                print!("{}", d.render_markdown());
            }
        }
        TextFormat::Text => {
            match &scan {
                Some(s) => print!("{}", s.render_text()),
                None => print!("{}", table.render_text()),
            }
            if let Some(d) = &dist {
                println!();
                print!("{}", d.render_text());
            }
        }
    }
    if let Some(dir) = &a.drilldown {
        report::write_drilldown(dir, &info, &ms, &table, &buckets)?;
        eprintln!("drill-down per pair written to {}/", dir.display());
    }
    Ok(0)
}

/// Comparing runs from different setups is allowed, never silent.
fn print_fingerprint_differences(a: &perflab_store::RunInfo, b: &perflab_store::RunInfo) {
    let fa: perflab_lab::Fingerprint =
        serde_json::from_value(a.fingerprint.clone()).unwrap_or_default();
    let fb: perflab_lab::Fingerprint =
        serde_json::from_value(b.fingerprint.clone()).unwrap_or_default();
    let diffs = perflab_lab::fingerprint::differences(&fa, &fb);
    if diffs.is_empty() {
        return;
    }
    println!("The two runs come from different setups:");
    for (field, x, y) in diffs {
        println!("  {field}: run {} {x:?}  vs  run {} {y:?}", a.id, b.id);
    }
    println!();
}
