//! The measurements of a run that failed, one row each with the workload's error. The
//! summary counts a row's failures and names the first error; a reader asking why 3 of
//! 40 failed, and whether for one reason, reads each here (`show --section failures`, and
//! a part of `report`). A run with no failure has no table.

use perflab_core::record::{MeasurementRecord, MeasurementStatus, RunId, RunInfo};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::section::{Section, SectionId};
use crate::tables::TableId;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailureTable {
    pub run: RunId,
    pub rows: Vec<FailureRow>,
}

/// One failed measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailureRow {
    pub seq: u32,
    /// The point's label, as the run's other tables name it.
    pub point: String,
    pub variant: String,
    pub rep: u32,
    /// The workload's error, whole (the text shows its first line).
    pub error: String,
}

/// The failed measurements of `run`, in the order they ran; `None` when none failed.
pub fn failure_table(run: &RunInfo, ms: &[MeasurementRecord]) -> Option<FailureTable> {
    let roles = crate::hints::param_roles(run);
    let (_, labeler, _) = crate::select::point_grid(&roles, ms);
    let mut rows: Vec<FailureRow> = ms
        .iter()
        .filter_map(|m| match &m.status {
            MeasurementStatus::Failed(error) => Some(FailureRow {
                seq: m.seq,
                point: labeler.label(&m.params),
                variant: m.variant.clone(),
                rep: m.rep,
                error: error.clone(),
            }),
            _ => None,
        })
        .collect();
    rows.sort_by_key(|r| r.seq);
    (!rows.is_empty()).then_some(FailureTable { run: run.id, rows })
}

impl Section for FailureTable {
    fn id(&self) -> SectionId {
        SectionId::Table(TableId::Failures.as_str())
    }
    fn title(&self) -> String {
        format!("Failed measurements of run {}", self.run)
    }
    fn blocks(&self) -> Vec<Block> {
        let head = ["seq", "point", "variant", "rep", "error"].map(String::from);
        let rows = self
            .rows
            .iter()
            .map(|r| {
                // A table cell is one line: an error's first says what failed.
                let first = r.error.lines().next().unwrap_or_default();
                vec![
                    r.seq.to_string(),
                    r.point.clone(),
                    r.variant.clone(),
                    r.rep.to_string(),
                    first.to_string(),
                ]
            })
            .collect();
        vec![
            Block::caption(format!(
                "{} failed measurements, never counted as results (their error's first line)",
                self.rows.len()
            )),
            Block::Table(Table::new(head.to_vec(), rows, vec![1, 2, 4])),
        ]
    }
    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::record::RunStatus;
    use perflab_core::{ParamValue, Params, WorkloadOutput};

    fn record(seq: u32, status: MeasurementStatus) -> MeasurementRecord {
        let mut params = Params::default();
        params.0.insert("size".into(), ParamValue::Int(4096));
        MeasurementRecord {
            seq,
            point: 0,
            params,
            variant: "base".into(),
            rep: seq,
            status,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: WorkloadOutput::default(),
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    fn run() -> RunInfo {
        RunInfo {
            id: 7,
            created_at: 1_700_000_000.0,
            study: "s".into(),
            workload: "null".into(),
            label: None,
            status: RunStatus::Complete,
            spec: serde_json::from_value(serde_json::json!({ "variants": [{"name": "base"}] }))
                .expect("a valid run spec"),
            fingerprint: perflab_core::Fingerprint::from_json(serde_json::json!({})),
            unavailable: Vec::new(),
            planned: 3,
            done: 2,
            failed: 1,
            ineffective: 0,
            uid: String::new(),
        }
    }

    /// Each failed measurement is a row with its error's first line; a run without one
    /// has no table (show and report print nothing for it).
    #[test]
    fn each_failed_measurement_is_a_row_with_its_error() {
        let ms = [
            record(0, MeasurementStatus::Ok),
            record(
                1,
                MeasurementStatus::Failed("exit 1\nstderr: no such device".into()),
            ),
            record(2, MeasurementStatus::Ineffective("knob".into())),
        ];
        let t = failure_table(&run(), &ms).expect("one failure");
        assert_eq!((t.rows.len(), t.rows[0].seq), (1, 1));
        let text = t.render(crate::section::Format::Text);
        assert!(text.contains("1 failed measurements"), "{text}");
        assert!(
            text.contains("exit 1") && !text.contains("no such device"),
            "{text}"
        );
        assert!(t.json().unwrap()["rows"][0]["error"]
            .as_str()
            .unwrap()
            .contains("no such device"));
        assert!(failure_table(&run(), &ms[..1]).is_none());
    }
}
