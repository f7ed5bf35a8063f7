use super::*;

#[test]
fn sched_pipe() {
    let p = ok("perf-bench", "perf-bench/sched_pipe.txt");
    assert_metric(
        &p.metrics,
        "total_time_s",
        0.241,
        Unit::Seconds,
        Better::Lower,
    );
    assert_metric(
        &p.metrics,
        "time_per_op_us",
        12.0788,
        Unit::Microseconds,
        Better::Lower,
    );
    assert_metric(
        &p.metrics,
        "ops_per_s",
        82789.0,
        Unit::PerSecond,
        Better::Higher,
    );
    let p = ok("perf-bench", "perf-bench/sched_pipe_threads.txt");
    assert_eq!(value(&p.metrics, "ops_per_s"), 156712.0);
}

#[test]
fn mem_functions_are_rows_in_mib_per_second() {
    let p = ok("perf-bench", "perf-bench/mem_memcpy_1mb.txt");
    assert_eq!(p.rows.len(), 4);
    // perf's GB is 1024^3 bytes: 17.488583 GiB/s.
    assert_metric(
        &row(&p, "function", "default").metrics,
        "bandwidth_mib_s",
        17.488583 * 1024.0,
        Unit::MibPerSecond,
        Better::Higher,
    );
    assert_eq!(
        value(
            &row(&p, "function", "x86-64-movsb").metrics,
            "bandwidth_mib_s"
        ),
        27.339376 * 1024.0
    );
    let p = ok("perf-bench", "perf-bench/mem_memset_1mb.txt");
    assert_eq!(
        value(
            &row(&p, "function", "x86-64-stosb").metrics,
            "bandwidth_mib_s"
        ),
        62.480006 * 1024.0
    );
}

#[test]
fn one_function_is_a_single_result_and_small_units_scale() {
    let text = "# Running 'mem/memcpy' benchmark:\n# function 'default' (Default memcpy() provided by glibc)\n# Copying 1KB bytes ...\n\n     512.000000d KB/sec\n";
    let p = (by_name("perf-bench").unwrap().parse)(text).unwrap();
    assert!(p.rows.is_empty());
    assert_eq!(value(&p.metrics, "bandwidth_mib_s"), 0.5);
}

#[test]
fn failures_and_the_simple_format_are_bad() {
    let e = parse("perf-bench", "perf-bench/mem_memcpy_cycles.txt").unwrap_err();
    assert!(
        e.to_string().contains("Failed to open cycles counter"),
        "{e}"
    );
    let e = parse("perf-bench", "perf-bench/mem_memcpy_simple.txt").unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 1, .. }), "{e}");
    let e = parse("perf-bench", "perf-bench/sched_pipe_simple.txt").unwrap_err();
    assert!(matches!(e, ParseError::NotThisTool { .. }), "{e}");
}
