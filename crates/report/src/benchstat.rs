//! A run in Go's benchmark text format (golang.org/design/14313-benchmark-format), the
//! input of `benchstat`: one line per repetition,
//!
//! ```text
//! BenchmarkQuick/cpu_b=1/variant=futex 1 19010.62 round_trips_per_s 256.15 switches_per_s
//! ```
//!
//! The rules it follows, from the format and from benchstat's reader (`benchfmt`):
//! - A result line starts with `Benchmark`; its name has no white space. `/key=value`
//!   parts are sub-benchmark keys (`benchstat -col /variant` compares variants of one run).
//!   Values are percent-encoded where they hold white space, `/` or `%`; a name ending in
//!   `-` and digits would be read as GOMAXPROCS, so such a `-` is encoded too.
//! - The iteration count comes next: 1, since each line is one measurement.
//! - Then value and unit pairs; the unit is the metric's name, which names its unit already
//!   (`round_trips_per_s`, `bandwidth_mib_s`, `time_ms`). benchstat tells metrics apart
//!   by unit alone, so no two metrics may share one.
//! - `key: value` lines (a key starts with a lower-case letter and has no upper case or
//!   space) set file configuration. benchstat splits tables by every such key, so only
//!   keys that two runs to be compared share are written (`goos`, `goarch`, `pkg`); what
//!   tells runs apart (run id, label, host, kernel) goes on `#` lines, which it ignores.
//! - `Unit NAME better=higher|lower` lines say which direction is better.
//!
//! - A parameter the variant sets (memxfer's `backing`) stays out of the name, listed
//!   on a `#` line: `/variant=` names it, and `-col /variant` pairs only results whose
//!   names are equal but for `/variant`.
//!
//! Only results are written: headline repetitions that succeeded with every knob
//! holding. Failed, ineffective and telemetry repetitions are counted on a `#` line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use perflab_core::record::{MeasurementRecord, RunInfo};
use perflab_core::Better;

/// The run `info` with its measurements `ms`, as benchstat input.
pub fn benchstat_text(info: &RunInfo, ms: &[MeasurementRecord]) -> String {
    let mut out = String::new();
    run_comments(&mut out, info);
    let results: Vec<&MeasurementRecord> = ms.iter().filter(|m| m.is_result()).collect();
    let by_variant = variant_params(&results);
    let varying: Vec<String> = varying_params(&results)
        .into_iter()
        .filter(|k| !by_variant.contains(k))
        .collect();
    let constant = constant_params(&results, &varying, &by_variant);
    if !constant.is_empty() {
        let _ = writeln!(out, "# the same at every point: {}", constant.join(" "));
    }
    if !by_variant.is_empty() {
        let _ = writeln!(
            out,
            "# set by the variant, named by /variant: {}",
            variant_settings(&results, &by_variant).join("; ")
        );
    }
    let left_out = ms.len() - results.len();
    if left_out > 0 {
        let _ = writeln!(
            out,
            "# {left_out} measurement(s) left out: failed, ineffective or telemetry repetitions"
        );
    }
    let _ = writeln!(out, "goos: linux");
    if let Some(arch) = field(&info.fingerprint.machine) {
        let _ = writeln!(out, "goarch: {}", go_arch(&arch));
    }
    let _ = writeln!(out, "pkg: perflab/{}", encode(&info.study));
    for (unit, better) in unit_directions(&results) {
        let word = match better {
            Better::Higher => "higher",
            Better::Lower => "lower",
            Better::Neither => continue,
        };
        let _ = writeln!(out, "Unit {unit} better={word}");
    }
    let base = format!("Benchmark{}", camel(&info.study));
    for m in results {
        result_line(&mut out, &base, &varying, m);
    }
    out
}

/// A fingerprint field, where it says something.
fn field(v: &Option<String>) -> Option<String> {
    v.clone().filter(|s| !s.is_empty())
}

/// The `#` lines that say which run this is and where it ran (benchstat ignores them).
fn run_comments(out: &mut String, info: &RunInfo) {
    let fp = &info.fingerprint;
    let _ = writeln!(
        out,
        "# perflab run {} of study {}, workload {}{}",
        info.id,
        info.study,
        info.workload,
        info.label
            .as_deref()
            .map(|l| format!(", label {l:?}"))
            .unwrap_or_default()
    );
    let mut host = Vec::new();
    for (name, value) in [
        ("host", &fp.hostname),
        ("kernel", &fp.kernel),
        ("cpu", &fp.cpu_model),
    ] {
        if let Some(v) = field(value) {
            host.push(format!("{name} {v}"));
        }
    }
    if !host.is_empty() {
        let _ = writeln!(out, "# {}", host.join(", "));
    }
}

/// One result: its name (`varying` parameters, then the variant), 1 iteration, and a
/// value and unit per metric; nothing when it has no finite metric.
fn result_line(out: &mut String, base: &str, varying: &[String], m: &MeasurementRecord) {
    let mut name = base.to_string();
    for key in varying {
        let value = m.params.get(key).map(|v| v.to_string()).unwrap_or_default();
        let _ = write!(name, "/{}={}", encode(key), encode(&value));
    }
    let _ = write!(name, "/variant={}", encode(&m.variant));
    let mut line = format!("{} 1", no_gomaxprocs_suffix(name));
    let mut seen = BTreeSet::new();
    for metric in &m.output.metrics {
        let unit = unit_of(&metric.name);
        // A repeated name would be read as one metric measured twice; the first wins.
        if !metric.value.is_finite() || !seen.insert(unit.clone()) {
            continue;
        }
        let _ = write!(line, " {} {unit}", number(metric.value));
    }
    if !seen.is_empty() {
        let _ = writeln!(out, "{line}");
    }
}

/// Parameters whose value is not the same in every result, in name order.
fn varying_params(results: &[&MeasurementRecord]) -> Vec<String> {
    let mut values: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for m in results {
        for (k, v) in &m.params.0 {
            values.entry(k).or_default().insert(v.to_string());
        }
    }
    values
        .into_iter()
        .filter(|(k, vs)| vs.len() > 1 || results.iter().any(|m| m.params.get(k).is_none()))
        .map(|(k, _)| k.to_string())
        .collect()
}

fn constant_params(
    results: &[&MeasurementRecord],
    varying: &[String],
    by_variant: &[String],
) -> Vec<String> {
    let Some(first) = results.first() else {
        return Vec::new();
    };
    first
        .params
        .0
        .iter()
        .filter(|(k, _)| !varying.contains(k) && !by_variant.contains(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// Parameters the variant sets (memxfer's `backing`): one value within each variant,
/// different values between variants. `/variant=NAME` names them already, and in the
/// name they would keep `benchstat -col /variant` from pairing the variants: it compares
/// results whose names are equal but for the column key, and `/backing=4k` against
/// `/backing=2m` never are.
fn variant_params(results: &[&MeasurementRecord]) -> Vec<String> {
    let mut per_key: BTreeMap<&str, BTreeMap<&str, BTreeSet<String>>> = BTreeMap::new();
    for m in results {
        for (k, v) in &m.params.0 {
            per_key
                .entry(k)
                .or_default()
                .entry(&m.variant)
                .or_default()
                .insert(v.to_string());
        }
    }
    per_key
        .into_iter()
        .filter(|(k, by_variant)| {
            let each_one = by_variant.values().all(|vs| vs.len() == 1);
            let values: BTreeSet<&String> = by_variant.values().flatten().collect();
            // Every result has it: one lacking it would lose the name part telling it apart.
            let everywhere = results.iter().all(|m| m.params.get(k).is_some());
            each_one && values.len() > 1 && everywhere
        })
        .map(|(k, _)| k.to_string())
        .collect()
}

/// `4k: backing=4k; 2m: backing=2m`, in the order the variants first appear.
fn variant_settings(results: &[&MeasurementRecord], keys: &[String]) -> Vec<String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for m in results {
        if out.iter().any(|(v, _)| *v == m.variant) {
            continue;
        }
        let set: Vec<String> = keys
            .iter()
            .filter_map(|k| m.params.get(k).map(|v| format!("{k}={v}")))
            .collect();
        out.push((m.variant.clone(), set.join(" ")));
    }
    out.into_iter()
        .map(|(v, set)| format!("{v}: {set}"))
        .collect()
}

/// Each unit's better direction, where every metric of that unit agrees on one.
fn unit_directions(results: &[&MeasurementRecord]) -> BTreeMap<String, Better> {
    let mut seen: BTreeMap<String, Option<Better>> = BTreeMap::new();
    for m in results {
        for metric in &m.output.metrics {
            let entry = seen
                .entry(unit_of(&metric.name))
                .or_insert(Some(metric.better));
            if *entry != Some(metric.better) {
                *entry = None;
            }
        }
    }
    seen.into_iter()
        .filter_map(|(u, b)| b.map(|b| (u, b)))
        .collect()
}

/// A metric's name as a unit: white space would end the unit, so it becomes `_`.
fn unit_of(name: &str) -> String {
    let unit: String = name
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    if unit.is_empty() {
        "value".to_string()
    } else {
        unit
    }
}

/// Go's names of the architectures `uname -m` reports.
fn go_arch(machine: &str) -> &str {
    match machine {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "i686" | "i386" => "386",
        "ppc64le" => "ppc64le",
        "riscv64" => "riscv64",
        "s390x" => "s390x",
        other => other,
    }
}

/// `idle-ipi` → `IdleIpi`: a Go benchmark's name is one identifier-like word.
fn camel(study: &str) -> String {
    let mut out = String::new();
    for part in study
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() {
        "Run".to_string()
    } else {
        out
    }
}

/// Percent-encodes what would end or split a name part: white space and other control
/// characters, `/` (a part separator) and `%` itself.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() || c == '/' || c == '%' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// benchstat reads a trailing `-N` as the GOMAXPROCS of the run; a perflab value that ends
/// so (a CPU range `2-3`, a variant `v-2`) keeps its `-` as `%2D`.
fn no_gomaxprocs_suffix(name: String) -> String {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let before = name.len() - digits;
    if digits > 0 && name[..before].ends_with('-') {
        format!("{}%2D{}", &name[..before - 1], &name[before..])
    } else {
        name
    }
}

/// Shortest text that reads back as the same f64 (Rust's `{}` is round-trip exact), in a
/// form Go's ParseFloat accepts.
fn number(v: f64) -> String {
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_words_without_a_gomaxprocs_tail() {
        assert_eq!(camel("idle-ipi"), "IdleIpi");
        assert_eq!(camel("quick"), "Quick");
        assert_eq!(camel("import-hyperfine"), "ImportHyperfine");
        assert_eq!(camel("--"), "Run");
        assert_eq!(encode("ls /"), "ls%20%2F");
        assert_eq!(encode("50%"), "50%25");
        assert_eq!(encode("a\tb"), "a%09b");
        assert_eq!(
            no_gomaxprocs_suffix("BenchmarkX/cpus=2-3".into()),
            "BenchmarkX/cpus=2%2D3"
        );
        assert_eq!(
            no_gomaxprocs_suffix("BenchmarkX/v=a-b".into()),
            "BenchmarkX/v=a-b"
        );
        assert_eq!(
            no_gomaxprocs_suffix("BenchmarkX/n=12".into()),
            "BenchmarkX/n=12"
        );
        assert_eq!(unit_of("L1 misses"), "L1_misses");
        assert_eq!(go_arch("x86_64"), "amd64");
        assert_eq!(number(19010.62), "19010.62");
        assert_eq!(number(1e-7), "0.0000001");
    }
}
