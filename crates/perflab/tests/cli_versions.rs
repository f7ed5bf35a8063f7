//! Two versions of a program compared interleaved in one run: `exec` variants that each
//! set their own `cmd`, from a TOML file (docs/examples/versions-interleaved.toml, seed
//! 002's "veos 1.2.2 vs v1_64_96") and from `--variant NAME:cmd=...`. The fake "versions"
//! print fixed numbers, so the test checks where each number came from, never a speed.

use crate::common;

use std::path::Path;

use common::{run_id, text, Lab};
use serde_json::Value;

/// A fake build of the benchmark at `root/opt/DIR/bin/memtransfer_bm`: it prints
/// `base + kb/32 + 7*HUGE` MiB/s for `memtransfer_bm ve2vh KB`, so every number tells which
/// version, size and page setting made it.
fn fake_version(root: &Path, dir: &str, base: u32) {
    let bin = root.join("opt").join(dir).join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("memtransfer_bm");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             echo \"$1 $2 KiB: $(( {base} + $2 / 32 + 7 * ${{HUGE:-0}} )) MiB/s\"\n"
        ),
    )
    .unwrap();
    let mut p = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o755);
    std::fs::set_permissions(&path, p).unwrap();
}

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/versions-interleaved.toml")
}

/// `KEY=value` out of a `k=v;k=v` parameter such as `args` or `env`.
fn item(text: &str, key: &str) -> u32 {
    text.split(';')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} in {text:?}"))
        .parse()
        .unwrap()
}

/// The variants of each point in execution order, and every measurement's value.
/// The variants of the results at each point, in the order measured (the telemetry
/// repetition the default counters monitor adds after them is left out).
fn by_point(doc: &Value) -> std::collections::BTreeMap<u64, Vec<String>> {
    let mut order = std::collections::BTreeMap::<u64, Vec<String>>::new();
    for m in headline(doc) {
        order
            .entry(m["point"].as_u64().unwrap())
            .or_default()
            .push(m["variant"].as_str().unwrap().to_string());
    }
    order
}

fn headline(doc: &Value) -> Vec<&Value> {
    doc["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "headline")
        .collect()
}

fn value(m: &Value) -> f64 {
    m["output"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "bandwidth_mib_s" || x["name"] == "value")
        .unwrap_or_else(|| panic!("no value in {m}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn the_example_file_plans_both_versions_interleaved_at_every_size() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        example().to_str().unwrap(),
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let all = doc["plan"].as_array().unwrap();
    let plan: Vec<&Value> = all.iter().filter(|p| p["role"] == "headline").collect();
    // 16 sizes x HUGE 0/1 x 2 versions x 5 repetitions, and one telemetry repetition per
    // point and version for the counters (none where perf events cannot open).
    assert_eq!(plan.len(), 16 * 2 * 2 * 5);
    assert!([0, 16 * 2 * 2].contains(&(all.len() - plan.len())));
    for pair in plan.chunks(2) {
        assert_eq!(pair[0]["point"], pair[1]["point"]);
        assert_eq!(
            (&pair[0]["variant"], &pair[1]["variant"]),
            (&"veos-1.2.2".into(), &"v1_64_96".into())
        );
        assert!(pair[0]["params"]["cmd"]
            .as_str()
            .unwrap()
            .starts_with("/opt/veos-1.2.2/"));
        assert!(pair[1]["params"]["cmd"]
            .as_str()
            .unwrap()
            .starts_with("/opt/veos-v1_64_96/"));
    }
}

#[test]
fn the_example_runs_each_version_with_its_own_command_interleaved() {
    let lab = Lab::new();
    let root = lab.dir.path();
    fake_version(root, "veos-1.2.2", 1000);
    fake_version(root, "veos-v1_64_96", 5000);
    // The example as published, its /opt paths moved under this test's directory.
    let file = root.join("versions.toml");
    let text_of_example = std::fs::read_to_string(example()).unwrap();
    std::fs::write(
        &file,
        text_of_example.replace("\"/opt/", &format!("\"{}/opt/", root.display())),
    )
    .unwrap();
    let o = lab.run(&["run", file.to_str().unwrap(), "--quick", "--reps", "2"]);
    // (--reps 2 over the quick settings: 2 repetitions are enough to see the order.)
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    let doc = lab.export(&run_id(&err));
    let ms = headline(&doc);
    // 4 sizes x HUGE 0/1 x 2 versions x 2 repetitions, all of them numbers.
    assert_eq!(ms.len(), 32);
    for (point, variants) in by_point(&doc) {
        assert_eq!(
            variants,
            ["veos-1.2.2", "v1_64_96", "veos-1.2.2", "v1_64_96"],
            "point {point}"
        );
    }
    for m in ms {
        let params = &m["params"];
        let kb = item(params["args"].as_str().unwrap(), "kb");
        let huge = item(params["env"].as_str().unwrap(), "HUGE");
        let base = match m["variant"].as_str().unwrap() {
            "veos-1.2.2" => 1000,
            _ => 5000,
        };
        assert_eq!(value(m), f64::from(base + kb / 32 + 7 * huge), "{m}");
    }
    // The comparison says the versions differ in their command, not in the points.
    assert!(out.contains("v1_64_96"), "{out}");
}

#[test]
fn two_versions_through_exec_get_the_seeds_scan_table_per_page_size() {
    // Seed 002's table: size rows x version columns, one table per page size; never rows
    // named `args=kb=32 env=HUGE=0`. The fake versions print fixed numbers.
    let lab = Lab::new();
    let root = lab.dir.path();
    fake_version(root, "veos-1.2.2", 1000);
    fake_version(root, "veos-v1_64_96", 5000);
    let file = root.join("versions.toml");
    let text_of_example = std::fs::read_to_string(example()).unwrap();
    std::fs::write(
        &file,
        text_of_example.replace("\"/opt/", &format!("\"{}/opt/", root.display())),
    )
    .unwrap();
    let o = lab.run(&["run", file.to_str().unwrap(), "--quick"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    let id = run_id(&err);
    // The end of the run prints the scan, as `compare` does.
    let o = lab.run(&["compare", &id, "--section", "scan"]);
    let (scan, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains(&scan), "run's end:\n{out}\ncompare:\n{scan}");
    assert!(!scan.contains("args=kb"), "{scan}");
    // The notes name the monitors this machine has: not part of the table.
    let tables = scan.split("\nNotes:").next().unwrap();
    insta::assert_snapshot!(tables);
}

#[test]
fn variants_from_the_command_line_set_a_parameter_or_a_knob() {
    let lab = Lab::new();
    let root = lab.dir.path();
    fake_version(root, "a", 100);
    fake_version(root, "b", 300);
    let cmd = |v: &str| {
        format!(
            "{v}:cmd={}/opt/{v}/bin/memtransfer_bm ve2vh {{kb}}",
            root.display()
        )
    };
    let o = lab.run(&[
        "run",
        "--workload",
        "exec",
        "-p",
        "args=kb=64",
        "-p",
        "regex=([0-9]+) MiB/s",
        "--variant",
        &cmd("a"),
        "--variant",
        // A shell command's own `;` stays in it; `;env=` starts the next setting.
        &format!("{};true;env=HUGE=1", cmd("b")),
        "--reps",
        "3",
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    let run: Value = serde_json::from_str(&out).unwrap();
    let doc = lab.export(&run["run"].to_string());
    for (point, variants) in by_point(&doc) {
        assert_eq!(variants, ["a", "b", "a", "b", "a", "b"], "point {point}");
    }
    for m in doc["measurements"].as_array().unwrap() {
        let kb = item(m["params"]["args"].as_str().unwrap(), "kb");
        let expect = match m["variant"].as_str().unwrap() {
            "a" => 100 + kb / 32,
            _ => 300 + kb / 32 + 7,
        };
        assert_eq!(value(m), f64::from(expect), "{m}");
    }
    // b against the baseline a, in the JSON the run printed.
    let cmp = &run["comparisons"][0]["comparison"];
    assert_eq!((&cmp["base"], &cmp["other"]), (&"a".into(), &"b".into()));
    assert_eq!(cmp["rows"].as_array().unwrap().len(), 1, "{cmp}");

    // A knob still works the same way (the fake knob is not on this machine's /sys, so
    // the variant is unavailable, and says so).
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "--variant",
        "x:value=5",
        "--variant",
        "y:value=6;fake=1",
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(
        text(&o).1.contains("variant y is unavailable"),
        "{:?}",
        text(&o)
    );
}

#[test]
fn a_variant_setting_that_is_neither_parameter_nor_knob_is_bad_input() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "exec",
        "--variant",
        "v1:comand=./bench",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("\"comand\" is neither a parameter of workload exec (cmd, args,")
            && err.contains("nor a knob (cpuidle,")
            && err.contains("before, after"),
        "{err}"
    );
    let o = lab.run(&["run", "--workload", "null", "--variant", ":value=1"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(!lab.db().exists());
}
