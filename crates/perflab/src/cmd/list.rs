//! `perflab list`: the plug-ins and studies this perflab knows, read from the registries'
//! descriptors; as text, or (`--format json`) the same entries as data.

use perflab_core::Descriptor;
use serde::Serialize;

use crate::cli::ListArgs;
use crate::cmd::envelope;

/// One plug-in or study: its name, the first line of its help, and a workload's
/// parameters.
#[derive(Serialize)]
struct Entry {
    name: &'static str,
    summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    params: Vec<Param>,
}

#[derive(Serialize)]
struct Param {
    name: &'static str,
    help: &'static str,
    /// As the text says it: `integer 1..64`, `duration`, `a|b`.
    kind: String,
    default: Option<&'static str>,
}

/// Every kind of entry, in the text's order.
#[derive(Serialize)]
struct Listing {
    studies: Vec<Entry>,
    workloads: Vec<Entry>,
    monitors: Vec<Entry>,
    parsers: Vec<Entry>,
    knobs: Vec<Entry>,
}

pub fn run(a: ListArgs) -> anyhow::Result<i32> {
    let l = listing();
    if a.format.is_json() {
        envelope::print(&l)?;
        return Ok(0);
    }
    println!("Studies (perflab run STUDY):");
    l.studies.iter().for_each(line);
    println!("\nWorkloads (perflab run --workload NAME -p param=value):");
    for w in &l.workloads {
        line(w);
        for p in &w.params {
            let default = p
                .default
                .map(|d| format!(" [default: {d}]"))
                .unwrap_or_default();
            println!("      {:<12} {} ({}){default}", p.name, p.help, p.kind);
        }
    }
    println!("\nMonitors (--monitors a,b):");
    l.monitors.iter().for_each(line);
    println!("\nParsers (exec -p parser=NAME, perflab import --parser NAME):");
    l.parsers.iter().for_each(line);
    println!("\nKnobs (--variant NAME:knob=value):");
    l.knobs.iter().for_each(line);
    Ok(0)
}

fn listing() -> Listing {
    let studies = perflab_lab::presets::PRESETS
        .iter()
        .map(|(name, text)| Entry {
            name,
            summary: perflab_lab::ExperimentSpec::from_toml(name, text)
                .map(|s| s.description)
                .unwrap_or_default(),
            params: Vec::new(),
        })
        .collect();
    let workloads = perflab_workloads::registry()
        .iter()
        .map(|w| {
            let info = w.info();
            Entry {
                params: info
                    .params
                    .iter()
                    .map(|p| Param {
                        name: p.name,
                        help: p.help,
                        kind: p.kind_text(),
                        default: p.default,
                    })
                    .collect(),
                ..entry(info)
            }
        })
        .collect();
    let mut parsers: Vec<Entry> = perflab_parsers::registry()
        .iter()
        .map(|p| entry(p.descriptor))
        .collect();
    parsers.push(Entry {
        name: super::import_json::NAME,
        summary: "a `perflab export --format json` document (import only: the run comes back \
                  whole)"
            .into(),
        params: Vec::new(),
    });
    Listing {
        studies,
        workloads,
        monitors: perflab_monitors::registry()
            .iter()
            .map(|m| entry(m.descriptor))
            .collect(),
        parsers,
        knobs: perflab_knobs::registry()
            .iter()
            .map(|k| entry(k.descriptor))
            .collect(),
    }
}

fn entry(d: &Descriptor) -> Entry {
    Entry {
        name: d.name,
        summary: d.summary().to_string(),
        params: Vec::new(),
    }
}

/// `  NAME         first line of its help`.
fn line(e: &Entry) {
    println!("  {:<12} {}", e.name, e.summary);
}
