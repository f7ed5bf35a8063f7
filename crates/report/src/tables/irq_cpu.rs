//! The interrupts on the CPU a workload was pinned to (its `cpu` parameter), one column
//! per variant: seed 003 asked whether a change to interrupt handling helped a fill, and
//! the answer needs what the interrupts did beside the bandwidth — the local timer (LOC,
//! the paced fill's own interrupt), the device rows, the IPIs — in `run` and `show`, not
//! only in `report`'s "what changed" list, which names significant rows only.

use perflab_core::record::{MeasurementRecord, RunId, RunInfo};
use perflab_core::{ParamRole, ParamRoles};
use serde::Serialize;

use crate::doc::{Block, Table};
use crate::fmt;
use crate::section::{Section, SectionId};
use crate::select::point_grid;
use crate::tables::TableId;
use crate::telemetry::{median_total, medians};

const SOURCE: &str = "interrupts";

/// Interrupt deltas on one CPU, per point, row by row, one value per variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrqCpuTable {
    pub run: RunId,
    pub cpu: u32,
    pub variants: Vec<String>,
    pub rows: Vec<IrqCpuRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrqCpuRow {
    /// The point's label (`all` when one point).
    pub point: String,
    /// `LOC Local timer interrupts`, `41 virtio3-rx`, or `Total`.
    pub name: String,
    /// Median per-measurement delta under each variant; `None` where it was not recorded.
    pub values: Vec<Option<f64>>,
}

/// The table, where every measurement ran pinned to one CPU (`cpu` ≥ 0) and recorded
/// interrupt deltas; `None` otherwise (CPU-pair studies have their drill-down instead).
pub fn irq_cpu_table(run: &RunInfo, ms: &[MeasurementRecord]) -> Option<IrqCpuTable> {
    let roles = crate::hints::param_roles(run);
    let cpu = pinned_cpu(&roles, ms)?;
    if !ms
        .iter()
        .any(|m| m.telemetry.iter().any(|t| t.source == SOURCE))
    {
        return None;
    }
    let (variants, labeler, points) = point_grid(&roles, ms);
    let mut rows = Vec::new();
    for point in points {
        let groups: Vec<Vec<&MeasurementRecord>> = variants
            .iter()
            .map(|v| {
                ms.iter()
                    .filter(|m| m.point == point && &m.variant == v)
                    .collect()
            })
            .collect();
        let Some(first) = groups.iter().find_map(|g| g.first()) else {
            continue;
        };
        let label = labeler.label(&first.params);
        let per_variant: Vec<_> = groups.iter().map(|g| medians(g, SOURCE)).collect();
        // Rows in the kernel's order as first seen, those moving on this CPU only.
        let mut ids: Vec<(String, String)> = Vec::new();
        for (med, _) in &per_variant {
            for r in med.iter().filter(|r| r.cpu == Some(cpu) && r.median > 0.0) {
                let id = (r.key.clone(), r.label.clone());
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        // The local timer first: it is the paced fill's own interrupt.
        ids.sort_by_key(|(key, _)| key != "LOC");
        for (key, desc) in ids {
            let values = per_variant
                .iter()
                .map(|(med, reps)| {
                    (*reps > 0).then(|| {
                        med.iter()
                            .find(|r| r.cpu == Some(cpu) && r.key == key && r.label == desc)
                            .map_or(0.0, |r| r.median)
                    })
                })
                .collect();
            rows.push(IrqCpuRow {
                point: label.clone(),
                name: row_name(&key, &desc),
                values,
            });
        }
        rows.push(IrqCpuRow {
            point: label.clone(),
            name: "Total".into(),
            values: groups
                .iter()
                .zip(&per_variant)
                .map(|(g, (_, reps))| (*reps > 0).then(|| median_total(g, SOURCE, cpu)))
                .collect(),
        });
    }
    (!rows.is_empty()).then_some(IrqCpuTable {
        run: run.id,
        cpu,
        variants,
        rows,
    })
}

/// The one CPU every measurement was pinned to (by the one parameter with a CPU's role).
fn pinned_cpu(roles: &ParamRoles, ms: &[MeasurementRecord]) -> Option<u32> {
    let name = roles.single(ParamRole::Cpu)?;
    let mut cpus = ms.iter().map(|m| m.params.int(name).ok());
    let first = cpus.next()??;
    (first >= 0 && cpus.all(|c| c == Some(first))).then_some(first as u32)
}

/// `41 virtio3-rx` for a device's numbered row (its action name, the last word of the
/// description), `LOC Local timer interrupts` for the kernel's named rows.
fn row_name(key: &str, desc: &str) -> String {
    if key.parse::<u32>().is_ok() {
        format!("{key} {}", desc.split_whitespace().last().unwrap_or(""))
    } else {
        format!("{key} {desc}")
    }
}

impl IrqCpuTable {
    pub fn to_blocks(&self) -> Vec<Block> {
        let points = {
            let mut p: Vec<&str> = self.rows.iter().map(|r| r.point.as_str()).collect();
            p.dedup();
            p.len()
        };
        let mut head = Vec::new();
        if points > 1 {
            head.push("point".to_string());
        }
        head.push("interrupt".to_string());
        head.extend(self.variants.iter().cloned());
        let left: Vec<usize> = (0..head.len() - self.variants.len()).collect();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut cells = Vec::new();
                if points > 1 {
                    cells.push(r.point.clone());
                }
                cells.push(r.name.clone());
                cells.extend(
                    r.values
                        .iter()
                        .map(|v| v.map_or("-".to_string(), fmt::count)),
                );
                cells
            })
            .collect();
        vec![
            Block::Caption(format!(
                "Interrupts on CPU {}, where the workload ran (medians over the repetitions \
                 of each measurement's deltas; rows that did not move left out)",
                self.cpu
            )),
            Block::Table(Table::new(head, rows, left)),
            Block::Note(
                "LOC is the local timer (a paced fill's own interrupt); numbered rows are \
                 devices; RES and CAL are IPIs from other CPUs"
                    .into(),
            ),
        ]
    }
}

impl Section for IrqCpuTable {
    fn id(&self) -> SectionId {
        SectionId::Table(TableId::Interrupts.as_str())
    }
    fn title(&self) -> String {
        format!("Interrupts on CPU {}", self.cpu)
    }
    fn blocks(&self) -> Vec<Block> {
        self.to_blocks()
    }
    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}
