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
    let why = why_apart(&[NOTE.to_string(), idle.to_string()]);
    assert!(why.contains("no switch away from idle on CPU 1"), "{why}");
    let lost = "trace: the kernel dropped 12 events (buffer full); spans open across them were \
                not counted";
    assert!(why_apart(&[lost.into(), idle.into()]).starts_with("the kernel dropped 12"));
    assert_eq!(why_apart(&[]), "the backends matched different events");
}

const NOTE: &str = perflab_monitors::trace::NOTE_TEXT;
