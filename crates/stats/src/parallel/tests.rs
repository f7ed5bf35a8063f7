//! The verdict on synthetic interval sets, each with the verdict a person would give.

use proptest::prelude::*;

use super::*;
use perflab_core::note::Workers;
use perflab_core::CpuPath;

const MS: u64 = 1_000_000;
const MIB: u64 = 1 << 20;

/// The verdict's reasons in threads' words.
fn words(v: &Verdict) -> Vec<String> {
    v.reasons.iter().map(|r| r.text(Workers::Threads)).collect()
}

fn span(name: &str, start_ms: u64, end_ms: u64, mib: u64, cpu: u32) -> Span {
    Span {
        name: name.into(),
        start_ns: start_ms * MS,
        end_ns: end_ms * MS,
        bytes: mib * MIB,
        busy_ns: None,
        pinned_cpu: Some(cpu),
        cpu_samples: vec![(cpu, 10)],
        cpu_path: CpuPath::default(),
    }
}

fn judged(spans: &[Span]) -> Verdict {
    judge(spans, &Criteria::default())
}

#[test]
fn fully_overlapping_threads_on_their_own_cpus_may_be_summed() {
    // Four threads, 1 s each, 100 MiB each, one per CPU, starting within 1 ms.
    let spans: Vec<Span> = (0..4)
        .map(|i| span(&format!("t{i}"), i, 1000 + i, 100, i as u32))
        .collect();
    let v = judged(&spans);
    assert!(v.sum_valid, "{:?}", v.reasons);
    assert!(v.reasons.is_empty());
    assert!(v.overlap > 0.99, "{}", v.overlap);
    assert!((v.parallelism - 3.988).abs() < 0.01, "{}", v.parallelism);
    assert!((v.aggregate_mib_s - 400.0 / 1.003).abs() < 0.01);
    assert!((v.summed_mib_s - 400.0).abs() < 1e-6);
    assert!(v.shared.is_empty());
}

#[test]
fn staggered_threads_that_never_met_may_not_be_summed() {
    // Serialised in time: each thread starts 41 ms after the previous one ended.
    let spans = vec![
        span("t0", 0, 100, 100, 0),
        span("t1", 141, 241, 100, 1),
        span("t2", 282, 382, 100, 2),
        span("t3", 423, 523, 100, 3),
    ];
    let v = judged(&spans);
    assert!(!v.sum_valid);
    assert_eq!(v.overlap, 0.0);
    assert_eq!(
        words(&v)[0],
        "thread t3 started 323 ms after thread t0 ended: they never ran together"
    );
    // 4 × 1000 MiB/s summed against 400 MiB over 523 ms.
    assert!((v.summed_mib_s - 4000.0).abs() < 1e-6);
    assert!((v.aggregate_mib_s - 400.0 / 0.523).abs() < 0.01);
    assert!(
        words(&v).iter().any(|r| r.contains("5.23× the aggregate")),
        "{:?}",
        words(&v)
    );
    assert!((v.parallelism - 400.0 / 523.0).abs() < 1e-9);
}

#[test]
fn two_threads_back_to_back_name_the_gap() {
    let v = judged(&[span("0", 0, 50, 10, 0), span("3", 91, 150, 10, 1)]);
    assert_eq!(
        words(&v)[0],
        "thread 3 started 41.0 ms after thread 0 ended: they never ran together"
    );
}

#[test]
fn one_straggler_is_named_with_its_tail() {
    // Three threads end at 1000 ms, one runs on to 1500 ms.
    let mut spans: Vec<Span> = (0..3)
        .map(|i| span(&format!("t{i}"), 0, 1000, 100, i))
        .collect();
    spans.push(span("slow", 0, 1500, 100, 3));
    let v = judged(&spans);
    assert!(!v.sum_valid);
    assert!((v.overlap - 1000.0 / 1500.0).abs() < 1e-9);
    assert!(
        words(&v)
            .iter()
            .any(|r| r == "thread slow ran on for 500 ms (33% of the window) after thread t0 ended"),
        "{:?}",
        words(&v)
    );
    assert!(v
        .reasons
        .iter()
        .map(|r| r.text(Workers::Threads))
        .collect::<Vec<_>>()
        .iter()
        .any(|r| r.contains("only 67% of the window")));
    assert!(v.shared.is_empty());
}

#[test]
fn late_starter_is_named() {
    let mut spans: Vec<Span> = (0..3)
        .map(|i| span(&format!("t{i}"), 0, 1000, 100, i))
        .collect();
    spans.push(span("late", 300, 1000, 70, 3));
    let v = judged(&spans);
    assert!(!v.sum_valid);
    assert!(
        words(&v)
            .iter()
            .any(|r| r == "thread late started 300 ms (30% of the window) after thread t0"),
        "{:?}",
        words(&v)
    );
}

#[test]
fn threads_serialised_on_one_cpu_are_not_summed() {
    // Four threads pinned to CPU 0 take turns for the whole second: intervals overlap
    // fully, but each had the CPU a quarter of the time (its measured CPU time).
    let spans: Vec<Span> = (0..4)
        .map(|i| Span {
            busy_ns: Some(250 * MS),
            ..span(&format!("c0t{i}"), 0, 1000, 25, 0)
        })
        .collect();
    let v = judged(&spans);
    assert!(!v.sum_valid);
    assert!(v.overlap > 0.99);
    assert_eq!(v.shared.len(), 1);
    assert_eq!((v.shared[0].cpu, v.shared[0].threads), (0, 4));
    assert!(v.shared[0].pinned);
    assert_eq!(
        words(&v)[0],
        "4 threads pinned to CPU 0 shared it for 100% of the window"
    );
    assert!((v.parallelism - 1.0).abs() < 1e-9);
    assert!(
        words(&v)
            .iter()
            .any(|r| r.starts_with("effective parallelism 1.00 of 4 threads")),
        "{:?}",
        words(&v)
    );
    // The sum equals the aggregate here: summing gives the right total, yet the threads
    // did not run in parallel.
    assert!((v.summed_mib_s - v.aggregate_mib_s).abs() < 1e-6);
}

#[test]
fn sharing_by_samples_is_an_estimate_and_says_so() {
    let mut a = span("a", 0, 1000, 10, 5);
    let mut b = span("b", 400, 1000, 10, 5);
    let c = span("c", 0, 1000, 10, 1);
    a.pinned_cpu = None;
    b.pinned_cpu = None;
    b.cpu_samples = vec![(5, 7), (2, 3)];
    let v = judged(&[a, b, c]);
    assert!(
        words(&v)
            .iter()
            .any(|r| r == "2 threads shared CPU 5 (by their CPU samples) for 60% of the window"),
        "{:?}",
        words(&v)
    );
}

/// Two threads that each moved once: by their majority CPU both lived on CPU 0 for the
/// whole second; their paths say they were there together only from 300 to 700 ms.
#[test]
fn cpu_paths_place_sharing_in_time() {
    let moved = |name: &str, path: Vec<(u64, u32)>, samples: Vec<(u32, u64)>| Span {
        pinned_cpu: None,
        cpu_samples: samples,
        cpu_path: CpuPath {
            changes: path,
            unknown_after: None,
        },
        ..span(name, 0, 1000, 100, 0)
    };
    let a = moved("a", vec![(0, 0), (700 * MS, 1)], vec![(0, 7), (1, 3)]);
    let b = moved("b", vec![(0, 1), (300 * MS, 0)], vec![(1, 3), (0, 7)]);
    let v = judged(&[a.clone(), b.clone()]);
    assert_eq!(v.shared.len(), 1, "{:?}", v.shared);
    assert_eq!((v.shared[0].cpu, v.shared[0].threads), (0, 2));
    assert!((v.shared[0].fraction - 0.4).abs() < 1e-9, "{:?}", v.shared);
    assert!(!v.shared[0].pinned);
    // Without their paths the same threads are placed on CPU 0 for all of it.
    let strip = |s: Span| Span {
        cpu_path: CpuPath::default(),
        ..s
    };
    let v = judged(&[strip(a), strip(b)]);
    assert!((v.shared[0].fraction - 1.0).abs() < 1e-9, "{:?}", v.shared);
}

#[test]
fn more_threads_than_cpus_seen_is_a_reason_even_without_homes() {
    let spans: Vec<Span> = (0..3)
        .map(|i| Span {
            pinned_cpu: None,
            cpu_samples: vec![(0, 5), (1, 5)],
            ..span(&format!("t{i}"), 0, 1000, 10, 0)
        })
        .collect();
    let v = judged(&spans);
    assert!(
        words(&v).iter().any(|r| r == "3 threads ran on 2 CPUs"),
        "{:?}",
        words(&v)
    );
}

#[test]
fn one_thread_is_trivially_valid_and_degenerate_input_is_explained() {
    let v = judged(&[span("only", 0, 10, 1, 0)]);
    assert!(v.sum_valid && v.reasons.is_empty());
    let v = judged(&[]);
    assert!(!v.sum_valid);
    assert_eq!(words(&v), vec!["no thread records to judge"]);
    let backwards = Span {
        start_ns: 10,
        end_ns: 5,
        ..span("b", 0, 0, 1, 0)
    };
    let v = judged(&[backwards, span("ok", 0, 10, 1, 1)]);
    assert_eq!(v.threads, 1);
    assert!(words(&v)[0].contains("thread b left out"));
    let v = judged(&[span("z", 5, 5, 1, 0)]);
    assert!(!v.sum_valid && words(&v)[0].contains("window is empty"));
}

#[test]
fn records_become_spans_named_by_role_or_index() {
    let rec = perflab_core::ThreadRecord {
        role: "dma0chan0-copy0".into(),
        start_ns: 0,
        end_ns: 1_000_000_000,
        bytes: Some(MIB),
        cpu_samples: vec![(3, 2)],
        ..Default::default()
    };
    let unnamed = perflab_core::ThreadRecord {
        role: String::new(),
        bytes: None,
        ..rec.clone()
    };
    let spans = spans_from_records(&[rec, unnamed.clone(), unnamed]);
    assert_eq!(spans[0].name, "dma0chan0-copy0");
    assert_eq!((spans[0].bytes, spans[0].busy_ns), (MIB, None));
    assert_eq!(spans[2].name, "2");
    assert_eq!(spans[2].bytes, 0);
    let v = judged(&spans[..1]);
    assert!(v.sum_valid);
    assert_eq!(v.aggregate_mib_s, 1.0);
}

/// Two threads that each ran a quarter of their interval: with their CPU time measured
/// the workload says so; read back from a store (CPU time not kept), the stored
/// parallelism gives the same verdict, reason for reason.
#[test]
fn a_stored_verdict_recomputes_as_the_workload_gave_it() {
    let mut spans: Vec<Span> = (0..2)
        .map(|i| span(&format!("t{i}"), 0, 1000, 100, i))
        .collect();
    for s in &mut spans {
        s.busy_ns = Some(250 * MS);
    }
    let given = judged(&spans);
    assert!(!given.sum_valid);
    assert!(words(&given)[0].starts_with("effective parallelism 0.50 of 2 threads"));
    let stored: Vec<Span> = spans
        .iter()
        .map(|s| Span {
            busy_ns: None,
            ..s.clone()
        })
        .collect();
    let again = judge_stored(&stored, &Criteria::default(), Some(given.parallelism));
    assert_eq!(again, given);
    // Without the stored parallelism the intervals count as busy: no such reason.
    let blind = judge_stored(&stored, &Criteria::default(), None);
    assert!(blind.sum_valid, "{:?}", blind.reasons);
}

fn arb_span() -> impl Strategy<Value = Span> {
    (
        0u64..u64::MAX,
        0u64..u64::MAX,
        any::<u64>(),
        proptest::option::of(any::<u64>()),
        proptest::option::of(0u32..8),
        proptest::collection::vec((0u32..8, any::<u64>()), 0..4),
        proptest::collection::vec((any::<u64>(), 0u32..8), 0..4),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(
            |(start_ns, end_ns, bytes, busy_ns, pinned_cpu, cpu_samples, changes, unknown)| Span {
                name: "p".into(),
                start_ns,
                end_ns,
                bytes,
                busy_ns,
                pinned_cpu,
                cpu_samples,
                cpu_path: CpuPath {
                    changes,
                    unknown_after: unknown,
                },
            },
        )
}

proptest! {
    #[test]
    fn never_panics_on_random_intervals(spans in proptest::collection::vec(arb_span(), 0..12)) {
        let v = judge(&spans, &Criteria::default());
        prop_assert!(v.overlap >= 0.0 && v.overlap <= 1.0);
        prop_assert!(v.sum_valid == v.reasons.is_empty() || v.threads == 0);
        for s in &v.shared {
            prop_assert!(s.fraction > 0.0 && s.fraction <= 1.0);
        }
    }

    #[test]
    fn a_stored_verdict_equals_the_given_one_on_random_intervals(
        spans in proptest::collection::vec(arb_span(), 0..8)
    ) {
        let given = judge(&spans, &Criteria::default());
        let stored: Vec<Span> = spans.iter().map(|s| Span { busy_ns: None, ..s.clone() }).collect();
        let measured = given.busy_measured.then_some(given.parallelism);
        let again = judge_stored(&stored, &Criteria::default(), measured);
        // NaN never equals itself; the verdicts otherwise agree field by field.
        prop_assert_eq!(again.sum_valid, given.sum_valid);
        prop_assert_eq!(&again.reasons, &given.reasons);
        prop_assert_eq!(again.busy_measured, given.busy_measured);
    }

    #[test]
    fn small_realistic_intervals_keep_their_invariants(
        raw in proptest::collection::vec((0u64..1000, 1u64..1000, 0u32..4), 1..10)
    ) {
        let spans: Vec<Span> = raw
            .iter()
            .enumerate()
            .map(|(i, &(s, len, cpu))| span(&i.to_string(), s, s + len, 1, cpu))
            .collect();
        let v = judge(&spans, &Criteria::default());
        prop_assert!(v.parallelism <= spans.len() as f64 + 1e-9);
        prop_assert!(v.summed_mib_s + 1e-6 >= v.aggregate_mib_s);
        prop_assert!(v.window_ns > 0);
    }
}
