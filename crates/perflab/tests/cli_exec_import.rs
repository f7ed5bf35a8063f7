//! End-to-end: wrapping a command with `exec` (variants by environment, a failing
//! repetition kept as failed), and importing a saved seed-002 scan table as a run.

use crate::common;

use common::{run_id, text, Lab};

#[test]
fn exec_study_with_env_variants_and_a_failing_repetition() {
    let lab = Lab::new();
    let file = lab.dir.path().join("exec.toml");
    std::fs::write(
        &file,
        r#"
name = "exec-demo"
workload = "exec"
repetitions = 4
[params]
cmd = "test -n \"$FAIL\" && exit 3; echo \"rate: $((100 * ${SCALE:-1}))\""
regex = 'rate: (\d+)'
[[variants]]
name = "one"
params = { env = "SCALE=1" }
[[variants]]
name = "two"
params = { env = "SCALE=2" }
[compare]
baseline = "one"
"#,
    )
    .unwrap();
    let o = lab.run(&["run", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    // 100 against 200 every time: a doubling, significant with 4 vs 4.
    assert!(out.contains("+100.0") && out.contains("better"), "{out}");

    let o = lab.run(&[
        "run",
        "--workload",
        "exec",
        "-p",
        "cmd=echo x; exit 3",
        "-p",
        "regex=(\\d+)",
        "--reps",
        "2",
    ]);
    let (_, err) = text(&o);
    // Every repetition failed: stored as failures, and the run exits 1.
    assert_eq!(o.status.code(), Some(1), "{err}");
    let doc = lab.export(&run_id(&err));
    let ms = doc["measurements"].as_array().unwrap();
    // Two results and the telemetry repetition the default counters monitor asks for.
    let headline: Vec<_> = ms.iter().filter(|m| m["role"] == "headline").collect();
    assert_eq!((ms.len(), headline.len()), (3, 2));
    for m in ms {
        let why = m["status"]["error"].as_str().unwrap();
        assert!(
            why.contains("exited with status 3") && why.contains("--- stdout"),
            "{why}"
        );
    }
}

#[test]
fn import_of_the_seed_scan_table_compares_version_against_version() {
    let lab = Lab::new();
    let table = "\
|    buff | veos 1.2.2 | v1_64_96 |
|      kb |  BW MiB/s  | BW MiB/s |
| ------- | ---------- | -------- |
|      32 |      131   |      106 |
|      64 |      249   |      263 |
|     128 |      447   |      477 |
";
    let file = lab.dir.path().join("scan.txt");
    std::fs::write(&file, table).unwrap();
    let o = lab.run(&[
        "import",
        "--parser",
        "seed-scan",
        file.to_str().unwrap(),
        "--label",
        "seed",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = run_id(&err);
    let o = lab.run(&["compare", &id, "--variants", "veos 1.2.2,v1_64_96"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("veos 1.2.2") && out.contains("0.809"), "{out}");

    // The wrong tool's output is an input error and stores nothing new.
    std::fs::write(&file, "{\"fio version\": \"fio-3.33\"}").unwrap();
    let o = lab.run(&["import", "--parser", "seed-scan", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let o = lab.run(&["import", "--parser", "nope", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = lab.run(&["ls"]);
    assert_eq!(text(&o).0.lines().count(), 2, "{:?}", text(&o));
}

/// Progress names each measurement's figure even where the primary metric is the parser's
/// (perf-bench's `total_time_s`, not exec's declared `value`): the last line, printed
/// whatever the pace, read `rep 0: ` with nothing after it.
#[test]
fn progress_lines_show_the_parser_s_figure() {
    let lab = Lab::new();
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parsers/tests/data/perf-bench/sched_pipe.txt");
    let o = lab.run(&[
        "run",
        "--workload",
        "exec",
        "-p",
        &format!("cmd=cat {}", out.display()),
        "-p",
        "parser=perf-bench",
        "--reps",
        "1",
        "--monitors",
        "none",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let last = err
        .lines()
        .rfind(|l| l.contains(" rep 0"))
        .unwrap_or_else(|| panic!("no progress line: {err}"));
    assert!(last.ends_with("rep 0: total_time_s = 0.241 s"), "{last}");
}
