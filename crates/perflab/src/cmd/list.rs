//! `perflab list`: the plug-ins and studies this perflab knows, read from the registries'
//! descriptors, shown by `perflab_report::views::list`.

use perflab_core::Descriptor;
use perflab_report::views::list::{self, Entry, Listing, Param};

use crate::cli::ListArgs;
use crate::cmd::envelope;

pub fn run(a: ListArgs) -> anyhow::Result<i32> {
    let view = list::view(&listing())?;
    if a.format.is_json() {
        envelope::print(&view.json())?;
    } else {
        crate::stdout_guard::print(view.text())?;
    }
    Ok(0)
}

/// The entries of every registry, read off their descriptors.
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
