//! The report's parts made of one table per run, the tables `show` prints for one run:
//! each under a heading naming the run, their JSON a list with one entry per run that has
//! the table. A table of this kind joins the report by one line of [`PER_RUN`].

use serde_json::Value;

use crate::doc::Block;
use crate::error::ReportError;
use crate::full::input::{run_name, RunData};
pub(super) use crate::tables::{PerRun, PER_RUN};

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
