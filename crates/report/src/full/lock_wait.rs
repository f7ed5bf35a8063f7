//! Descriptor-lock waits of threaded transfers (seed 000's spintime), one table over all
//! runs of the report.

use perflab_core::record::{MeasurementRecord, RunInfo};
use serde_json::Value;

use crate::doc::Block;
use crate::full::input::RunData;
use crate::tables::lock_wait::lock_wait_table;

pub(crate) fn section(runs: &[RunData], blocks: &mut Vec<Block>) -> Value {
    let each: Vec<(&RunInfo, &[MeasurementRecord])> =
        runs.iter().map(|r| (&r.info, r.ms.as_slice())).collect();
    let Some(t) = lock_wait_table(&each) else {
        return Value::Null;
    };
    blocks.push(Block::heading(2, "Lock waits"));
    blocks.extend(t.to_blocks());
    serde_json::to_value(&t).unwrap_or(Value::Null)
}
