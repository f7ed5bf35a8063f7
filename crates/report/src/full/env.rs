//! The environment check: runs whose host fingerprints differ are compared anyway, but
//! the differences head the report, never silently.

use serde::Serialize;

use crate::doc::{Block, Table};
use crate::full::input::RunData;

/// Fingerprint fields a reader must know differ, with the words the report uses.
const FIELDS: &[(&str, &str)] = &[
    ("kernel", "kernel"),
    ("cmdline", "kernel command line"),
    ("cpufreq_governor", "cpufreq governor"),
    ("idle_driver", "idle driver"),
    ("idle_governor", "idle governor"),
    ("thp", "transparent huge pages"),
    ("isolated_cpus", "isolated CPUs"),
    ("online_cpus", "online CPUs"),
    ("cores", "cores"),
    ("threads_per_core", "threads per core"),
    ("cpu_model", "CPU model"),
    ("machine", "architecture"),
    ("hostname", "host"),
    ("perflab_version", "perflab version"),
    ("sysroot", "system files read from"),
];

/// One fingerprint field that differs between the first run and another.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnvDifference {
    pub field: String,
    /// The words the report uses for the field.
    pub name: String,
    pub run_a: i64,
    pub value_a: String,
    pub run_b: i64,
    pub value_b: String,
}

/// Every field of [`FIELDS`] whose value differs between `a` and `b` (missing = "unknown"),
/// in the order of [`FIELDS`].
pub fn environment_differences(a: &RunData, b: &RunData) -> Vec<EnvDifference> {
    let value = |v: Option<String>| match v {
        None => "unknown".to_string(),
        Some(s) if s.is_empty() => "none".to_string(),
        Some(s) => s,
    };
    let diffs = a.info.fingerprint.diff(&b.info.fingerprint);
    FIELDS
        .iter()
        .filter_map(|(field, name)| {
            let d = diffs.iter().find(|d| d.field == *field)?;
            Some(EnvDifference {
                field: field.to_string(),
                name: name.to_string(),
                run_a: a.info.id,
                value_a: value(d.a.clone()),
                run_b: b.info.id,
                value_b: value(d.b.clone()),
            })
        })
        // A stored "unknown" and a missing field read the same to a person.
        .filter(|d| d.value_a != d.value_b)
        .collect()
}

/// The blocks of the check (only when there is more than one run) and its findings.
pub(crate) fn section(runs: &[RunData], blocks: &mut Vec<Block>) -> Vec<EnvDifference> {
    let Some((first, rest)) = runs.split_first() else {
        return Vec::new();
    };
    if rest.is_empty() {
        if let Some(root) = first.info.fingerprint.sysroot.as_deref() {
            blocks.push(Block::para(format!(
                "Note: run {} read its system files from the tree at {root}, not from the \
                 machine it ran on.",
                first.info.id
            )));
        }
        return Vec::new();
    }
    let diffs: Vec<EnvDifference> = rest
        .iter()
        .flat_map(|r| environment_differences(first, r))
        .collect();
    blocks.push(Block::heading(2, "Environment"));
    if diffs.is_empty() {
        blocks.push(Block::para(format!(
            "The runs' fingerprints match: {}.",
            FIELDS
                .iter()
                .map(|(_, n)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )));
        return diffs;
    }
    blocks.push(Block::para(
        "WARNING: the runs come from different setups. They are compared below anyway; \
         any difference may come from these as much as from the change under test.",
    ));
    let head = ["setting", "run", "value", "run", "value"]
        .map(String::from)
        .to_vec();
    let rows = diffs
        .iter()
        .map(|d| {
            vec![
                d.name.clone(),
                d.run_a.to_string(),
                d.value_a.clone(),
                d.run_b.to_string(),
                d.value_b.clone(),
            ]
        })
        .collect();
    blocks.push(Block::Table(Table::new(head, rows, vec![0, 2, 4])));
    diffs
}
