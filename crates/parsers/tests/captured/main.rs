//! The parsers on output captured from the real tools (tests/data/<tool>/README.md says
//! how each file was made).

mod cross;
mod cyclictest;
mod dmatest;
mod dmatest_log;
mod fio;
mod hyperfine;
mod impossible_figures;
mod iperf3;
mod no_panic;
mod perf_bench;
mod perf_stat;
mod seed_scan;
mod sockperf;

use perflab_core::{Better, Metric, Unit};
use perflab_parsers::{by_name, ParseError, Parsed, ParsedRow};

pub fn data(rel: &str) -> String {
    let path = format!("{}/tests/data/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn parse(tool: &str, rel: &str) -> Result<Parsed, ParseError> {
    let p = by_name(tool).unwrap_or_else(|| panic!("no parser {tool}"));
    (p.parse)(&data(rel))
}

pub fn ok(tool: &str, rel: &str) -> Parsed {
    parse(tool, rel).unwrap_or_else(|e| panic!("{tool} on {rel}: {e}"))
}

pub fn get<'a>(metrics: &'a [Metric], name: &str) -> &'a Metric {
    metrics.iter().find(|m| m.name == name).unwrap_or_else(|| {
        let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
        panic!("no metric {name}; have {names:?}")
    })
}

pub fn value(metrics: &[Metric], name: &str) -> f64 {
    get(metrics, name).value
}

pub fn has(metrics: &[Metric], name: &str) -> bool {
    metrics.iter().any(|m| m.name == name)
}

pub fn assert_metric(metrics: &[Metric], name: &str, v: f64, unit: Unit, better: Better) {
    let m = get(metrics, name);
    assert!(
        (m.value - v).abs() <= 1e-9 * v.abs().max(1.0),
        "{name}: {} != {v}",
        m.value
    );
    assert_eq!((m.unit, m.better), (unit, better), "{name}");
}

pub fn row<'a>(p: &'a Parsed, key: &str, val: &str) -> &'a ParsedRow {
    p.rows
        .iter()
        .find(|r| r.param(key) == Some(val))
        .unwrap_or_else(|| panic!("no row {key}={val} in {:?}", p.rows))
}

/// Every fixture of every tool: (tool, file).
pub fn samples() -> Vec<(String, String)> {
    let root = format!("{}/tests/data", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for tool in std::fs::read_dir(&root).expect("tests/data") {
        let tool = tool
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        for f in std::fs::read_dir(format!("{root}/{tool}")).expect("tool dir") {
            let f = f.expect("entry").file_name().to_string_lossy().into_owned();
            if f != "README.md" {
                out.push((tool.clone(), format!("{tool}/{f}")));
            }
        }
    }
    out.sort();
    out
}
