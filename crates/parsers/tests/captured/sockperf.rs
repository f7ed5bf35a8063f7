use super::*;

#[test]
fn udp_ping_pong_latency_in_microseconds() {
    let p = ok("sockperf", "sockperf/pingpong_udp.txt");
    assert_metric(
        &p.metrics,
        "latency_avg_us",
        9.580,
        Unit::Microseconds,
        Better::Lower,
    );
    assert_metric(
        &p.metrics,
        "latency_stddev_us",
        5.159,
        Unit::Microseconds,
        Better::Lower,
    );
    assert_eq!(value(&p.metrics, "latency_min_us"), 6.532);
    assert_eq!(value(&p.metrics, "latency_max_us"), 693.366);
    assert_eq!(value(&p.metrics, "latency_p50_us"), 9.251);
    assert_eq!(value(&p.metrics, "latency_p99_us"), 15.168);
    assert_eq!(value(&p.metrics, "latency_p99_9_us"), 21.129);
    assert_eq!(value(&p.metrics, "latency_p99_999_us"), 665.544);
    assert_metric(
        &p.metrics,
        "observations",
        80792.0,
        Unit::Count,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "dropped_messages",
        0.0,
        Unit::Count,
        Better::Lower,
    );
    assert_eq!(value(&p.metrics, "sent_messages"), 80792.0);
    assert!(p.rows.is_empty());
}

#[test]
fn full_rtt_is_named_rtt_not_latency() {
    let p = ok("sockperf", "sockperf/pingpong_fullrtt_m64.txt");
    assert_eq!(value(&p.metrics, "rtt_avg_us"), 18.611);
    assert_eq!(value(&p.metrics, "rtt_p99_99_us"), 309.789);
    assert!(!p.metrics.iter().any(|m| m.name.starts_with("latency_")));
    let p = ok("sockperf", "sockperf/pingpong_tcp_m1024.txt");
    assert_eq!(value(&p.metrics, "latency_avg_us"), 10.937);
    assert_eq!(value(&p.metrics, "latency_min_us"), 8.5);
}

#[test]
fn run_cut_short_is_bad() {
    let text = data("sockperf/pingpong_udp.txt");
    let cut: String = text.lines().take(8).collect::<Vec<_>>().join("\n");
    let e = (by_name("sockperf").unwrap().parse)(&cut).unwrap_err();
    assert!(matches!(e, ParseError::Bad { .. }), "{e}");
    let broken = text.replace("percentile 99.000 =   15.168", "percentile 99.000 = x");
    let e = (by_name("sockperf").unwrap().parse)(&broken).unwrap_err();
    assert!(e.to_string().contains("percentile 99.000"), "{e}");
}

#[test]
fn several_servers_become_rows() {
    let one = data("sockperf/pingpong_udp.txt");
    let stats = &one[one.find("sockperf: ========= Printing").unwrap()..];
    let two = format!("{one}{}", stats.replace("Server No: 0", "Server No: 1"));
    let p = (by_name("sockperf").unwrap().parse)(&two).unwrap();
    assert!(p.metrics.is_empty());
    assert_eq!(p.rows.len(), 2);
    assert_eq!(
        value(&row(&p, "server", "1").metrics, "latency_avg_us"),
        9.580
    );
}
