//! The rows a span set leaves per measurement (the report reads exactly these):
//! source `trace`, no CPU, key `{set}.{span}:{stat}` for `count`, `p50`, `p90`, `p99`,
//! `mean`, `max` (ns) and `unmatched` (and, measured in the kernel, `lost_starts`,
//! `starts`, `ends`), label = the span's label, in the set's order. A
//! span with no match has only `count` (0) and `unmatched`, so a report can say it was
//! empty rather than show zeros as durations.
//!
//! Two rows describe the span rather than measure it, as values the report reads instead
//! of words: `:per_round_trip` (a span keyed by CPU, or chained after one: the matches per
//! round trip its set expects of the study's own work) and `:split` (a split span's value: its index, with
//! the value's name as the label).

use perflab_core::span_outline::{SplitValue, PER_ROUND_TRIP_STAT, SPLIT_STAT};
use perflab_core::{TelemetryRow, Unit};

use super::matcher::SpanResult;
use super::spans::Span;

pub const SOURCE: &str = "trace";

/// The rows of `results` (the set's spans, then their split values), `splits` being what
/// [`super::split::name_values`] returned for them.
pub fn rows(
    set: &str,
    spans: &[Span],
    results: &[SpanResult],
    splits: &[Option<SplitValue>],
) -> Vec<TelemetryRow> {
    let mut out = Vec::new();
    for (i, s) in results.iter().enumerate() {
        let split = splits.get(i).and_then(Option::as_ref);
        let row = |stat: &str, value: f64, unit| {
            TelemetryRow::new(
                SOURCE,
                format!("{set}.{}:{stat}", s.name),
                s.label.as_str(),
                None,
                value,
                unit,
            )
        };
        out.push(row("count", s.count() as f64, Unit::Count));
        match split {
            Some(v) => out.push(TelemetryRow::new(
                SOURCE,
                format!("{set}.{}:{SPLIT_STAT}", s.name),
                v.name.clone().unwrap_or_default(),
                None,
                f64::from(v.index),
                Unit::Count,
            )),
            None => {
                if let Some(span) = spans.iter().find(|d| d.name == s.name) {
                    if span.counts_cpu_events(spans) {
                        out.push(row(PER_ROUND_TRIP_STAT, span.per_round_trip, Unit::Count));
                    }
                }
            }
        }
        if s.count() > 0 {
            for (stat, q) in [("p50", 0.50), ("p90", 0.90), ("p99", 0.99)] {
                out.push(row(
                    stat,
                    s.hist.value_at_quantile(q) as f64,
                    Unit::Nanoseconds,
                ));
            }
            out.push(row("mean", s.mean_ns(), Unit::Nanoseconds));
            out.push(row("max", s.max_ns as f64, Unit::Nanoseconds));
        }
        out.push(row("unmatched", s.unmatched as f64, Unit::Count));
        if let Some(k) = s.kernel {
            out.push(row("lost_starts", k.lost_starts as f64, Unit::Count));
            out.push(row("starts", k.starts as f64, Unit::Count));
            out.push(row("ends", k.ends as f64, Unit::Count));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::matcher::Matcher;
    use crate::trace::spans::{built_in, parse_set};

    #[test]
    fn spans_keyed_by_cpu_say_what_they_expect_per_round_trip() {
        let cpu_keyed = |set: &str| -> Vec<(String, f64)> {
            let spans = built_in(set).unwrap().spans;
            spans
                .iter()
                .filter(|s| s.counts_cpu_events(&spans))
                .map(|s| (s.name.clone(), s.per_round_trip))
                .collect()
        };
        let two = |names: &[&str]| -> Vec<(String, f64)> {
            names.iter().map(|n| (n.to_string(), 2.0)).collect()
        };
        // Keyed by CPU, or chained after such a span (sched after wake, the VM spans after
        // vhost_wake): those follow whatever the first matched.
        let mut netrx = two(&["irq", "raise", "wake", "sched", "syscall"]);
        for vm in [
            "vhost_wake",
            "vhost_run",
            "vhost_irq",
            "vcpu_wake",
            "guest_entry",
        ] {
            netrx.push((vm.into(), 1.0));
        }
        assert_eq!(cpu_keyed("netrx"), netrx);
        assert_eq!(
            cpu_keyed("idlewake"),
            two(&["waking_ipi", "ipi_idle_exit", "idle_exit_run", "residency"])
        );
        assert_eq!(cpu_keyed("wakeup"), two(&["ipi_resched", "ipi_call"]));
        assert!(cpu_keyed("lock").is_empty());
    }

    #[test]
    fn a_split_value_is_a_row_of_its_own_with_index_and_name() {
        let spans = built_in("idlewake").unwrap().spans;
        let m = Matcher::new(spans.clone());
        let mut r = m.results();
        let mut state = r[2].clone();
        state.name = "ipi_idle_exit@C6".into();
        r.push(state);
        let mut splits = vec![None; r.len()];
        splits[r.len() - 1] = Some(SplitValue {
            index: 3,
            name: Some("C6".into()),
        });
        let rows = rows("idlewake", &spans, &r, &splits);
        let split: Vec<&TelemetryRow> = rows.iter().filter(|t| t.key.ends_with(":split")).collect();
        assert_eq!(split.len(), 1);
        assert_eq!(split[0].key, "idlewake.ipi_idle_exit@C6:split");
        assert_eq!((split[0].value, split[0].label.as_str()), (3.0, "C6"));
        // A state's rows carry no expectation of their own: the span's row does.
        assert!(rows
            .iter()
            .any(|t| t.key == "idlewake.ipi_idle_exit:per_round_trip"));
        assert!(!rows
            .iter()
            .any(|t| t.key == "idlewake.ipi_idle_exit@C6:per_round_trip"));
    }

    #[test]
    fn per_round_trip_must_be_a_count_above_zero() {
        let set = |n: &str| {
            format!(
                "name = \"t\"\n[[span]]\nname = \"s\"\nlabel = \"l\"\nper_round_trip = {n}\n\
                 from = {{ events = [\"irq:softirq_raise\"], key = \"cpu\" }}\n\
                 to = {{ events = [\"irq:softirq_entry\"], key = \"cpu\" }}\n"
            )
        };
        assert_eq!(
            parse_set(&set("3"), "f").unwrap().spans[0].per_round_trip,
            3.0
        );
        let err = parse_set(&set("0"), "f").unwrap_err();
        assert!(
            err.contains("per_round_trip") && err.starts_with("f: "),
            "{err}"
        );
        assert!(parse_set(&set("-1.5"), "f").is_err());
    }
}
