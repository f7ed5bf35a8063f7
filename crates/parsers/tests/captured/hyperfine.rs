use super::*;

#[test]
fn two_commands_are_rows_in_milliseconds() {
    let p = ok("hyperfine", "hyperfine/two_commands.json");
    assert!(p.metrics.is_empty());
    let ls = row(&p, "command", "ls /");
    assert_metric(
        &ls.metrics,
        "mean_ms",
        1.989564,
        Unit::Milliseconds,
        Better::Lower,
    );
    assert_metric(
        &ls.metrics,
        "median_ms",
        1.135436,
        Unit::Milliseconds,
        Better::Lower,
    );
    assert_eq!(value(&ls.metrics, "max_ms"), 5.411326);
    assert_eq!(value(&ls.metrics, "runs"), 10.0);
    assert!(has(&row(&p, "command", "true").metrics, "stddev_ms"));
}

#[test]
fn parameter_scan_carries_the_parameter() {
    let p = ok("hyperfine", "hyperfine/param_scan.json");
    assert_eq!(p.rows.len(), 3);
    let r = row(&p, "n", "2");
    assert_eq!(r.param("command"), Some("sleep 0.02"));
    assert!((value(&r.metrics, "mean_ms") - 21.26224408).abs() < 1e-9);
}

#[test]
fn one_command_is_a_single_result_and_failures_are_noted() {
    let p = ok("hyperfine", "hyperfine/failing_ignored.json");
    assert!(p.rows.is_empty());
    assert!((value(&p.metrics, "mean_ms") - 0.8133626666666667).abs() < 1e-12);
    assert!(
        p.notes.iter().any(|n| n.contains("3 of 3 runs")),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_single_run_has_no_stddev() {
    let text = data("hyperfine/failing_ignored.json")
        .replace("\"stddev\": 0.00040884532197437866", "\"stddev\": null");
    let p = (by_name("hyperfine").unwrap().parse)(&text).unwrap();
    assert!(!has(&p.metrics, "stddev_ms") && has(&p.metrics, "mean_ms"));
}
