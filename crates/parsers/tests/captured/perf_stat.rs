use super::*;

#[test]
fn csv_counts_with_units_and_unsupported_events_as_a_note() {
    let p = ok("perf-stat", "perf-stat/csv_ls.txt");
    assert_metric(
        &p.metrics,
        "task_clock_ms",
        0.90,
        Unit::Milliseconds,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "page_faults",
        99.0,
        Unit::Count,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "context_switches",
        0.0,
        Unit::Count,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "cpu_migrations",
        0.0,
        Unit::Count,
        Better::Neither,
    );
    // Not supported is not zero: no metric, and a note naming them.
    assert!(!has(&p.metrics, "cycles") && !has(&p.metrics, "instructions"));
    assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
    assert!(p.notes[0].contains("<not supported>") && p.notes[0].contains("cycles, instructions"));
    // Every event ran the whole time: no running percentage to report.
    assert!(!p.metrics.iter().any(|m| m.name.ends_with("_running_pct")));
    assert!(p.rows.is_empty());
}

#[test]
fn csv_with_repeats_reads_the_variance_column() {
    let p = ok("perf-stat", "perf-stat/csv_repeat5.txt");
    assert_metric(
        &p.metrics,
        "task_clock_ms",
        0.77,
        Unit::Milliseconds,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "task_clock_rel_stddev_pct",
        0.88,
        Unit::Percent,
        Better::Lower,
    );
    assert_metric(
        &p.metrics,
        "page_faults",
        100.0,
        Unit::Count,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "page_faults_rel_stddev_pct",
        0.37,
        Unit::Percent,
        Better::Lower,
    );
}

#[test]
fn default_text_with_times() {
    let p = ok("perf-stat", "perf-stat/default_ls.txt");
    assert_metric(
        &p.metrics,
        "task_clock_ms",
        0.92,
        Unit::Milliseconds,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "page_faults",
        100.0,
        Unit::Count,
        Better::Neither,
    );
    assert_metric(
        &p.metrics,
        "time_elapsed_s",
        0.001411639,
        Unit::Seconds,
        Better::Lower,
    );
    assert_metric(
        &p.metrics,
        "user_time_s",
        0.001526,
        Unit::Seconds,
        Better::Lower,
    );
    assert_metric(&p.metrics, "sys_time_s", 0.0, Unit::Seconds, Better::Lower);
    assert!(
        p.notes[0].contains("cycles, instructions, branches, branch-misses"),
        "{:?}",
        p.notes
    );
    let p = ok("perf-stat", "perf-stat/events_dd.txt");
    assert_eq!(value(&p.metrics, "context_switches"), 7.0);
    assert_eq!(value(&p.metrics, "cpu_migrations"), 3.0);
    assert_eq!(value(&p.metrics, "page_faults"), 401.0);
}

#[test]
fn default_text_with_repeats_reads_spread_and_elapsed_stddev() {
    let p = ok("perf-stat", "perf-stat/default_repeat5.txt");
    assert_eq!(value(&p.metrics, "task_clock_rel_stddev_pct"), 2.50);
    assert_eq!(value(&p.metrics, "page_faults_rel_stddev_pct"), 0.67);
    assert!(!has(&p.metrics, "context_switches_rel_stddev_pct"));
    assert_eq!(value(&p.metrics, "time_elapsed_s"), 0.0012274);
    assert_eq!(value(&p.metrics, "time_elapsed_stddev_s"), 0.0000302);
}

#[test]
fn seed_003_counters_with_multiplexing() {
    let p = ok("perf-stat", "perf-stat/seed003_without_pir_copy.txt");
    assert_metric(
        &p.metrics,
        "l1_dcache_loads",
        77_313_298_506.0,
        Unit::Count,
        Better::Neither,
    );
    assert_eq!(value(&p.metrics, "l1_dcache_load_misses"), 8_279_458.0);
    assert_eq!(value(&p.metrics, "l1_dcache_stores"), 41_654_221_245.0);
    assert_eq!(value(&p.metrics, "llc_load_misses"), 10_476.0);
    assert_eq!(value(&p.metrics, "llc_loads"), 3_332_748.0);
    assert_metric(
        &p.metrics,
        "l1_dcache_loads_running_pct",
        79.98,
        Unit::Percent,
        Better::Neither,
    );
    assert_eq!(
        value(&p.metrics, "l1_dcache_load_misses_running_pct"),
        80.03
    );
    assert_eq!(value(&p.metrics, "llc_loads_running_pct"), 80.00);
    assert_eq!(value(&p.metrics, "time_elapsed_s"), 30.212055434);
    assert_eq!(value(&p.metrics, "sys_time_s"), 30.183292);
    // The workload's own bandwidth line before perf's header is not a counter.
    assert!(!p.metrics.iter().any(|m| m.name.contains("bandwidth")));
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    let q = ok("perf-stat", "perf-stat/seed003_with_pir_copy.txt");
    assert_eq!(value(&q.metrics, "llc_load_misses"), 23_691.0);
    assert_eq!(value(&q.metrics, "l1_dcache_stores_running_pct"), 79.99);
    assert_eq!(p.metrics.len(), q.metrics.len());
}

#[test]
fn csv_not_counted_and_multiplexed_lines() {
    // Lines in perf's -x, layout carrying seed 003's figures (perf's own CSV for a
    // multiplexed run cannot be captured on this PMU-less VM).
    let text = "77313298506,,L1-dcache-loads,24169341000,79.98,,\n\
                <not counted>,,LLC-loads,0,0.00,,\n\
                10476,,LLC-load-misses,24168223000,79.99,0.31,of all LL-cache accesses\n";
    let p = (by_name("perf-stat").unwrap().parse)(text).unwrap();
    assert_eq!(value(&p.metrics, "l1_dcache_loads"), 77_313_298_506.0);
    assert_eq!(value(&p.metrics, "l1_dcache_loads_running_pct"), 79.98);
    assert_eq!(value(&p.metrics, "llc_load_misses_running_pct"), 79.99);
    assert!(!has(&p.metrics, "llc_loads"));
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("<not counted>") && n.contains("LLC-loads")),
        "{:?}",
        p.notes
    );
}

#[test]
fn per_cpu_output_is_refused_not_merged() {
    // An event again, but not as a run of the same events again: not read as runs.
    let text = "1,,cycles,100,100.00,,\n5,,instructions,100,100.00,,\n2,,cycles,100,100.00,,\n";
    let e = (by_name("perf-stat").unwrap().parse)(text).unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 3, .. }), "{e}");
    let text = "1,,cycles,100,100.00,,\n5,,instructions,100,100.00,,\n2,,instructions,1,1,,\n";
    let e = (by_name("perf-stat").unwrap().parse)(text).unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 3, .. }), "{e}");
    // perf 6.1's own `-A -x,` (captured here): no line reads as a counter line of the
    // whole run.
    let text = "CPU0,21.75,msec,task-clock,21750653,100.00,1.032,CPUs utilized\n\
                CPU1,21.12,msec,task-clock,21122227,100.00,1.002,CPUs utilized\n\
                CPU0,82,,page-faults,21750403,100.00,3.770,K/sec\n\
                CPU1,685,,page-faults,21121235,100.00,32.430,K/sec\n";
    assert!((by_name("perf-stat").unwrap().parse)(text).is_err());
}

/// Issue 34 item 6: a file of several perf stat outputs was refused ("event task-clock
/// appears twice"); each output is a repetition, with its counters as telemetry.
#[test]
fn several_outputs_in_one_file_are_repetitions() {
    let p = ok("perf-stat", "perf-stat/appended_ls3.txt");
    assert!(p.metrics.is_empty());
    assert_eq!(p.rows.len(), 3);
    let clocks: Vec<f64> = p
        .rows
        .iter()
        .map(|r| value(&r.metrics, "task_clock_ms"))
        .collect();
    assert_eq!(clocks, [1.97, 1.41, 1.42]);
    let elapsed: Vec<f64> = p
        .rows
        .iter()
        .map(|r| value(&r.metrics, "time_elapsed_s"))
        .collect();
    assert_eq!(elapsed, [0.015635850, 0.002237547, 0.000004656]);
    assert!(p
        .rows
        .iter()
        .all(|r| r.series.is_none() && r.params.is_empty()));
    // Each row's counts are its own counters telemetry.
    let faults: Vec<f64> = p
        .rows
        .iter()
        .map(|r| {
            r.telemetry
                .iter()
                .find(|t| t.key == "page-faults")
                .unwrap()
                .value
        })
        .collect();
    assert_eq!(faults, [102.0, 101.0, 104.0]);
    assert_eq!(
        p.notes[0],
        "perf stat: 3 outputs in one file, read as 3 repetitions"
    );
    // The <not supported> note once, not once per output.
    assert_eq!(p.notes.len(), 2, "{:?}", p.notes);

    // Two `perf stat -r 3` blocks: two repetitions, each with its own spread.
    let p = ok("perf-stat", "perf-stat/repeat3_twice.txt");
    assert_eq!(p.rows.len(), 2);
    assert_eq!(value(&p.rows[0].metrics, "task_clock_rel_stddev_pct"), 3.42);
    assert_eq!(value(&p.rows[1].metrics, "task_clock_ms"), 1.07);

    // CSV runs appended: a run ends where its first event comes again.
    let p = ok("perf-stat", "perf-stat/csv_appended3.txt");
    let faults: Vec<f64> = p
        .rows
        .iter()
        .map(|r| value(&r.metrics, "page_faults"))
        .collect();
    assert_eq!(faults, [104.0, 103.0, 104.0]);
}

/// Outputs of different commands are variants, each with its outputs as repetitions (as
/// hyperfine's commands are).
#[test]
fn outputs_of_different_commands_are_variants() {
    let one = data("perf-stat/default_ls.txt");
    let dd = data("perf-stat/events_dd.txt");
    let text = format!("{one}{dd}{one}");
    let p = (by_name("perf-stat").unwrap().parse)(&text).unwrap();
    let series: Vec<Option<&str>> = p.rows.iter().map(|r| r.series.as_deref()).collect();
    let dd_command = "sh -c dd if=/dev/zero of=/dev/null bs=1M count=200 2>/dev/null";
    assert_eq!(series, [Some("ls /"), Some(dd_command), Some("ls /")]);
    assert!(
        p.notes[0].contains("3 outputs of 2 commands"),
        "{:?}",
        p.notes
    );
}

#[test]
fn header_without_counters_is_bad() {
    let e = (by_name("perf-stat").unwrap().parse)("\n Performance counter stats for 'x':\n\n")
        .unwrap_err();
    assert!(matches!(e, ParseError::Bad { line: 2, .. }), "{e}");
}

/// perf stat's counts are also the counters monitor's rows (source `counters`, key the
/// event name, the whole run), so an imported perf stat has the counter tables of a run
/// perflab measured; events it could not count have no row, never a zero.
#[test]
fn counts_are_also_counters_telemetry_under_perf_s_event_names() {
    let p = ok("perf-stat", "perf-stat/seed003_with_pir_copy.txt");
    let row = |key: &str| {
        p.telemetry
            .iter()
            .find(|t| t.key == key)
            .unwrap_or_else(|| panic!("no {key} in {:?}", p.telemetry))
    };
    let misses = row("L1-dcache-load-misses");
    assert_eq!(
        (
            misses.source.as_str(),
            misses.cpu,
            misses.value,
            misses.unit
        ),
        ("counters", None, 7_762_311.0, Unit::Count)
    );
    assert_eq!(row("LLC-load-misses").value, 23_691.0);
    assert_eq!(p.telemetry.len(), 5, "{:?}", p.telemetry);
    let q = ok("perf-stat", "perf-stat/default_repeat5.txt");
    assert!(
        q.telemetry.iter().all(|t| t.key != "cycles"),
        "{:?}",
        q.telemetry
    );
    let clock = q.telemetry.iter().find(|t| t.key == "task-clock").unwrap();
    assert_eq!((clock.value, clock.unit), (0.78, Unit::Milliseconds));
}
