//! `perflab export --format benchstat`: the text is snapshot-tested, and read back by a
//! reader written to the Go benchmark format's rules as benchstat's own reader
//! (golang.org/x/perf/benchfmt) applies them: result lines, `key: value` configuration
//! lines, `Unit` metadata lines, everything else ignored. (The real benchstat needs the Go
//! module proxy, which this machine cannot reach.)

use crate::common;

use std::collections::BTreeMap;

use perflab_core::{ParamValue, Params};
use perflab_report::benchstat::benchstat_text;

/// What benchstat would read from `text`: results by full name, each a list of
/// (unit, value) lines; file configuration; unit metadata. Panics on any line benchstat
/// would report as a syntax error.
#[derive(Debug, Default)]
struct Read {
    results: Vec<(String, Vec<(String, f64)>)>,
    config: BTreeMap<String, String>,
    units: BTreeMap<String, String>,
    ignored: Vec<String>,
}

fn read(text: &str) -> Read {
    let mut r = Read::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Benchmark") {
            // Fields are split at white space; the name is the first.
            let fields: Vec<&str> = rest.split_whitespace().collect();
            assert!(fields.len() >= 4, "missing fields: {line}");
            let name = fields[0];
            assert!(!name.is_empty(), "{line}");
            let iters: i64 = fields[1]
                .parse()
                .unwrap_or_else(|_| panic!("iteration count: {line}"));
            assert_eq!(iters, 1, "{line}");
            let pairs = &fields[2..];
            assert_eq!(pairs.len() % 2, 0, "a value without a unit: {line}");
            let mut values = Vec::new();
            for p in pairs.chunks(2) {
                let v: f64 = p[0]
                    .parse()
                    .unwrap_or_else(|_| panic!("measurement {:?}: {line}", p[0]));
                assert!(v.is_finite(), "{line}");
                values.push((p[1].to_string(), v));
            }
            // benchstat keys a result's values by unit: no unit twice on one line.
            let mut units: Vec<&String> = values.iter().map(|(u, _)| u).collect();
            units.sort();
            units.dedup();
            assert_eq!(units.len(), values.len(), "{line}");
            r.results.push((name.to_string(), values));
            continue;
        }
        let mut words = line.split_whitespace();
        if words.next() == Some("Unit") {
            let unit = words
                .next()
                .unwrap_or_else(|| panic!("missing unit: {line}"));
            for kv in words {
                let (k, v) = kv
                    .split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .unwrap_or_else(|| panic!("expected key=value: {line}"));
                assert_eq!(k, "better", "{line}");
                assert!(v == "higher" || v == "lower", "{line}");
                let before = r.units.insert(unit.to_string(), v.to_string());
                assert!(before.is_none(), "metadata of {unit} set twice");
            }
            continue;
        }
        if let Some((k, v)) = config_line(line) {
            r.config.insert(k, v);
            continue;
        }
        r.ignored.push(line.to_string());
    }
    r
}

/// benchfmt's parseKeyValueLine: a key that starts with a lower-case letter and holds no
/// space or upper case, a `:`, then one or more blanks before the value.
fn config_line(line: &str) -> Option<(String, String)> {
    let (key, val) = line.split_once(':')?;
    let mut chars = key.chars();
    if !chars.next()?.is_lowercase() || key.chars().any(|c| c.is_whitespace() || c.is_uppercase()) {
        return None;
    }
    if val.is_empty() {
        return Some((key.into(), String::new()));
    }
    if !val.starts_with([' ', '\t']) {
        return None;
    }
    Some((key.into(), val.trim_start_matches([' ', '\t']).to_string()))
}

/// benchfmt's Name.Parts: `/`-separated parts after the base, and a trailing `-N`
/// (digits) taken as GOMAXPROCS.
fn parts(name: &str) -> (String, Vec<String>, Option<String>) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (body, procs) =
        if digits > 0 && digits < name.len() && name[..name.len() - digits].ends_with('-') {
            let at = name.len() - digits - 1;
            (&name[..at], Some(name[at..].to_string()))
        } else {
            (name, None)
        };
    let mut it = body.split('/');
    let base = it.next().unwrap().to_string();
    (base, it.map(str::to_string).collect(), procs)
}

fn run() -> (
    perflab_core::record::RunInfo,
    Vec<perflab_core::record::MeasurementRecord>,
) {
    let mut info = common::run_info(7);
    info.label = Some("kernel 6.18".into());
    info.fingerprint = perflab_core::Fingerprint::from_json(serde_json::json!({
        "hostname": "lab1", "kernel": "6.18.44", "cpu_model": "AMD EPYC", "machine": "x86_64",
    }));
    // Three pairs, one of whose `all` repetitions all fail (left out, counted).
    let ms = common::records(1.0, Some(&[0, 8, 28]));
    (info, ms)
}

#[test]
fn a_cpu_pair_run_in_benchstat_format() {
    let (info, ms) = run();
    let text = benchstat_text(&info, &ms);
    insta::assert_snapshot!("benchstat_idle_ipi", text);
}

#[test]
fn it_reads_back_as_every_result_under_its_point_and_variant() {
    let (info, ms) = run();
    let text = benchstat_text(&info, &ms);
    let r = read(&text);
    // Every other line is a `#` comment, which benchstat ignores.
    assert!(
        r.ignored.iter().all(|l| l.starts_with("# ")),
        "{:?}",
        r.ignored
    );
    assert_eq!(r.config.get("goos").map(String::as_str), Some("linux"));
    assert_eq!(r.config.get("goarch").map(String::as_str), Some("amd64"));
    assert_eq!(
        r.config.get("pkg").map(String::as_str),
        Some("perflab/idle-ipi")
    );
    // Nothing that tells two runs apart is file configuration (benchstat would put them
    // in separate tables instead of comparing them).
    assert_eq!(r.config.len(), 3, "{:?}", r.config);
    assert_eq!(
        r.units.get("round_trips_per_sec").map(String::as_str),
        Some("higher")
    );
    assert!(
        !r.units.contains_key("round_trips"),
        "no direction for a count"
    );

    let results: Vec<_> = ms.iter().filter(|m| m.is_result()).collect();
    assert_eq!(r.results.len(), results.len());
    for (m, (name, values)) in results.iter().zip(&r.results) {
        let (base, parts, procs) = parts(name);
        assert_eq!(base, "IdleIpi");
        assert_eq!(procs, None, "{name}");
        // cpu_b varies between the points; cpu_a, duration and mechanism do not.
        assert_eq!(
            parts,
            [
                format!("cpu_b={}", m.params.get("cpu_b").unwrap()),
                format!("variant={}", m.variant)
            ]
        );
        let want: Vec<(String, f64)> = m
            .output
            .metrics
            .iter()
            .map(|x| (x.name.clone(), x.value))
            .collect();
        assert_eq!(values, &want);
    }
    assert!(text.contains("# the same at every point: cpu_a=4 duration=10 mechanism=pipe"));
    assert!(text.contains("# 5 measurement(s) left out"), "{text}");
}

#[test]
fn odd_values_stay_one_part_and_never_look_like_gomaxprocs() {
    let (info, mut ms) = run();
    ms.retain(|m| m.is_result());
    let set = |p: &mut Params, v: &str| {
        p.0.insert("cmd".into(), ParamValue::Str(v.into()));
    };
    set(&mut ms[0].params, "ls / 50%");
    ms[0].variant = "v-2".into();
    set(&mut ms[1].params, "tab\there");
    ms[1].variant = "cpus 2-3".into();
    let text = benchstat_text(&info, &ms);
    let r = read(&text);
    let (_, p0, procs0) = parts(&r.results[0].0);
    assert_eq!(procs0, None);
    assert_eq!(p0.len(), 3, "{p0:?}");
    assert!(p0.contains(&"cmd=ls%20%2F%2050%25".to_string()), "{p0:?}");
    assert_eq!(p0.last().unwrap(), "variant=v%2D2");
    let (_, p1, procs1) = parts(&r.results[1].0);
    assert_eq!(procs1, None);
    assert!(p1.contains(&"cmd=tab%09here".to_string()), "{p1:?}");
    assert_eq!(p1.last().unwrap(), "variant=cpus%202%2D3");
    // Results without the parameter carry it empty, so every name has the same keys.
    let (_, p2, _) = parts(&r.results[2].0);
    assert!(p2.contains(&"cmd=".to_string()), "{p2:?}");
}

/// A memxfer run: its variants `4k` and `2m` set `backing` themselves. benchstat's
/// `-col /variant` makes one row of results whose names are equal once `/variant=…` is
/// taken out (benchproc drops the column key from `.fullname`), so a name part the
/// variant sets (`/backing=4k` against `/backing=2m`) would put each variant in a row of
/// its own, with nothing to compare. It was in the names before.
#[test]
fn parameters_the_variant_sets_stay_out_of_the_name_so_col_variant_pairs_them() {
    let info = common::xfer::run(9, "pvm");
    let mut ms = common::xfer::scan(
        &["pvm"],
        &[
            ("4k", &common::xfer::VEOS_4K),
            ("2m", &common::xfer::VEOS_2M),
        ],
        0,
        |_, _, _, _| false,
    );
    for m in &mut ms {
        let backing = ParamValue::Str(m.variant.clone());
        m.params.0.insert("backing".into(), backing);
    }
    let text = benchstat_text(&info, &ms);
    let r = read(&text);
    assert_eq!(r.results.len(), ms.len());
    // `-col /variant`: the row key is the full name without its `/variant=` part.
    let mut rows: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, _) in &r.results {
        let (base, parts, procs) = parts(name);
        assert_eq!(procs, None, "{name}");
        assert!(!parts.iter().any(|p| p.starts_with("backing=")), "{name}");
        let variant = parts
            .iter()
            .find_map(|p| p.strip_prefix("variant="))
            .unwrap_or_else(|| panic!("no /variant in {name}"))
            .to_string();
        let rest: Vec<&String> = parts
            .iter()
            .filter(|p| !p.starts_with("variant="))
            .collect();
        let key = format!(
            "{base}/{}",
            rest.iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join("/")
        );
        rows.entry(key).or_default().push(variant);
    }
    // One row per size, each holding both variants' repetitions.
    assert_eq!(rows.len(), common::xfer::KIB.len(), "{rows:?}");
    for (row, variants) in &rows {
        assert!(row.starts_with("Memxfer/size="), "{row}");
        let mut v = variants.clone();
        v.sort();
        v.dedup();
        assert_eq!(v, ["2m", "4k"], "{row}");
        assert_eq!(variants.len(), 2 * common::xfer::REPS as usize, "{row}");
    }
    // What the variants set is said, where benchstat ignores it.
    assert!(
        text.contains("# set by the variant, named by /variant: 4k: backing=4k; 2m: backing=2m"),
        "{text}"
    );
    assert!(!text.contains("the same at every point: backing"), "{text}");
}
