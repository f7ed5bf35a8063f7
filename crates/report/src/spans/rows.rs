//! Reading the `trace` monitor's telemetry: per measurement and span, rows keyed
//! `{set}.{span}:{stat}` (count, p50, p90, p99, mean, max in ns, unmatched), labelled with
//! the span's human name, in the set's declaration order (the order of the spans along a
//! packet's way). The monitor disturbs the workload, so it runs in telemetry repetitions
//! only: these rows describe where the time goes, never a result.

use perflab_core::record::{MeasurementRecord, MeasurementStatus};
use perflab_core::span_outline::{SplitValue, SPLIT_STAT};

use crate::select::telemetry_records;

/// The source name of the monitor whose rows are spans (its hints say so): the first in
/// registry order; empty where none is registered.
pub fn source() -> &'static str {
    crate::hints::monitors()
        .into_iter()
        .find(|d| d.rows().is_some_and(|h| h.spans))
        .map_or("", |d| d.name)
}
/// Statistics of a span's distribution, in ns.
pub const PERCENTILES: [&str; 3] = ["p50", "p90", "p99"];

/// One span as the monitor declared it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanId {
    /// `netrx.wakeup`: the set, a dot, the span.
    pub key: String,
    /// `(b) softirq NET_RX → receiver woken`; the key when the monitor gave none.
    pub label: String,
}

impl SpanId {
    /// The span set (`netrx`).
    pub fn set(&self) -> &str {
        self.key.split_once('.').map_or(&self.key, |(s, _)| s)
    }
}

/// `netrx.wakeup:p50` → (`netrx.wakeup`, `p50`); `None` for a key without a statistic.
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.rsplit_once(':')
        .filter(|(span, stat)| !span.is_empty() && !stat.is_empty() && span.contains('.'))
}

/// Whether any successful measurement carries span rows.
pub fn has_spans(ms: &[MeasurementRecord]) -> bool {
    let src = source();
    ms.iter()
        .any(|m| m.status == MeasurementStatus::Ok && m.telemetry.iter().any(|t| t.source == src))
}

/// The measurements of `group` whose span rows describe it: the telemetry repetitions
/// that ran the monitor (or headline ones, should a run ever carry it there).
pub fn span_records<'a>(group: &[&'a MeasurementRecord]) -> Vec<&'a MeasurementRecord> {
    telemetry_records(group, source())
}

/// The spans of `records` in declaration order: the order their rows first appear,
/// reading the measurements in the order they ran.
pub fn span_ids(records: &[&MeasurementRecord]) -> Vec<SpanId> {
    let mut sorted: Vec<&MeasurementRecord> = records.to_vec();
    sorted.sort_by_key(|m| m.seq);
    let mut out: Vec<SpanId> = Vec::new();
    let src = source();
    for m in sorted {
        for t in m.telemetry.iter().filter(|t| t.source == src) {
            let Some((span, stat)) = split_key(&t.key) else {
                continue;
            };
            // A split value's row is labelled with the value's name, not the span's.
            let label = if stat == SPLIT_STAT { "" } else { &t.label };
            match out.iter_mut().find(|s| s.key == span) {
                Some(s) => {
                    if s.label == s.key && !label.is_empty() {
                        s.label = label.to_string();
                    }
                }
                None => out.push(SpanId {
                    key: span.to_string(),
                    label: if label.is_empty() {
                        span.to_string()
                    } else {
                        label.to_string()
                    },
                }),
            }
        }
    }
    out
}

/// The value of `{span}:{stat}` in one measurement; `None` when the row is absent or not
/// finite.
pub fn value(m: &MeasurementRecord, span: &str, stat: &str) -> Option<f64> {
    let (src, key) = (source(), format!("{span}:{stat}"));
    m.telemetry
        .iter()
        .find(|t| t.source == src && t.key == key)
        .map(|t| t.value)
        .filter(|v| v.is_finite())
}

/// The value a split span's row `span` (`idlewake.ipi_idle_exit@C6`) holds, as the
/// monitor recorded it: the index as the `:split` row's value, the name as its label.
/// `None` where no measurement has the row (a run stored before the monitor left it).
pub fn split_value(records: &[&MeasurementRecord], span: &str) -> Option<SplitValue> {
    let (src, key) = (source(), format!("{span}:{SPLIT_STAT}"));
    records
        .iter()
        .flat_map(|m| m.telemetry.iter())
        .find(|t| t.source == src && t.key == key)
        .filter(|t| t.value.is_finite() && t.value >= 0.0 && t.value <= f64::from(u32::MAX))
        .map(|t| SplitValue {
            index: t.value as u32,
            name: (!t.label.is_empty()).then(|| t.label.clone()),
        })
}

/// Per repetition of `records` that recorded the span: its matches (the count row).
pub fn counts(records: &[&MeasurementRecord], span: &str) -> Vec<f64> {
    records
        .iter()
        .filter_map(|m| value(m, span, "count"))
        .collect()
}

/// Per repetition in which the span matched at least once: `stat` in µs. A repetition
/// without a match has no distribution to read a percentile from.
pub fn stat_us(records: &[&MeasurementRecord], span: &str, stat: &str) -> Vec<f64> {
    records
        .iter()
        .filter(|m| value(m, span, "count").is_some_and(|c| c > 0.0))
        .filter_map(|m| value(m, span, stat))
        .map(|ns| ns / 1000.0)
        .collect()
}

/// The monitor's notes (events this kernel lacks, spans skipped, events dropped), once
/// each. Notes that differ only in their numbers (`dropped 1200 events` in every
/// repetition) are one line: the first, and how many more there were like it.
pub fn notes(ms: &[MeasurementRecord]) -> Vec<String> {
    let prefix = format!("{}:", source());
    let mut out: Vec<(String, String, usize)> = Vec::new();
    for n in ms.iter().flat_map(|m| m.output.notes.iter()) {
        if !n.starts_with(&prefix) {
            continue;
        }
        let shape = shape(n);
        match out.iter_mut().find(|(s, _, _)| *s == shape) {
            Some((_, first, more)) => *more += usize::from(first != n),
            None => out.push((shape, n.clone(), 0)),
        }
    }
    out.into_iter()
        .map(|(_, first, more)| match more {
            0 => first,
            k => format!("{first} (and {k} more like it)"),
        })
        .collect()
}

/// A note with every run of digits as `#`.
fn shape(note: &str) -> String {
    let mut out = String::with_capacity(note.len());
    let mut in_number = false;
    for c in note.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_at_the_last_colon() {
        assert_eq!(split_key("netrx.wakeup:p50"), Some(("netrx.wakeup", "p50")));
        assert_eq!(
            split_key("lock.wait:unmatched"),
            Some(("lock.wait", "unmatched"))
        );
        assert_eq!(split_key("nodot:p50"), None);
        assert_eq!(split_key("netrx.x"), None);
        assert_eq!(split_key("netrx.x:"), None);
    }

    #[test]
    fn notes_that_differ_in_numbers_only_are_one_line() {
        let rec = |notes: &[&str]| MeasurementRecord {
            seq: 0,
            point: 0,
            params: Default::default(),
            variant: "v".into(),
            rep: 0,
            status: MeasurementStatus::Ok,
            started_at: 0.0,
            elapsed_s: 1.0,
            output: perflab_core::WorkloadOutput {
                notes: notes.iter().map(|n| n.to_string()).collect(),
                ..Default::default()
            },
            telemetry: Vec::new(),
            role: Default::default(),
            monitors: Vec::new(),
        };
        let ms = [
            rec(&[
                "trace: dropped 12 events",
                "trace: no kvm:kvm_entry",
                "counters: x",
            ]),
            rec(&["trace: dropped 7 events", "trace: no kvm:kvm_entry"]),
            rec(&["trace: dropped 12 events", "trace: dropped 3 events"]),
        ];
        assert_eq!(
            notes(&ms),
            [
                "trace: dropped 12 events (and 2 more like it)",
                "trace: no kvm:kvm_entry",
            ]
        );
    }
}
