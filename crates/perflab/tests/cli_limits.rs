//! Resource limits and bounds (issue 21): a grid too large to expand is refused from its
//! axes' lengths alone, numeric options outside their documented ranges are refused, and
//! odd `--monitors` and `--db` values get one plain line. Each refusal is exit 2 with one
//! line, and no database is created.

use crate::common;

use common::{text, Lab};

/// The billion-point grid of the issue: nine axes of ten values on `xfer`.
fn billion_point_grid() -> Vec<&'static str> {
    vec![
        "run",
        "--workload",
        "xfer",
        "-p",
        "size=1K,2K,3K,4K,5K,6K,7K,8K,9K,10K",
        "-p",
        "channels=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "threads_per_channel=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "buffers_per_thread=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "total_buffers=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "irq_period=1us,2us,3us,4us,5us,6us,7us,8us,9us,10us",
        "-p",
        "transfers_per_thread=1,2,3,4,5,6,7,8,9,10",
        "-p",
        "duration=1s,2s,3s,4s,5s,6s,7s,8s,9s,10s",
        "-p",
        "cpu=-1,0,1,2,3,4,5,6,7,8",
    ]
}

/// Runs perflab under a 1 GiB address-space limit: expanding the grid before counting it
/// needs tens of gigabytes, so the old behaviour dies of allocation failure here instead of
/// taking the machine's memory. Time is not measured: the memory bound says the same.
fn run_limited(lab: &Lab, args: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new("sh");
    c.arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_perflab"))
        .args(args)
        .env("PERFLAB_DB", lab.db())
        .env("PERFLAB_JOURNAL", lab.journal())
        .current_dir(lab.dir.path());
    c.output().unwrap()
}

#[test]
fn a_billion_point_grid_is_refused_from_its_axes_before_it_is_built() {
    let lab = Lab::new();
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut args = billion_point_grid();
        args.extend_from_slice(extra);
        let o = run_limited(&lab, &args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}\n{out}\n{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("the parameter grid has 1000000000 (10^9) points (buffers_per_thread 10 × channels 10 × cpu 10 × duration 10 × ")
                && err.contains("at most 100000"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
        assert!(!lab.db().exists());
    }
}

/// A grid of 10^5 points on `null` (1,000 values × 100), run `reps` times each.
fn hundred_thousand_points(reps: &str) -> Vec<String> {
    let list = |n: u32| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    [
        "run",
        "--workload",
        "null",
        "--monitors",
        "none",
        "-p",
        &format!("value={}", list(1000)),
        "-p",
        &format!("noise_pct={}", list(100)),
        "--reps",
        reps,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn a_plan_of_a_billion_measurements_is_refused_before_it_is_built() {
    // 10^5 points × 10^4 repetitions: each factor is within its own bound, the product
    // is not. Under the 1 GiB address-space limit, planning any of it dies of allocation
    // failure (it once aborted on a 64 GB allocation and left an empty database).
    let lab = Lab::new();
    let grid = hundred_thousand_points("10000");
    for extra in [
        &[][..],
        &["--dry-run"][..],
        &["--dry-run", "--format", "json"][..],
    ] {
        let mut args: Vec<&str> = grid.iter().map(String::as_str).collect();
        args.extend_from_slice(extra);
        let o = run_limited(&lab, &args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}\n{out}\n{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(
                "the plan has 1000000000 (10^9) measurements (100000 points × 1 variant × \
                 10000 repetitions); at most 10000000 are allowed"
            ),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
        assert!(!lab.db().exists());
    }
    // The adaptive cap counts: 10^5 points may not grow to 10^4 repetitions each.
    let capped = hundred_thousand_points("3");
    let mut args: Vec<&str> = capped.iter().map(String::as_str).collect();
    args.extend_from_slice(&["--target-ci", "1", "--max-reps", "10000", "--dry-run"]);
    let o = run_limited(&lab, &args);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("(100000 points × 1 variant × 10000 repetitions (the adaptive cap))"),
        "{err}"
    );
}

/// Runs perflab with `args`, its standard output handed to `read` on a thread, and
/// returns its exit code, standard error, peak resident memory in MiB (from wait4, so
/// only this child's) and what `read` made of the output.
// The child is reaped with wait4 (for its peak memory), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn peak_memory<T: Send + 'static>(
    lab: &Lab,
    args: &[&str],
    read: fn(std::process::ChildStdout) -> T,
) -> (Option<i32>, String, f64, T) {
    let mut child = lab
        .cmd()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let hwm = crate::common::peak_rss::watch(child.id());
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || read(out));
    let err = std::thread::spawn(move || std::io::read_to_string(err).unwrap());
    let mut status = 0;
    // SAFETY: wait4 on our own child, writing into values we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(reaped, pid);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // perflab's own high-water mark, not ru_maxrss (which carries this harness's: see
    // common::peak_rss).
    let peak = hwm.join().unwrap();
    (code, err.join().unwrap(), peak, out.join().unwrap())
}

/// What a JSON dry-run says of its plan, read line by line: its `measurements`, how many
/// entries its `plan` has and the last entry's seq (the document is too large to parse
/// whole in a test).
fn plan_entries(out: std::process::ChildStdout) -> (String, usize, String) {
    use std::io::BufRead;
    let (mut measurements, mut entries, mut last) = (String::new(), 0, String::new());
    for line in std::io::BufReader::new(out).lines() {
        let line = line.unwrap();
        let line = line.trim();
        if let Some(n) = line.strip_prefix("\"measurements\": ") {
            measurements = n.trim_end_matches(',').to_string();
        } else if let Some(seq) = line.strip_prefix("\"seq\": ") {
            entries += 1;
            last = seq.trim_end_matches(',').to_string();
        }
    }
    (measurements, entries, last)
}

#[test]
fn a_plan_of_a_million_measurements_is_shown_in_bounded_memory() {
    // 10^5 points × 10 repetitions: the plan was built whole (0.94 GB for the text
    // dry-run, 1.19 GB for a run); now it is counted, and made only as it is shown, so
    // what remains is the grid's (about 1.5 KB a point).
    let lab = Lab::new();
    let mut args: Vec<String> = hundred_thousand_points("10");
    args.push("--dry-run".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, err, peak, out) = peak_memory(&lab, &args, |o| std::io::read_to_string(o).unwrap());
    assert_eq!(code, Some(0), "{err}");
    assert!(peak < 200.0, "peak RSS {peak:.1} MiB");
    let tail = &out[out.len().saturating_sub(2000)..];
    assert!(
        out.contains("100000 points x 1 variants x 10 repetitions = 1000000 measurements"),
        "{tail}"
    );
    assert!(out.contains("  … 999980 more"), "{tail}");

    // The JSON form writes every measurement of the plan, one at a time.
    let mut json = args.clone();
    json.extend_from_slice(&["--format", "json"]);
    let (code, err, peak, (measurements, entries, last)) = peak_memory(&lab, &json, plan_entries);
    assert_eq!(code, Some(0), "{err}");
    assert!(peak < 200.0, "peak RSS {peak:.1} MiB");
    assert_eq!(measurements, "1000000");
    assert_eq!(entries, 1_000_000);
    assert_eq!(last, "999999");
    assert!(!lab.db().exists());
}

/// An export of `n` measurements (about 4.5 KB each: a null run's, with its telemetry),
/// made from a real one of two by numbering copies of its first plan row and
/// measurement: as `export` writes it, one record per line.
fn large_export(lab: &Lab, n: u32) -> std::path::PathBuf {
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "--reps",
        "2",
        "--monitors",
        "interrupts,softirqs,cpu_time,cpuidle",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let o = lab.run(&["export", &common::run_id(&err)]);
    let doc = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = doc.lines().collect();
    let at = |l: &str| lines.iter().position(|x| *x == l).unwrap();
    let (plan, measurements) = (at("  \"plan\": ["), at("  \"measurements\": ["));
    let record = |line: &str| -> serde_json::Value {
        serde_json::from_str(line.trim().trim_end_matches(',')).unwrap()
    };
    let (row, m) = (record(lines[plan + 1]), record(lines[measurements + 1]));
    let path = lab.dir.path().join("large.json");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let list = |out: &mut dyn std::io::Write, template: &serde_json::Value| {
        for i in 0..n {
            let mut r = template.clone();
            r["seq"] = i.into();
            r["rep"] = i.into();
            let sep = if i + 1 < n { "," } else { "" };
            writeln!(out, "    {r}{sep}").unwrap();
        }
    };
    use std::io::Write;
    writeln!(out, "{}", lines[..=plan].join("\n")).unwrap();
    list(&mut out, &row);
    writeln!(out, "  ],\n  \"measurements\": [").unwrap();
    list(&mut out, &m);
    writeln!(out, "  ]\n}}").unwrap();
    out.flush().unwrap();
    path
}

#[test]
fn a_large_export_is_imported_in_bounded_memory() {
    // 8,000 measurements, 37 MB: the import read the file whole, as text and then as one
    // value (569 MB took 2.9 GB; 47 MB 231 MB); the text alone and its copy would be
    // 74 MB. Read as a stream, the import holds a fingerprint of each plan row.
    let lab = Lab::new();
    let file = large_export(&lab, 8_000);
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 32_000_000, "{size} bytes");
    let db = lab.dir.path().join("imported.db");
    let args = [
        "--db",
        db.to_str().unwrap(),
        "import",
        "--parser",
        "perflab-json",
        file.to_str().unwrap(),
    ];
    let (code, err, peak, _) = peak_memory(&lab, &args, |o| std::io::read_to_string(o).unwrap());
    assert_eq!(code, Some(0), "{err}");
    assert!(peak < 80.0, "peak RSS {peak:.1} MiB");
    assert!(
        err.contains("imported from") && err.contains("8000 new measurement(s), 0 there"),
        "{err}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let count = |t: &str| -> i64 {
        c.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!((count("plan"), count("measurements")), (8_000, 8_000));
    // Again: nothing new, and the plan compared row by row, in bounded memory too.
    let (code, err, peak, _) = peak_memory(&lab, &args, |o| std::io::read_to_string(o).unwrap());
    assert_eq!(code, Some(0), "{err}");
    assert!(peak < 80.0, "peak RSS {peak:.1} MiB");
    assert!(
        err.contains("imported before") && err.contains("0 new measurement(s), 8000 there"),
        "{err}"
    );
}

#[test]
fn a_plan_longer_than_a_chunk_is_measured_whole() {
    // The runner reads pending measurements 4,096 at a time; the second chunk starts
    // after the first's last seq, so nothing is measured twice or left out.
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "--reps",
        "4500",
        "--monitors",
        "none",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("complete (4500 measured this session, 0 failed, 0 left)"),
        "{err}"
    );
    let c = rusqlite::Connection::open(lab.db()).unwrap();
    let (n, distinct): (i64, i64) = c
        .query_row(
            "SELECT count(*), count(DISTINCT rep) FROM measurements m JOIN plan p \
             ON p.run_id = m.run_id AND p.seq = m.seq",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((n, distinct), (4500, 4500));
}

#[test]
fn show_reads_a_large_run_as_report_does() {
    // 1,000 measurements with their telemetry: `show` loaded every record whole (211 MB,
    // and 1.84 GB for 10,000); it now folds them as they stream, as `report` does.
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "--reps",
        "1000",
        "--monitors",
        "interrupts,softirqs,cpu_time,cpuidle",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let id = common::run_id(&err);
    for format in ["text", "json"] {
        let args = ["show", id.as_str(), "--format", format];
        let (code, err, peak, out) =
            peak_memory(&lab, &args, |o| std::io::read_to_string(o).unwrap());
        assert_eq!(code, Some(0), "{err}");
        assert!(peak < 80.0, "{format}: peak RSS {peak:.1} MiB");
        assert!(out.contains("1000"), "{out}");
    }
}

/// Every numeric flag: the command before it, the flag, values outside its range, and the
/// range as its `--help` states it. A value outside is exit 2 with one line naming the flag.
const NUMERIC_FLAGS: &[(&[&str], &str, &[&str], &str)] = &[
    (
        &["run", "--workload", "null"],
        "--reps",
        &["0", "10001", "99999999999"],
        "(1 to 10000)",
    ),
    (
        &["run", "--workload", "null"],
        "--warmup",
        &["1001"],
        "(0 to 1000)",
    ),
    (
        &["run", "--workload", "null"],
        "--telemetry-reps",
        &["101"],
        "(0 to 100)",
    ),
    (
        &["run", "--workload", "ctxsw"],
        "--anchor",
        &["4096", "-1"],
        "0 to 4095",
    ),
    (
        &["run", "--workload", "null"],
        "--target-ci",
        &[
            "0",
            "-1",
            "101",
            "1e308",
            "9223372036854775807",
            "inf",
            "nan",
        ],
        "above 0, at most 100",
    ),
    (
        &["run", "--workload", "null", "--target-ci", "1"],
        "--max-reps",
        &["10001", "2"],
        "(the planned repetitions to 10000)",
    ),
    (&["report", "1"], "--changes", &["101"], "0 to 100)"),
    (
        &["report", "1"],
        "--alpha",
        &["0", "1", "1e308"],
        "(above 0, below 1)",
    ),
    (
        &["report", "1"],
        "--noise",
        &["-1", "101", "1e308"],
        "0 to 100)",
    ),
    (
        &["report", "1"],
        "--buckets",
        &["1,1e308", "0,1"],
        "each above 0 and at most 10000",
    ),
    (&["compare", "1"], "--noise", &["1e308"], "0 to 100)"),
    (
        &["crosscheck", "ctxsw"],
        "--rounds",
        &["0", "1001"],
        "(1 to 1000)",
    ),
    (
        &["crosscheck", "monitors"],
        "--monitor-pairs",
        &["1", "10001"],
        "(2 to 10000)",
    ),
    (
        &["crosscheck", "monitors"],
        "--max-pairs",
        &["10001"],
        "(2 to 10000)",
    ),
    (
        &["crosscheck", "ctxsw"],
        "--tolerance",
        &["-1", "101", "1e308"],
        "0 to 100",
    ),
    (
        &["crosscheck", "ctxsw"],
        "--duration",
        &["0s", "1e300s"],
        "above 0, at most a day",
    ),
    (
        &["crosscheck", "monitors"],
        "--measure",
        &["1e300s"],
        "above 0, at most a day",
    ),
    (&["serve"], "--port", &["65536"], "(0 to 65535"),
    (&["serve"], "--max-sessions", &["0", "1025"], "(1 to 1024)"),
    (
        &["serve"],
        "--session-time",
        &["0s", "1e300s"],
        "above 0, at most a day",
    ),
    (
        &["serve"],
        "--handshake-time",
        &["1e300s"],
        "above 0, at most a day",
    ),
    (
        &["fleet", "doctor", "--hosts", "h"],
        "--connect-timeout",
        &["1e300s"],
        "above 0, at most a day",
    ),
];

#[test]
fn every_numeric_flag_is_refused_outside_its_documented_range() {
    let lab = Lab::new();
    let o = lab.run(&[
        "run",
        "--workload",
        "null",
        "--reps",
        "1",
        "--monitors",
        "interrupts",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let before = std::fs::read(lab.db()).unwrap();
    for (cmd, flag, bad, range) in NUMERIC_FLAGS {
        for v in *bad {
            let mut args = cmd.to_vec();
            let given = format!("{flag}={v}");
            args.push(&given);
            let o = lab.run(&args);
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}\n{out}\n{err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.starts_with("perflab: ") && err.contains(flag),
                "{args:?}: {err}"
            );
        }
        let help_cmd: Vec<&str> = cmd
            .iter()
            .take_while(|a| !a.starts_with('-') && a.parse::<i64>().is_err())
            .copied()
            .chain(["--help"])
            .collect();
        let (help, _) = text(&lab.run(&help_cmd));
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = help
            .find(&format!("{flag} "))
            .unwrap_or_else(|| panic!("{help_cmd:?} does not document {flag}"));
        // The flag's own entry: the next ones start further than this.
        let entry: String = help[at..].chars().take(300).collect();
        assert!(
            entry.contains(range),
            "{help_cmd:?}: {flag}'s help does not state {range:?}: {entry}"
        );
    }
    assert!(
        std::fs::read(lab.db()).unwrap() == before,
        "the database changed"
    );
}

#[test]
fn monitors_none_or_an_empty_list_runs_without_monitors() {
    let lab = Lab::new();
    for given in ["--monitors=none", "--monitors=", "--monitors= , "] {
        let o = lab.run(&["run", "--workload", "null", "--reps", "1", given]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{given}\n{out}\n{err}");
        let doc = lab.export(&common::run_id(&err));
        assert_eq!(
            doc["run"]["spec"]["monitors"],
            serde_json::json!([]),
            "{given}"
        );
        for m in doc["measurements"].as_array().unwrap() {
            assert_eq!(m["monitors"], serde_json::json!([]), "{given}");
            assert_eq!(m["telemetry"], serde_json::json!([]), "{given}");
        }
    }
    let o = lab.run(&["run", "--workload", "null", "--monitors", "none,interrupts"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("\"none\" means no monitor"), "{err}");
}

#[test]
fn a_db_that_is_a_directory_or_another_database_is_refused_in_one_line() {
    let lab = Lab::new();
    let dir = lab.dir.path().join("results-dir");
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap().to_string();
    let url = "mysql://alice:s3cret@db.lab/perf";
    let pipe = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parsers/tests/data/perf-bench/sched_pipe.txt");
    let pipe = pipe.to_str().unwrap();
    for (db, needle) in [
        (dir.as_str(), "is a directory; give a file in it"),
        (url, "mysql:// is not a supported database"),
    ] {
        for args in [
            &["run", "--workload", "null", "--reps", "1"][..],
            &["ls"][..],
            &["import", "--parser", "perf-bench", pipe][..],
        ] {
            let o = lab.cmd().arg("--db").arg(db).args(args).output().unwrap();
            let (_, err) = text(&o);
            assert_eq!(o.status.code(), Some(2), "{db} {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{db} {args:?}: {err}");
            assert!(err.contains(needle), "{db} {args:?}: {err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
    }
    assert!(
        !lab.dir.path().join("mysql:").exists(),
        "the URL was taken for a path"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "files in the directory"
    );
}
