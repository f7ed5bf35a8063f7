use super::*;

#[test]
fn interleaved_threads_become_rows() {
    let p = ok("dmatest", "dmatest/dmesg_four_threads.txt");
    assert_eq!(p.rows.len(), 4);
    let r = row(&p, "thread", "dma0chan0-copy0");
    assert_metric(&r.metrics, "iops", 3522.29, Unit::PerSecond, Better::Higher);
    assert_metric(
        &r.metrics,
        "bandwidth_mib_s",
        28178.0 / 1024.0,
        Unit::MibPerSecond,
        Better::Higher,
    );
    assert_metric(&r.metrics, "failures", 0.0, Unit::Count, Better::Lower);
    assert_eq!(
        value(&row(&p, "thread", "dma0chan1-copy0").metrics, "failures"),
        2.0
    );
    assert_eq!(value(&p.metrics, "failures"), 2.0);
    assert_eq!(value(&p.metrics, "tests"), 4000.0);
    assert_eq!(value(&p.metrics, "threads"), 4.0);
    // No summed bandwidth: the lines do not say whether the threads overlapped.
    assert!(!has(&p.metrics, "bandwidth_mib_s"));
}

#[test]
fn truncated_line_is_bad_and_named() {
    let e = parse("dmatest", "dmatest/dmesg_truncated.txt").unwrap_err();
    let ParseError::Bad { line, why, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(*line, 2);
    assert!(why.contains("dma0chan0-copy0: summary 1000 tests"), "{why}");
    let e =
        (by_name("dmatest").unwrap().parse)("[ 1.0] dmatest: dma0chan0-copy0: summ").unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 1, .. }), "{e}");
}

#[test]
fn one_thread_is_a_single_result_and_bad_status_is_noted() {
    let text = "dmatest: Started 1 threads using dma0chan0\n\
                dmatest: dma0chan0-copy0: summary 10 tests, 0 failures 100.50 iops 800 KB/s (-5)\n";
    let p = (by_name("dmatest").unwrap().parse)(text).unwrap();
    assert!(p.rows.is_empty());
    assert_eq!(value(&p.metrics, "iops"), 100.5);
    assert!(
        p.notes.iter().any(|n| n.contains("status -5")),
        "{:?}",
        p.notes
    );
    let e = (by_name("dmatest").unwrap().parse)("dmatest: Started 1 threads using dma0chan0\n")
        .unwrap_err();
    assert!(matches!(e, ParseError::Bad { .. }), "{e}");
}
