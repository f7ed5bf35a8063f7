//! The lock-wait table (seed 000's spintime) of threaded transfers in every format, and
//! its figures against all acquisitions pooled.

use crate::common;

use common::more::{latency_run, threads_run};
use perflab_report::lock_wait_table;
use perflab_report::{Format, Section};

#[test]
fn lock_waits_in_every_format() {
    let (info, ms) = threads_run(31);
    let t = lock_wait_table(&[(&info, &ms)]).expect("a table");
    insta::assert_snapshot!("lock_waits_text", t.render(Format::Text));
    insta::assert_snapshot!("lock_waits_markdown", t.render(Format::Markdown));
    let mail = t.render(Format::Mail);
    assert!(mail.lines().all(|l| l.chars().count() <= 72), "{mail}");
    insta::assert_snapshot!("lock_waits_mail", mail);
    insta::assert_snapshot!("lock_waits_json", serde_json::to_string_pretty(&t).unwrap());
}

#[test]
fn the_row_pools_every_acquisition_and_the_per_thread_totals() {
    let (info, ms) = threads_run(31);
    let t = lock_wait_table(&[(&info, &ms)]).unwrap();
    assert_eq!(t.rows.len(), 1);
    let r = &t.rows[0];
    assert_eq!((r.reps, r.acquisitions), (3, 3 * 401));
    // The one 25 µs wait of each repetition is the maximum, and above p99.
    assert!((r.max - 25.0).abs() < 0.05, "{r:?}");
    assert!(r.p99.unwrap() < 1.0, "{r:?}");
    assert!(r.p50.unwrap() > 0.09 && r.p50.unwrap() < 0.4, "{r:?}");
    // Per thread: the median of 1.5, 1.75 and 2.0 ms; max thread: the largest, 4 ms.
    assert_eq!(r.per_thread_ms, Some(1.75));
    assert_eq!(r.thread_max_ms, Some(4.0));
    // Runs without lock waits have no table.
    let (info, ms) = latency_run(21);
    assert!(lock_wait_table(&[(&info, &ms)]).is_none());
}
