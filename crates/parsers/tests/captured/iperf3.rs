use super::*;

#[test]
fn tcp_sender_receiver_and_retransmits() {
    let p = ok("iperf3", "iperf3/tcp_client_t2.json");
    assert_metric(
        &p.metrics,
        "sender_bytes_s",
        14_637_535_458.581656 / 8.0,
        Unit::BytesPerSecond,
        Better::Higher,
    );
    assert_metric(
        &p.metrics,
        "receiver_bytes_s",
        14_613_411_348.746368 / 8.0,
        Unit::BytesPerSecond,
        Better::Higher,
    );
    assert_metric(&p.metrics, "retransmits", 3.0, Unit::Count, Better::Lower);
    assert_eq!(value(&p.metrics, "rtt_mean_us"), 238.0);
    assert!(p.rows.is_empty());
}

#[test]
fn parallel_streams_are_rows_under_the_sums() {
    let p = ok("iperf3", "iperf3/tcp_client_p2.json");
    assert_eq!(value(&p.metrics, "retransmits"), 2.0);
    assert_eq!(p.rows.len(), 2);
    let s = row(&p, "stream", "7");
    assert_eq!(
        value(&s.metrics, "sender_bytes_s"),
        7_042_335_601.847526 / 8.0
    );
    assert_eq!(value(&s.metrics, "rtt_max_us"), 361.0);
}

#[test]
fn reverse_mode_has_no_round_trip_zeros_and_says_so() {
    let p = ok("iperf3", "iperf3/tcp_client_reverse.json");
    assert!(
        !p.metrics.iter().any(|m| m.name.starts_with("rtt_")),
        "{:?}",
        p.metrics
    );
    assert!(p.notes.iter().any(|n| n.contains("reverse")));
}

#[test]
fn udp_jitter_and_loss() {
    let p = ok("iperf3", "iperf3/udp_client_100m.json");
    assert_metric(
        &p.metrics,
        "jitter_ms",
        0.00349750057414644,
        Unit::Milliseconds,
        Better::Lower,
    );
    assert_metric(&p.metrics, "lost_pct", 0.0, Unit::Percent, Better::Lower);
    assert_eq!(value(&p.metrics, "packets"), 763.0);
    assert!(!has(&p.metrics, "retransmits"));
}

#[test]
fn a_failed_test_is_bad_with_iperf3_s_message() {
    let e = parse("iperf3", "iperf3/error_no_server.json").unwrap_err();
    assert_eq!(
        e,
        ParseError::Bad {
            tool: "iperf3",
            line: 10,
            why: "iperf3 failed: unable to connect to server: Connection refused".into()
        }
    );
}
