use super::*;

#[test]
fn quiet_summary_rows_and_overall() {
    let p = ok("cyclictest", "cyclictest/quiet_t2.txt");
    assert_eq!(p.rows.len(), 2);
    let t0 = row(&p, "thread", "0");
    assert_metric(
        &t0.metrics,
        "latency_min_us",
        6.0,
        Unit::Microseconds,
        Better::Lower,
    );
    assert_eq!(value(&t0.metrics, "latency_avg_us"), 20.0);
    assert_eq!(value(&t0.metrics, "latency_max_us"), 2574.0);
    assert_metric(&t0.metrics, "cycles", 1000.0, Unit::Count, Better::Neither);
    let t1 = row(&p, "thread", "1");
    assert_eq!(value(&t1.metrics, "cycles"), 678.0);
    assert_eq!(value(&p.metrics, "latency_min_us"), 6.0);
    assert_eq!(value(&p.metrics, "latency_max_us"), 2574.0);
    let avg = (20.0 * 1000.0 + 15.0 * 678.0) / 1678.0;
    assert!((value(&p.metrics, "latency_avg_us") - avg).abs() < 1e-9);
}

#[test]
fn live_output_keeps_each_thread_s_last_line() {
    let p = ok("cyclictest", "cyclictest/default_t2.txt");
    let t0 = row(&p, "thread", "0");
    assert_eq!(value(&t0.metrics, "cycles"), 500.0);
    // The first screen's placeholder (Min:1000000, C: 0) must not survive.
    assert!(value(&p.metrics, "latency_min_us") < 1000.0);
}

#[test]
fn histogram_gives_percentiles_and_overflows() {
    let p = ok("cyclictest", "cyclictest/histogram_h50.txt");
    assert_eq!(value(&p.metrics, "latency_min_us"), 5.0);
    assert_eq!(value(&p.metrics, "latency_avg_us"), 13.0);
    assert_eq!(value(&p.metrics, "latency_max_us"), 104.0);
    assert_eq!(value(&p.metrics, "histogram_overflows"), 9.0);
    assert_eq!(value(&p.metrics, "cycles"), 2000.0);
    assert_eq!(p.histograms.len(), 1);
    let h = &p.histograms[0];
    assert_eq!((h.count, h.unit), (2000, Unit::Microseconds));
    assert_eq!(h.max, 104.0);
    assert!(h.p50 >= 10.0 && h.p50 <= 14.0, "{}", h.p50);
    let p = ok("cyclictest", "cyclictest/histogram_t2_h30.txt");
    assert_eq!(
        value(&row(&p, "thread", "1").metrics, "histogram_overflows"),
        42.0
    );
    assert_eq!(value(&p.metrics, "histogram_overflows"), 85.0);
    assert_eq!(p.histograms.len(), 2);
}

#[test]
fn a_cut_histogram_is_bad() {
    let text = data("cyclictest/histogram_h50.txt");
    let cut = &text[..text.find("# Min Latencies").unwrap()];
    let e = (by_name("cyclictest").unwrap().parse)(cut).unwrap_err();
    assert!(matches!(e, ParseError::Bad { .. }), "{e}");
}
