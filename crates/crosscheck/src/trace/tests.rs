use super::*;
use perflab_core::Unit;

fn row(key: &str, value: f64) -> TelemetryRow {
    TelemetryRow::new("trace", key, "label", None, value, Unit::Nanoseconds)
}

#[test]
fn spans_are_read_from_the_trace_rows_in_order() {
    let rows = vec![
        row("netrx.raise:count", 10.0),
        row("netrx.raise:p50", 1234.0),
        row("netrx.raise:p90", 2000.0),
        row("netrx.raise:unmatched", 3.0),
        row("netrx.irq:count", 0.0),
        TelemetryRow::new("irq", "netrx.x:p50", "", None, 1.0, Unit::Count),
    ];
    let s = spans(&rows);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].0, "netrx.raise");
    assert_eq!(s[0].1.count, 10.0);
    assert_eq!(s[0].1.p50, Some(1234.0));
    assert_eq!(s[0].1.values, vec![1234.0, 2000.0]);
    assert_eq!((s[1].0.as_str(), s[1].1.p50), ("netrx.irq", None));
}

#[test]
fn the_allowance_is_one_us_or_five_percent() {
    assert_eq!(allowed_ns(3_000.0), 1_000.0);
    assert_eq!(allowed_ns(40_000.0), 2_000.0);
}

#[test]
fn whole_microseconds_are_told_apart() {
    assert_eq!(sub_us(&[1000.0, 2000.0, 15_000.0]), 0);
    // A whole µs as an HDR histogram returns it is still whole.
    assert_eq!(sub_us(&[4001.0, 28_015.0, 0.0]), 0);
    assert_eq!(sub_us(&[533.0, 3783.0, 28_095.0, 1000.0]), 3);
}

#[test]
fn medians_of_rounds() {
    assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(vec![4.0, 1.0]), Some(2.5));
    assert_eq!(median(vec![]), None);
}

#[test]
fn spans_are_compared_only_where_both_matched_about_as_many() {
    assert!(comparable(3_635.0, 3_426.0));
    assert!(comparable(1_000.0, 1_100.0));
    // This guest's text backend: half of the wake-ups (CPU 1's) never recorded.
    assert!(!comparable(6_185.0, 11_888.0));
    assert!(!comparable(0.0, 0.0));
    assert!(!comparable(0.0, 10.0));
}

#[test]
fn why_the_backends_saw_different_events() {
    let idle = "trace: tracefs recorded 334 switches to idle on CPU 1 and none away from it: \
                this kernel's ring buffer drops them, so spans ending at a wake-up from idle \
                there are missing (the BPF backend sees them)";
    let why = why_apart(&[NOTE.to_string(), idle.to_string(), idle.to_string()]);
    assert!(why.contains("no switch away from idle on CPU 1:"), "{why}");
    let lost = "trace: the kernel dropped 12 events (buffer full); spans open across them were \
                not counted";
    assert!(why_apart(&[lost.into(), idle.into()]).starts_with("the kernel dropped 12"));
    assert_eq!(why_apart(&[]), "the backends matched different events");
}

const NOTE: &str = perflab_monitors::trace::NOTE_TEXT;

#[test]
fn the_checked_spans_are_netrx_host_spans_restricted_to_netrr_threads() {
    use perflab_monitors::trace::spans::{built_in, parse_set, Span};
    let ours = parse_set(SPANS, "crosscheck trace").unwrap();
    let netrx = built_in("netrx").unwrap();
    assert_eq!(ours.name, netrx.name);
    let host: Vec<Span> = netrx
        .spans
        .into_iter()
        .filter(|s| s.when.is_none())
        .collect();
    // Without their task filters, the same spans as the built-in set's, in its order.
    let unfiltered = |s: &Span| {
        let mut s = s.clone();
        for side in [Some(&mut s.from), Some(&mut s.to), s.cancel.as_mut()]
            .into_iter()
            .flatten()
        {
            side.filters.retain(|f| !f.field.ends_with("comm"));
        }
        s
    };
    let a: Vec<Span> = ours.spans.iter().map(unfiltered).collect();
    assert_eq!(a, host);
    // Every wake-up and switch a span takes is one of netrr's threads'.
    for s in &ours.spans {
        for side in [Some(&s.from), Some(&s.to), s.cancel.as_ref()]
            .into_iter()
            .flatten()
        {
            if side.events.iter().any(|(sys, _)| sys == "sched") {
                assert!(
                    side.filters.iter().any(|f| f.accepts("netrr-udp-respo")
                        && f.accepts("perflab")
                        && !f.accepts("rustc")),
                    "span {}",
                    s.name
                );
            }
        }
    }
}
