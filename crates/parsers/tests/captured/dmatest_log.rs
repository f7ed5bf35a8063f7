//! The dmatest log scanner on the dmatest workload's constructed log fixtures
//! (tests/fixtures/dmatest-4chan/log, made by tests/fixtures/make_dmatest_fixtures.py in
//! the kernel's formats) and on odd and random lines.

use std::path::{Path, PathBuf};

use perflab_parsers::dmatest_log::scan;
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

#[test]
fn interleaved_dmesg_lines_give_every_thread_and_skip_the_bad_ones() {
    let text = std::fs::read(fixture("dmatest-4chan/log/run-4x4.dmesg")).unwrap();
    let s = scan(&text[..], None);
    assert_eq!(s.summaries.len(), 16);
    assert_eq!(s.started.len(), 4);
    assert!(s.started.iter().all(|(_, n)| *n == 4));
    let first = &s.summaries[0];
    assert_eq!(first.thread, "dma1chan1-copy1");
    assert_eq!((first.tests, first.failures, first.status), (2000, 0, 0));
    assert_eq!(first.iops, 3429.07);
    assert_eq!(first.kib_s, 54865.0);
    assert_eq!(first.ts_us, Some(5_000_583_774));
    assert_eq!(s.skipped.len(), 2, "{:?}", s.skipped);
    assert_eq!((s.skipped[0].line, s.skipped[1].line), (15, 16));
    assert!(s.skipped[0].to_string().starts_with("log line 15: "));
    assert!(
        s.skipped[0]
            .why
            .contains("\"fail\" where \"failures\" belongs"),
        "{:?}",
        s.skipped
    );
    assert!(s.skipped[0].why.ends_with("skipped"));
    assert!(
        s.skipped[1]
            .why
            .contains("\"many\" is not a whole number of tests"),
        "{:?}",
        s.skipped
    );
    assert_eq!(s.last_seq, None);
}

#[test]
fn kmsg_records_of_an_earlier_run_are_left_out() {
    let text = std::fs::read(fixture("dmatest-4chan/log/run-4x4.kmsg")).unwrap();
    let all = scan(&text[..], None);
    assert_eq!(all.summaries.len(), 16);
    assert_eq!(all.last_seq, Some(28));
    // Records up to seq 20 (the first summaries) belong to "an earlier run".
    let later = scan(&text[..], Some(20));
    assert_eq!(later.summaries.len(), 8);
    assert_eq!(later.started.len(), 0);
}

#[test]
fn odd_lines_are_skipped_or_ignored_never_fatal() {
    let log = "\
6,1,100,-;dmatest: dma0chan0-copy0: summ\n\
6,2,200,-;dmatest: dma0chan0-copy0: summary 10 tests, 0 failures 5.00 iops 80 KB/s (0) extra\n\
 SUBSYSTEM=dma\n\
6,3,300,-;dmatest: dma0chan0-copy0: result #1: 'data error' with src_off=0x0 dst_off=0x0 len=0x10 (0)\n\
6,4,400,-;dmatest: dma0chan0 copy0: summary 1 tests, 0 failures 1 iops 1 KB/s (0)\n\
6,5,500,-;dmatest: dma0chan0-copy0: summary 10 tests, 1 failures 5 iops 80 KB/s (-5)\n\
6,6,600,-;dmatest: dma0chan0-copy0: summary 10 tests, 0 failures 5 iops 80 KB/s (0)\n\
\u{fffd}\u{0}garbage\n";
    let s = scan(log.as_bytes(), None);
    assert_eq!(s.summaries.len(), 1);
    assert_eq!(s.summaries[0].ts_us, Some(600));
    assert_eq!(s.results.len(), 1);
    assert_eq!(s.skipped.len(), 4, "{:?}", s.skipped);
    assert!(s.skipped[0].why.contains("truncated summary line"));
    assert!(s.skipped[1].why.contains("unexpected \"extra\""));
    assert!(s.skipped[3]
        .why
        .contains("a second summary of thread dma0chan0-copy0"));
    assert_eq!(s.last_seq, Some(6));
}

proptest! {
    #[test]
    fn scan_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = scan(&bytes[..], Some(3));
    }

    #[test]
    fn scan_never_panics_on_near_miss_lines(
        words in proptest::collection::vec(
            "(summary|tests,|failures|iops|KB/s|\\(0\\)|[0-9.]{1,6}|dmatest:|dma0chan0-copy0:|;|,|\\[ *[0-9.]{0,9}\\])",
            0..14,
        )
    ) {
        let line = format!("6,1,2,-;dmatest: dma0chan0-copy0: {}\n[ 1.000001] {}", words.join(" "), words.join(" "));
        let _ = scan(line.as_bytes(), None);
    }
}

#[test]
fn dmesg_timestamps_and_indented_lines() {
    let log = "[    1.5] dmatest: a-copy0: summary 1 tests, 0 failures 1 iops 1 KB/s (0)\n\
               \x20 dmatest: b-copy0: summary 2 tests, 0 failures 2.00 iops 2 KB/s (0)\n\
               [ 2.000001] dmatest: c-copy0: summary 3 tests, 0 failures 3 iops 3 KB/s (0)\n\
               [ 3.x] dmatest: d-copy0: summary 4 tests, 0 failures 4 iops 4 KB/s (0)\n";
    let s = scan(log.as_bytes(), None);
    let got: Vec<(&str, Option<u64>)> = s
        .summaries
        .iter()
        .map(|x| (x.thread.as_str(), x.ts_us))
        .collect();
    // "1.5" is 1.5 s; an indented line is not a kmsg continuation; a bracket that is not
    // a timestamp leaves the line without one.
    assert_eq!(
        got,
        [
            ("a-copy0", Some(1_500_000)),
            ("b-copy0", None),
            ("c-copy0", Some(2_000_001)),
            ("d-copy0", None)
        ]
    );
    assert_eq!(s.dmatest_lines, 4);
}
