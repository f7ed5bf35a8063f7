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
fn truncated_line_is_skipped_with_a_note_naming_it() {
    // The truncated second summary no longer fails the parse: the readable one is kept.
    let p = ok("dmatest", "dmatest/dmesg_truncated.txt");
    assert!(p.rows.is_empty());
    assert_eq!(value(&p.metrics, "iops"), 3410.07);
    assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
    let n = &p.notes[0];
    assert!(n.starts_with("log line 2: "), "{n}");
    assert!(n.contains("dma0chan0-copy0: summary 1000 tests"), "{n}");
    assert!(n.contains("truncated") && n.ends_with("skipped"), "{n}");
    // With nothing readable it is an error at the unreadable line.
    let e =
        (by_name("dmatest").unwrap().parse)("[ 1.0] dmatest: dma0chan0-copy0: summ").unwrap_err();
    let ParseError::Bad { line, why, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(*line, 1);
    assert!(why.contains("truncated summary line"), "{why}");
}

#[test]
fn kmsg_records_and_garbled_lines_between_good_ones() {
    let text = "6,1,100,-;dmatest: Started 3 threads using dma0chan0\n\
                6,2,200,-;dmatest: dma0chan0-copy0: summary 10 tests, 0 failures 5.00 iops 80 KB/s (0)\n \
                SUBSYSTEM=dma\n\
                6,3,300,-;dmatest: dma0chan0-copy1: summary 10 tests, x failures 5.00 iops 80 KB/s (0)\n\
                6,4,400,-;dmatest: dma0chan0-copy2: result #1: 'data error' with len=0x10 (0)\n\
                6,5,500,-;dmatest: dma0chan0-copy2: summary 10 tests, 1 failures 4.00 iops 64 KB/s (0)\n";
    let p = (by_name("dmatest").unwrap().parse)(text).unwrap();
    assert_eq!(p.rows.len(), 2);
    assert_eq!(value(&p.metrics, "failures"), 1.0);
    assert_eq!(
        value(
            &row(&p, "thread", "dma0chan0-copy2").metrics,
            "bandwidth_mib_s"
        ),
        64.0 / 1024.0
    );
    let has_note = |s: &str| p.notes.iter().any(|n| n.contains(s));
    assert!(
        has_note("log line 4: \"x\" is not a whole number of failures"),
        "{:?}",
        p.notes
    );
    assert!(
        has_note("started 3 threads but the log holds 2"),
        "{:?}",
        p.notes
    );
    assert!(has_note("'data error'"), "{:?}", p.notes);
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
