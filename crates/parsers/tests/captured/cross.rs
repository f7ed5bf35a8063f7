use super::*;

/// Fixtures that are the tool's own output but hold no result, so their parser
/// rightly answers Bad.
const FAILURES: [&str; 4] = [
    "iperf3/error_no_server.json",
    "perf-bench/mem_memcpy_cycles.txt",
    "perf-bench/mem_memcpy_simple.txt",
    "perf-bench/sched_pipe_simple.txt",
];

#[test]
fn every_sample_parses_with_its_own_parser() {
    for (tool, rel) in samples() {
        if FAILURES.contains(&rel.as_str()) {
            assert!(parse(&tool, &rel).is_err(), "{rel}");
            continue;
        }
        let p = ok(&tool, &rel);
        assert!(
            !p.metrics.is_empty() || !p.rows.is_empty(),
            "{rel}: nothing found"
        );
        for m in p
            .metrics
            .iter()
            .chain(p.rows.iter().flat_map(|r| &r.metrics))
        {
            assert!(m.value.is_finite(), "{rel}: {}", m.name);
            let snake = m
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            assert!(
                snake && !m.name.starts_with('_') && !m.name.ends_with('_'),
                "{rel}: {}",
                m.name
            );
        }
    }
}

#[test]
fn every_other_tool_s_sample_is_not_this_tool() {
    let samples = samples();
    for p in perflab_parsers::registry() {
        for (tool, rel) in &samples {
            if tool == p.name {
                continue;
            }
            match (p.parse)(&data(rel)) {
                Err(ParseError::NotThisTool { tool, .. }) => assert_eq!(tool, p.name),
                other => panic!("{} on {rel}: {other:?}", p.name),
            }
        }
    }
}

#[test]
fn registry_names_are_unique_and_every_sample_dir_has_a_parser() {
    let names = perflab_parsers::names();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len());
    for (tool, _) in samples() {
        assert!(by_name(&tool).is_some(), "{tool}");
    }
    for n in names {
        assert!(samples().iter().any(|(t, _)| t == n), "no sample for {n}");
    }
}
