//! The report's title and the table of the runs it covers.

use crate::doc::{Block, Table};
use crate::full::input::{run_name, RunData};
use crate::tables::coverage;

pub(crate) fn title(runs: &[RunData]) -> String {
    let studies: Vec<&str> = {
        let mut s: Vec<&str> = runs.iter().map(|r| r.info.study.as_str()).collect();
        s.dedup();
        s
    };
    let which = match runs {
        [one] => run_name(&one.info),
        [first, rest @ ..] => format!(
            "{} vs {}",
            rest.iter()
                .map(|r| run_name(&r.info))
                .collect::<Vec<_>>()
                .join(", "),
            run_name(&first.info)
        ),
        [] => "no run".to_string(),
    };
    format!("perflab report: {which} ({})", studies.join(", "))
}

pub(crate) fn section(runs: &[RunData], blocks: &mut Vec<Block>) {
    blocks.push(Block::heading(2, "Runs"));
    blocks.push(runs_table(runs));
    let one = match runs {
        [one] => Some(one),
        _ => None,
    };
    let monitors = one.map(|r| crate::fmt::compact::monitors_summary(&r.ms));
    match (one, &monitors) {
        // One run: its machine and monitors are a line each under its row, not lists of
        // one item under a title of their own (issue 34 item 3: four lines fewer).
        (Some(one), Some(lines)) => {
            blocks.push(Block::note(format!("Machine: {}", machine(one))));
            if !lines.is_empty() {
                blocks.push(Block::note(format!("Monitors: {}", lines.join("; "))));
            }
        }
        _ => blocks.push(Block::list("Machines", machines(runs))),
    }
    let unavailable: Vec<String> =
        runs.iter()
            .flat_map(|r| {
                r.info.unavailable.iter().map(move |u| {
                    format!("run {}: {} unavailable: {}", r.info.id, u.variant, u.reason)
                })
            })
            .collect();
    blocks.push(Block::list("Variants not measured", unavailable));
    let per_run = |lines: fn(&RunData) -> Vec<String>| -> Vec<String> {
        runs.iter()
            .flat_map(|r| {
                lines(r)
                    .into_iter()
                    .map(move |l| format!("run {}: {l}", r.info.id))
            })
            .collect()
    };
    if one.is_none() {
        blocks.push(Block::list(
            "Monitors",
            per_run(|r| crate::fmt::compact::monitors_summary(&r.ms)),
        ));
    }
    blocks.push(Block::list(
        "Ineffective measurements (a knob did not hold; not counted as their variant)",
        per_run(|r| {
            crate::fmt::compact::ineffective_summary(&crate::hints::param_roles(&r.info), &r.ms)
        }),
    ));
    blocks.push(Block::list(
        "Disturbed measurements (other work took their CPUs; not counted)",
        per_run(|r| coverage::disturbed_lines(&crate::hints::param_roles(&r.info), &r.ms)),
    ));
}

/// One row a run: what it measured, when, and how far it got.
fn runs_table(runs: &[RunData]) -> Block {
    let head = [
        "run",
        "label",
        "study",
        "workload",
        "created (UTC)",
        "status",
        "measured",
        "failed",
    ]
    .map(String::from)
    .to_vec();
    let rows = runs
        .iter()
        .map(|r| {
            let i = &r.info;
            vec![
                i.id.to_string(),
                i.label.clone().unwrap_or_default(),
                i.study.clone(),
                i.workload.clone(),
                // Minutes are enough to tell runs apart and keep the table narrow.
                crate::fmt::utc(i.created_at).chars().take(16).collect(),
                i.status.as_str().to_string(),
                match i.failed {
                    0 => format!("{}/{}", i.done, i.planned),
                    f => format!("{}/{}, {f} failed", i.done, i.planned),
                },
            ]
        })
        .collect();
    Block::Table(Table::new(head, rows, vec![1, 2, 3, 4, 5]))
}

/// The machine each run ran on, as its fingerprint names it (`?` where unknown).
fn machines(runs: &[RunData]) -> Vec<String> {
    runs.iter()
        .map(|r| format!("run {}: {}", r.info.id, machine(r)))
        .collect()
}

/// `host vm, kernel 6.18, AMD EPYC, CPUs 0-1`.
fn machine(r: &RunData) -> String {
    let f = &r.info.fingerprint;
    let s = |v: &Option<String>| v.as_deref().unwrap_or("?").to_string();
    format!(
        "host {}, kernel {}, {}, CPUs {}",
        s(&f.hostname),
        s(&f.kernel),
        s(&f.cpu_model),
        s(&f.online_cpus)
    )
}
