//! trace-cost's configurations and arithmetic; nothing is measured (no test compares timings).

use super::*;

#[test]
fn an_event_has_five_rows_unless_it_is_classic_already() {
    let raw = one_event("trace", "sched:sched_switch", "raw tracepoint");
    let labels: Vec<&str> = raw.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "sched:sched_switch alone, empty, raw tracepoint",
            "sched:sched_switch alone, empty, tracepoint",
            "sched:sched_switch alone, matching, raw tracepoint",
            "sched:sched_switch alone, matching, tracepoint",
            "trace without sched:sched_switch",
        ]
    );
    assert_eq!(raw[4].env, vec![(EVENTS_VAR, "-sched:sched_switch".into())]);
    assert!(raw[1].env.contains(&(ATTACH_VAR, "classic".into())));
    assert!(!raw[2].env.iter().any(|(k, _)| *k == EMPTY_VAR));
    let classic = one_event("trace", "syscalls:sys_exit_recvfrom", "tracepoint");
    assert_eq!(classic.len(), 3);
    assert!(classic
        .iter()
        .all(|c| !c.env.iter().any(|(k, _)| *k == ATTACH_VAR)));
}

#[test]
fn the_whole_set_runs_empty_and_matching_three_ways() {
    let rows = whole_set("trace:/tmp/netrx-sock.toml");
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0].label, "netrx-sock: all events, empty");
    assert_eq!(rows[0].env, vec![(EMPTY_VAR, "1".into())]);
    assert_eq!(rows[4].label, "netrx-sock: all events, matching, plain raw");
    assert_eq!(rows[4].env, vec![(ATTACH_VAR, "raw".into())]);
    assert_eq!(rows[5].env, vec![(ATTACH_VAR, "classic".into())]);
    // The summary's whole-set cost is the matching row as attached here.
    assert_eq!(rows[3].column, 2);
    assert!(rows
        .iter()
        .all(|c| c.monitor == "trace:/tmp/netrx-sock.toml"));
    assert_eq!(short("trace"), "trace");
    assert_eq!(short("trace:netrx"), "netrx");
}

#[test]
fn added_time_per_operation() {
    assert_eq!(added_us("rtt_p50_us", 10.0, 1.25), Some(2.5));
    // 100,000 round trips/s at 0.8 of that: 10 µs became 12.5 µs.
    let a = added_us("round_trips_per_s", 100_000.0, 0.8).unwrap();
    assert!((a - 2.5).abs() < 1e-9, "{a}");
    assert_eq!(added_us("bandwidth_mib_s", 1.0, 1.0), None);
    assert!(trace_sets("default counters").is_err());
    assert_eq!(
        trace_sets("default trace trace:x.toml").unwrap(),
        ["trace", "trace:x.toml"]
    );
}
