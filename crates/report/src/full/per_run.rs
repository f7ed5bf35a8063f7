//! The report's parts made of one table per run, the tables `show` prints for one run:
//! each under a heading naming the run, their JSON a list with one entry per run that has
//! the table. A table of this kind joins the report by one line of [`PER_RUN`].

use perflab_core::record::{MeasurementRecord, RunInfo};
use serde_json::Value;

use crate::doc::Block;
use crate::error::ReportError;
use crate::full::input::{run_name, RunData};
use crate::section::{Section, SectionId};

/// A run's table, when it has the data for one.
type Build = fn(&RunInfo, &[MeasurementRecord]) -> Option<Box<dyn Section>>;

/// One part of per-run tables: its id, its title, and the table of a run.
pub(super) struct PerRun {
    pub id: SectionId,
    pub title: &'static str,
    pub build: Build,
    /// The report's comparisons hold the table's figures, B against A (the telemetry
    /// comparison of each): where the run is compared, the table is a pointer to `show`.
    pub compared: bool,
}

/// The per-run parts, in the report's order (after the lock waits).
pub(super) const PER_RUN: &[PerRun] = &[
    PerRun {
        id: SectionId::Interrupts,
        title: "Interrupts",
        build: |info, ms| boxed(crate::irq_cpu_table(info, ms)),
        compared: false,
    },
    PerRun {
        id: SectionId::Counters,
        title: "Counters",
        build: |info, ms| boxed(crate::counter_table(info, ms)),
        compared: true,
    },
];

fn boxed<T: Section + 'static>(t: Option<T>) -> Option<Box<dyn Section>> {
    t.map(|t| Box::new(t) as Box<dyn Section>)
}

/// The blocks of `part` for every run that has its table, each under `TITLE of RUN`,
/// and their JSON.
pub(super) fn section(
    part: &PerRun,
    runs: &[RunData],
    blocks: &mut Vec<Block>,
) -> Result<Value, ReportError> {
    let mut json = Vec::new();
    for r in runs {
        let Some(t) = (part.build)(&r.info, &r.ms) else {
            continue;
        };
        let heading = format!("{} of {}", part.title, run_name(&r.info));
        blocks.push(Block::heading(2, heading));
        blocks.extend(t.blocks());
        json.extend(t.json());
    }
    Ok(Value::Array(json))
}
