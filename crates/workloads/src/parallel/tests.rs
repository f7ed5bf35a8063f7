//! The verdict as a workload records it: metrics a report reads back, and the note. The
//! verdict itself is tested in `perflab_stats::parallel`.

use super::*;

const MIB: u64 = 1 << 20;

#[test]
fn records_become_spans_and_metrics_carry_the_verdict() {
    let rec = perflab_core::ThreadRecord {
        role: "dma0chan0-copy0".into(),
        start_ns: 0,
        end_ns: 1_000_000_000,
        bytes: Some(MIB),
        cpu_samples: vec![(3, 2)],
        ..Default::default()
    };
    let spans = spans_from_records(&[rec]);
    assert_eq!(spans[0].name, "dma0chan0-copy0");
    let v = judge(&spans, &Criteria::default());
    let m = metrics(&v);
    let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, METRIC_NAMES);
    let back = perflab_core::ParallelMetrics::from_metrics(&m).expect("the verdict reads back");
    assert_eq!((back.sum_valid, back.busy_measured), (true, Some(false)));
    assert_eq!(m[0].value, 1.0);
    assert_eq!(m[4].value, 1.0);
    // The records carry no CPU time: parallelism is from the intervals.
    assert_eq!(m[7].value, 0.0);
    assert!(notes(&v)[0].starts_with("summing per-thread bandwidths is valid"));
}

#[test]
fn a_note_says_why_summing_is_not_valid() {
    let span = |name: &str, start_s: u64, end_s: u64| Span {
        name: name.into(),
        start_ns: start_s * 1_000_000_000,
        end_ns: end_s * 1_000_000_000,
        bytes: MIB,
        busy_ns: Some(1_000_000_000),
        pinned_cpu: None,
        ..Default::default()
    };
    let v = judge(&[span("a", 0, 1), span("b", 2, 3)], &Criteria::default());
    let m = metrics(&v);
    assert_eq!(m[4].value, 0.0);
    assert_eq!(m[7].value, 1.0);
    let note = &notes(&v)[0];
    assert!(
        note.starts_with("summing per-thread bandwidths is NOT valid: 2 threads: ")
            && note.contains("; thread b started 1.00 s after thread a ended"),
        "{note}"
    );
}
