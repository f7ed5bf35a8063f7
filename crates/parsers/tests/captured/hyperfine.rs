use super::*;

/// The per-run times (ms) of the rows whose `key` is `val`, in file order.
fn runs(p: &Parsed, key: &str, val: &str) -> Vec<f64> {
    p.rows
        .iter()
        .filter(|r| r.param(key) == Some(val))
        .map(|r| {
            assert_eq!(r.metrics.len(), 1, "{r:?}");
            let m = get(&r.metrics, "time_ms");
            assert_eq!((m.unit, m.better), (Unit::Milliseconds, Better::Lower));
            m.value
        })
        .collect()
}

/// The per-run times (ms) of the rows of series `name`, in file order.
fn series_runs(p: &Parsed, name: &str) -> Vec<f64> {
    p.rows
        .iter()
        .filter(|r| r.series.as_deref() == Some(name))
        .map(|r| {
            assert!(r.params.is_empty(), "{r:?}");
            value(&r.metrics, "time_ms")
        })
        .collect()
}

#[test]
fn two_commands_give_every_run_as_a_row_in_milliseconds() {
    let p = ok("hyperfine", "hyperfine/two_commands.json");
    // hyperfine's summary describes one command; of two, there is none over both.
    assert!(p.metrics.is_empty());
    assert_eq!(p.rows.len(), 20);
    let ls = series_runs(&p, "ls /");
    assert_eq!(ls.len(), 10);
    assert!(
        (ls[0] - 1.52394).abs() < 1e-9 && (ls[5] - 5.411326).abs() < 1e-9,
        "{ls:?}"
    );
    // The rows are the runs hyperfine summarised: its min, max and mean are theirs.
    let min = ls.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = ls.iter().cloned().fold(0.0, f64::max);
    let mean = ls.iter().sum::<f64>() / ls.len() as f64;
    assert!((min - 1.069207).abs() < 1e-9 && (max - 5.411326).abs() < 1e-9);
    assert!((mean - 1.989564).abs() < 1e-6, "{mean}");
    assert_eq!(series_runs(&p, "true").len(), 10);
}

/// Two commands without parameters are what hyperfine compares: each is a series (a
/// variant on import) of one point, with hyperfine's whole summary kept per command.
#[test]
fn two_commands_are_two_series_each_with_hyperfine_s_summary() {
    let p = ok("hyperfine", "hyperfine/two_sleeps.json");
    assert!(p.rows.iter().all(|r| r.params.is_empty()), "{:?}", p.rows);
    let a = series_runs(&p, "sleep 0.01");
    let b = series_runs(&p, "sleep 0.02");
    assert_eq!((a.len(), b.len()), (10, 10));
    assert_eq!(p.summaries.len(), 2);
    let s = &p.summaries[1];
    assert_eq!(s.series.as_deref(), Some("sleep 0.02"));
    assert!(s.params.is_empty());
    // The figures of the file, seconds as milliseconds, every one of them.
    for (name, v) in [
        ("mean_ms", 23.417_217_4),
        ("stddev_ms", 1.930_479_153_226_082),
        ("median_ms", 22.339_914_5),
        ("min_ms", 21.609_971),
        ("max_ms", 26.186_958),
        ("user_ms", 1.1961),
        ("system_ms", 0.274),
        ("runs", 10.0),
    ] {
        let unit = if name == "runs" {
            Unit::Count
        } else {
            Unit::Milliseconds
        };
        let better = if name == "runs" {
            Better::Neither
        } else {
            Better::Lower
        };
        assert_metric(&s.metrics, name, v, unit, better);
    }
    let mean = b.iter().sum::<f64>() / 10.0;
    assert!((mean - value(&s.metrics, "mean_ms")).abs() < 1e-6, "{mean}");
}

#[test]
fn one_command_keeps_its_summary_as_a_series_less_summary() {
    let p = ok("hyperfine", "hyperfine/sleep_10ms.json");
    assert!(p.rows.iter().all(|r| r.series.is_none()));
    assert_eq!(p.summaries.len(), 1);
    assert_eq!(p.summaries[0].series, None);
    assert_eq!(
        p.summaries[0].params,
        vec![("command".to_string(), "sleep 0.01".to_string())]
    );
    assert_eq!(p.summaries[0].metrics, p.metrics);
    assert!(has(&p.metrics, "user_ms") && has(&p.metrics, "system_ms"));
}

/// The same command twice stays two series: its runs never merge into one.
#[test]
fn a_command_given_twice_is_two_series() {
    let doc: serde_json::Value =
        serde_json::from_str(&data("hyperfine/two_commands.json")).unwrap();
    let mut twice = doc.clone();
    twice["results"][1]["command"] = serde_json::json!("ls /");
    let p = (by_name("hyperfine").unwrap().parse)(&twice.to_string()).unwrap();
    assert_eq!(series_runs(&p, "ls /").len(), 10);
    assert_eq!(series_runs(&p, "ls / (2)").len(), 10);
}

#[test]
fn parameter_scan_carries_the_parameter_on_every_run() {
    let p = ok("hyperfine", "hyperfine/param_scan.json");
    assert_eq!(p.rows.len(), 15);
    let n2: Vec<&ParsedRow> = p
        .rows
        .iter()
        .filter(|r| r.param("n") == Some("2"))
        .collect();
    assert_eq!(n2.len(), 5);
    assert!(n2.iter().all(|r| r.param("command") == Some("sleep 0.02")));
    let mean = n2.iter().map(|r| value(&r.metrics, "time_ms")).sum::<f64>() / 5.0;
    assert!((mean - 21.26224408).abs() < 1e-6, "{mean}");
}

#[test]
fn one_command_gives_its_runs_and_hyperfine_s_summary_and_failures_are_noted() {
    let p = ok("hyperfine", "hyperfine/failing_ignored.json");
    assert_eq!(runs(&p, "command", "false").len(), 3);
    assert!((value(&p.metrics, "mean_ms") - 0.8133626666666667).abs() < 1e-12);
    assert_eq!(value(&p.metrics, "runs"), 3.0);
    assert!(
        p.notes.iter().any(|n| n.contains("3 of 3 runs")),
        "{:?}",
        p.notes
    );
}

#[test]
fn sleep_of_10ms_twelve_runs() {
    let p = ok("hyperfine", "hyperfine/sleep_10ms.json");
    let t = runs(&p, "command", "sleep 0.01");
    assert_eq!(t.len(), 12);
    // Each run slept 10 ms and took a little longer to start and end.
    assert!(t.iter().all(|ms| (10.0..1000.0).contains(ms)), "{t:?}");
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    assert!((mean - value(&p.metrics, "mean_ms")).abs() < 1e-6);
}

#[test]
fn a_single_run_has_no_stddev() {
    let text = data("hyperfine/failing_ignored.json")
        .replace("\"stddev\": 0.00040884532197437866", "\"stddev\": null");
    let p = (by_name("hyperfine").unwrap().parse)(&text).unwrap();
    assert!(!has(&p.metrics, "stddev_ms") && has(&p.metrics, "mean_ms"));
}

#[test]
fn without_times_the_summary_is_one_row_and_a_bad_time_is_an_error() {
    let doc: serde_json::Value =
        serde_json::from_str(&data("hyperfine/two_commands.json")).unwrap();
    let mut no_times = doc.clone();
    for r in no_times["results"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("times");
    }
    let p = (by_name("hyperfine").unwrap().parse)(&no_times.to_string()).unwrap();
    assert_eq!(p.rows.len(), 2);
    let ls = p
        .rows
        .iter()
        .find(|r| r.series.as_deref() == Some("ls /"))
        .unwrap();
    assert!((value(&ls.metrics, "mean_ms") - 1.989564).abs() < 1e-9);
    assert!(
        p.notes.iter().any(|n| n.contains("no per-run")),
        "{:?}",
        p.notes
    );

    let mut bad = doc;
    bad["results"][1]["times"][3] = serde_json::json!("fast");
    let e = (by_name("hyperfine").unwrap().parse)(&serde_json::to_string_pretty(&bad).unwrap())
        .unwrap_err();
    assert!(
        matches!(&e, ParseError::Bad { why, .. } if why.contains("run 4")),
        "{e}"
    );
}
