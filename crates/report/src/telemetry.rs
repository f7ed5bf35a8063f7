//! Telemetry of repeated measurements reduced to one figure per row: the median over
//! the repetitions, so that one disturbed repetition does not paint the picture.

use perflab_core::record::MeasurementRecord;
use perflab_core::KeyMatch;

use crate::select::telemetry_records;

/// One telemetry row's median over the repetitions that recorded its source.
#[derive(Clone, Debug, PartialEq)]
pub struct MedianRow {
    pub key: String,
    pub label: String,
    pub cpu: Option<u32>,
    pub median: f64,
}

/// Medians of the rows of `source` over the successful records, in the order the rows
/// first appear (the kernel's own order, e.g. that of /proc/interrupts). Rows are told
/// apart by (key, label, cpu): POWER has two `LOC` rows with different labels. A row
/// absent from a repetition that did record the source counts as 0 there, since
/// monitors may leave out zero deltas. Returns the medians and how many repetitions
/// recorded the source.
pub fn medians(records: &[&MeasurementRecord], source: &str) -> (Vec<MedianRow>, usize) {
    let reps = telemetry_records(records, source);
    let mut ids: Vec<(&str, &str, Option<u32>)> = Vec::new();
    for m in &reps {
        for t in m.telemetry.iter().filter(|t| t.source == source) {
            let id = (t.key.as_str(), t.label.as_str(), t.cpu);
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let rows = ids
        .into_iter()
        .map(|(key, label, cpu)| {
            let values: Vec<f64> = reps
                .iter()
                .map(|m| {
                    m.telemetry
                        .iter()
                        .filter(|t| {
                            t.source == source && t.key == key && t.label == label && t.cpu == cpu
                        })
                        .map(|t| t.value)
                        .sum()
                })
                .collect();
            MedianRow {
                key: key.to_string(),
                label: label.to_string(),
                cpu,
                median: median(values),
            }
        })
        .collect();
    (rows, reps.len())
}

/// Median over the repetitions of the per-repetition sum of `source` rows on `cpu`.
pub fn median_total(records: &[&MeasurementRecord], source: &str, cpu: u32) -> f64 {
    median_total_where(records, source, cpu, KeyMatch::Any)
}

/// Like [`median_total`], over the rows whose key matches `keys` (`{state}:time` of idle
/// states).
pub fn median_total_where(
    records: &[&MeasurementRecord],
    source: &str,
    cpu: u32,
    keys: KeyMatch,
) -> f64 {
    let totals: Vec<f64> = telemetry_records(records, source)
        .into_iter()
        .map(|m| {
            m.telemetry
                .iter()
                .filter(|t| t.source == source && t.cpu == Some(cpu) && keys.matches(&t.key))
                .map(|t| t.value)
                .sum()
        })
        .collect();
    median(totals)
}

/// 0 when nothing was recorded: a telemetry row absent from every repetition is a zero delta.
fn median(v: Vec<f64>) -> f64 {
    perflab_stats::median(v).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::record::MeasurementStatus;
    use perflab_core::{TelemetryRow, Unit, WorkloadOutput};

    fn rec(rows: Vec<TelemetryRow>) -> MeasurementRecord {
        MeasurementRecord {
            seq: 0,
            point: 0,
            params: Default::default(),
            variant: "v".into(),
            rep: 0,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: WorkloadOutput::default(),
            telemetry: rows,
            role: Default::default(),
            monitors: Vec::new(),
        }
    }

    fn irq(key: &str, label: &str, cpu: u32, v: f64) -> TelemetryRow {
        TelemetryRow::new("interrupts", key, label, Some(cpu), v, Unit::Count)
    }

    #[test]
    fn medians_keep_same_named_rows_apart_and_fill_zeros() {
        let r1 = rec(vec![
            irq("LOC", "timer", 4, 10.0),
            irq("LOC", "others", 4, 1.0),
        ]);
        let r2 = rec(vec![
            irq("LOC", "timer", 4, 30.0),
            irq("LOC", "others", 4, 3.0),
        ]);
        let r3 = rec(vec![irq("LOC", "timer", 4, 20.0)]);
        let r4 = rec(vec![]);
        let all = [&r1, &r2, &r3, &r4];
        let (rows, reps) = medians(&all, "interrupts");
        assert_eq!(reps, 3);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].label.as_str(), rows[0].median), ("timer", 20.0));
        // r3 recorded interrupts without the "others" row: 0 there, median of 1, 3, 0.
        assert_eq!((rows[1].label.as_str(), rows[1].median), ("others", 1.0));
        assert_eq!(median_total(&all, "interrupts", 4), 20.0);
        assert_eq!(medians(&all, "cpuidle"), (vec![], 0));
    }
}
