//! End-to-end tests of `exec` with /bin/sh commands only.

use std::sync::atomic::Ordering;
use std::time::Instant;

use perflab_core::{resolve, SysRoot};

use super::*;

fn params(pairs: &[(&str, &str)]) -> Params {
    let given: BTreeMap<String, String> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    resolve("exec", PARAMS, &given).unwrap()
}

fn ctx() -> MeasureCtx {
    MeasureCtx::new(SysRoot::host(), Vec::new())
}

fn run(pairs: &[(&str, &str)]) -> Result<WorkloadOutput, WorkloadError> {
    Exec.run(&params(pairs), &ctx())
}

fn value(out: &WorkloadOutput, name: &str) -> f64 {
    out.metric(name)
        .map(|m| m.value)
        .unwrap_or_else(|| panic!("no metric {name} in {:?}", out.metrics))
}

fn failure(r: Result<WorkloadOutput, WorkloadError>) -> String {
    match r {
        Err(WorkloadError::Failed(m)) => m,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// Live (not zombie) members of process group `pgid`, from /proc. A killed member whose
/// parent died first stays a zombie until init reaps it, which here takes a second or
/// two; a zombie runs nothing, so it does not count.
fn live_members(pgid: i32) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the command name: state, ppid, pgrp.
        if f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z" {
            live.push(stat.clone());
        }
    }
    live
}

/// True while group `pgid` still has live members twenty seconds on (SIGKILL is delivered
/// asynchronously, so a member may take a moment to die, longer on a loaded machine).
fn group_alive(pgid: i32) -> bool {
    let end = Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let live = live_members(pgid);
        if live.is_empty() {
            return false;
        }
        if Instant::now() >= end {
            eprintln!("live members of group {pgid}: {live:?}");
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn regex_extracts_the_number_with_unit_and_direction() {
    let out = run(&[
        ("cmd", "echo 'copy: 1234.5 MB/s'; echo 'copy: 1 MB/s'"),
        ("regex", r"copy: ([0-9.]+) MB/s"),
        ("metric", "bw"),
        ("unit", "mib_per_second"),
        ("better", "higher"),
    ])
    .unwrap();
    let m = &out.metrics[0];
    assert_eq!(
        (m.name.as_str(), m.value, m.unit, m.better),
        ("bw", 1234.5, Unit::MibPerSecond, Better::Higher)
    );
    assert_eq!(value(&out, "exit_code"), 0.0);
    let wall = out.metric("wall_s").unwrap();
    assert!(wall.value > 0.0 && wall.value < 5.0, "{wall:?}");
    assert_eq!(wall.better, Better::Lower);
    assert!(out.notes.is_empty(), "{:?}", out.notes);
}

#[test]
fn regex_on_stderr_and_default_name() {
    let out = run(&[
        ("cmd", "echo 'lat 42 us' >&2"),
        ("regex", r"lat (\d+)"),
        ("from", "stderr"),
        ("better", "lower"),
    ])
    .unwrap();
    assert_eq!(out.metrics[0].name, "value");
    assert_eq!(out.metrics[0].value, 42.0);
    assert_eq!(out.metrics[0].better, Better::Lower);
}

#[test]
fn json_pointer_reads_stdout_document() {
    let out = run(&[
        ("cmd", r#"printf '{"jobs":[{"read":{"bw_bytes":5e8}}]}'"#),
        ("json", "/jobs/0/read/bw_bytes"),
        ("metric", "read_bw"),
        ("unit", "bytes_per_second"),
    ])
    .unwrap();
    assert_eq!(value(&out, "read_bw"), 5e8);
    assert_eq!(out.metrics[0].unit, Unit::BytesPerSecond);
    let e = failure(run(&[("cmd", "echo '{}'"), ("json", "/missing")]));
    assert!(e.contains("json pointer \"/missing\" names nothing"), "{e}");
}

#[test]
fn parser_by_name_or_a_clear_error() {
    let e = failure(run(&[("cmd", "true"), ("parser", "no-such-tool")]));
    assert!(
        e.contains("no parser named \"no-such-tool\" (known: "),
        "{e}"
    );
    for name in perflab_parsers::names() {
        assert!(e.contains(name), "{e}");
    }
    // No registered parser finds a metric in a greeting; exec makes that a failure.
    for name in perflab_parsers::names() {
        let e = failure(run(&[("cmd", "echo hello"), ("parser", name)]));
        assert!(e.contains(&format!("parser {name}")), "{e}");
    }
}

/// `perf bench sched pipe` output as perf prints it.
const PERF_BENCH_PIPE: &str = "# Running 'sched/pipe' benchmark:
# Executed 20000 pipe operations between two processes

     Total time: 0.241 [sec]

      12.078800 usecs/op
          82789 ops/sec
";

#[test]
fn parser_metrics_are_reported_whole_with_the_chosen_one_first() {
    let info = perflab_parsers::by_name("perf-bench").expect("perf-bench parser");
    let direct = (info.parse)(PERF_BENCH_PIPE).unwrap();
    assert!(direct.metrics.len() >= 2, "{:?}", direct.metrics);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.txt");
    std::fs::write(&file, PERF_BENCH_PIPE).unwrap();
    let cmd = format!("cat '{}'", file.display());
    let out = run(&[("cmd", &cmd), ("parser", "perf-bench")]).unwrap();
    assert_eq!(out.metrics[..direct.metrics.len()], direct.metrics[..]);
    for own in OWN_METRICS {
        assert!(out.metric(own).is_some(), "{own}: {:?}", out.metrics);
    }
    let second = &direct.metrics[1];
    let out = run(&[
        ("cmd", &cmd),
        ("parser", "perf-bench"),
        ("metric", &second.name),
    ])
    .unwrap();
    assert_eq!(out.metrics[0], *second);
    assert_eq!(out.metrics.len(), direct.metrics.len() + OWN_METRICS.len());
    let e = failure(run(&[
        ("cmd", &cmd),
        ("parser", "perf-bench"),
        ("metric", "nope"),
    ]));
    assert!(
        e.contains("reported no metric \"nope\" (it reported: "),
        "{e}"
    );
    // Output of another tool is refused by the parser, and the repetition fails.
    let e = failure(run(&[("cmd", &cmd), ("parser", "fio")]));
    assert!(e.contains("parser fio on stdout: "), "{e}");
}

#[test]
fn env_and_placeholders_reach_the_command() {
    let out = run(&[
        ("cmd", "echo \"v=$((HUGE * {mult} + {size}))\" {duration}"),
        ("args", "mult=10; size=5"),
        ("env", "HUGE=3;UNUSED={size}"),
        ("duration", "500ms"),
        ("regex", r"^v=(\d+) 0\.5$"),
    ])
    .unwrap();
    assert_eq!(value(&out, "value"), 35.0);
    let out = run(&[
        ("cmd", "echo \"[$UNUSED]\" | awk '{print 7}'"),
        ("env", "UNUSED={size}"),
        ("args", "size=9"),
        ("regex", r"(\d+)"),
    ])
    .unwrap();
    assert_eq!(value(&out, "value"), 7.0);
    // awk's {print …} is not a placeholder; a {word} that looks like one is noted.
    let out = run(&[
        ("cmd", "echo '{szie} 3'"),
        ("args", "size=1"),
        ("regex", r"\} (\d)"),
    ])
    .unwrap();
    assert!(
        out.notes.iter().any(|n| n.contains("{szie}")),
        "{:?}",
        out.notes
    );
    let e = failure(run(&[("cmd", "true"), ("args", "timeout=3")]));
    assert!(e.contains("one of exec's own parameters"), "{e}");
}

#[test]
fn cwd_is_used_and_a_missing_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "17\n").unwrap();
    let d = dir.path().to_string_lossy().into_owned();
    let out = run(&[("cmd", "cat n.txt"), ("cwd", &d), ("regex", r"(\d+)")]).unwrap();
    assert_eq!(value(&out, "value"), 17.0);
    let e = failure(run(&[("cmd", "true"), ("cwd", "/nonexistent/dir")]));
    assert!(
        e.contains("cannot start /bin/sh in /nonexistent/dir"),
        "{e}"
    );
}

#[test]
fn non_zero_exit_fails_with_the_stderr_tail() {
    let e = failure(run(&[(
        "cmd",
        "i=0; while [ $i -lt 300 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done; \
         echo 'fatal: no such device' >&2; exit 3",
    )]));
    assert!(e.contains("exited with status 3"), "{e}");
    assert!(e.contains("--- stderr (last 1024 of"), "{e}");
    assert!(e.trim_end().ends_with("fatal: no such device"), "{e}");
    assert!(!e.contains("noise line 0\n"), "{e}");
    assert!(e.len() < 2000, "{} bytes: {e}", e.len());

    let e = failure(run(&[("cmd", "kill -9 $$")]));
    assert!(
        e.contains("killed by signal 9 (SIGKILL)") && e.contains("(no output)"),
        "{e}"
    );
}

#[test]
fn regex_without_match_is_a_clear_failure() {
    let e = failure(run(&[
        ("cmd", "echo 'throughput: n/a'"),
        ("regex", r"throughput: ([0-9.]+)"),
    ]));
    assert!(
        e.contains(r#"regex "throughput: ([0-9.]+)" matched nothing in stdout, which starts "throughput: n/a\n""#),
        "{e}"
    );
}

#[test]
fn only_timing_when_nothing_is_extracted() {
    let out = run(&[("cmd", "sleep 0.05")]).unwrap();
    assert_eq!(out.metrics[0].name, "wall_s");
    assert!(value(&out, "wall_s") >= 0.05, "{:?}", out.metrics);
}

#[test]
fn live_members_sees_a_running_group() {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new("sleep")
        .arg("10")
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = c.id() as i32;
    assert_eq!(live_members(pgid).len(), 1);
    c.kill().unwrap();
    c.wait().unwrap();
    assert!(live_members(pgid).is_empty());
}

#[test]
fn a_hanging_command_times_out_and_leaves_no_process() {
    let c = ctx();
    let t0 = Instant::now();
    // A background child in the same group must die with the shell.
    let e = match Exec.run(
        &params(&[("cmd", "sleep 100 & sleep 100"), ("timeout", "0.5s")]),
        &c,
    ) {
        Err(WorkloadError::Failed(m)) => m,
        other => panic!("{other:?}"),
    };
    let took = t0.elapsed();
    assert!(e.contains("timed out after 0.5 s"), "{e}");
    // The timeout and the kill (about 0.5 s, plus a second's grace at most), not the
    // command's 100 s, ended it; the bound leaves room for a loaded machine.
    assert!(took.as_secs_f64() < 30.0, "took {took:?}");
    let rec = c.threads.take();
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].role, "exec");
    assert!(
        !group_alive(rec[0].tid),
        "process group {} survived",
        rec[0].tid
    );
}

#[test]
fn a_command_ignoring_sigterm_is_killed() {
    let c = ctx();
    let t0 = Instant::now();
    let e = match Exec.run(
        &params(&[("cmd", "trap '' TERM; sleep 100"), ("timeout", "0.2s")]),
        &c,
    ) {
        Err(WorkloadError::Failed(m)) => m,
        other => panic!("{other:?}"),
    };
    assert!(e.contains("timed out"), "{e}");
    // SIGTERM ignored, SIGKILL a second later: far from the command's 100 s.
    assert!(t0.elapsed().as_secs_f64() < 30.0, "{:?}", t0.elapsed());
    assert!(!group_alive(c.threads.take()[0].tid));
}

#[test]
fn leftovers_after_a_normal_exit_are_ended() {
    let c = ctx();
    let t0 = Instant::now();
    let out = Exec
        .run(
            &params(&[("cmd", "sleep 100 & echo 5"), ("regex", r"(\d)")]),
            &c,
        )
        .unwrap();
    assert_eq!(value(&out, "value"), 5.0);
    // The leftover `sleep 100` was ended, not waited for.
    assert!(t0.elapsed().as_secs_f64() < 30.0, "{:?}", t0.elapsed());
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("left processes running")),
        "{:?}",
        out.notes
    );
    assert!(!group_alive(c.threads.take()[0].tid));
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn huge_output_is_drained_within_max_output() {
    let before = peak_rss_kib();
    let e = failure(run(&[
        ("cmd", "head -c 50000000 /dev/zero"),
        ("max_output", "1M"),
        ("regex", r"(\d+)"),
    ]));
    assert!(e.contains("matched nothing in stdout"), "{}", &e[..300]);
    assert!(
        e.contains("[stdout was 50000000 bytes; only the first 1M were kept"),
        "{}",
        &e[..300]
    );
    assert!(
        e.contains("--- stdout (last 1024 of 50000000 bytes)"),
        "{}",
        &e[..300]
    );
    let out = run(&[
        ("cmd", "head -c 50000000 /dev/zero; echo 'rate 9' >&2"),
        ("max_output", "1M"),
        ("regex", r"rate (\d)"),
        ("from", "stderr"),
    ])
    .unwrap();
    assert_eq!(value(&out, "value"), 9.0);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("stdout was 50000000 bytes; only the first 1M were kept")),
        "{:?}",
        out.notes
    );
    let grew = peak_rss_kib().saturating_sub(before);
    assert!(grew < 30_000, "peak RSS grew by {grew} KiB");
}

#[test]
fn truncated_output_is_named_when_extraction_fails() {
    let e = failure(run(&[
        (
            "cmd",
            "head -c 100000 /dev/zero | tr '\\0' x; echo; echo 'result 4'",
        ),
        ("max_output", "64K"),
        ("regex", r"result (\d)"),
    ]));
    assert!(e.contains("only the first 64K were kept"), "{e}");
    assert!(e.contains("raise max_output"), "{e}");
    assert!(e.trim_end().ends_with("result 4"), "{e}");
}

#[test]
fn stop_flag_interrupts_promptly() {
    let c = ctx();
    let stop = c.stop.clone();
    let t0 = Instant::now();
    let h = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
    });
    let r = Exec.run(&params(&[("cmd", "sleep 100")]), &c);
    h.join().unwrap();
    assert!(matches!(r, Err(WorkloadError::Interrupted)), "{r:?}");
    // Far from the command's 100 s, with room for a loaded machine.
    assert!(t0.elapsed().as_secs_f64() < 30.0, "{:?}", t0.elapsed());
    assert!(!group_alive(c.threads.take()[0].tid));
}

#[test]
fn pinned_command_runs_on_its_cpu_and_is_recorded() {
    let p = params(&[
        ("cmd", "grep Cpus_allowed_list /proc/self/status"),
        ("cpus", "0"),
        ("regex", r"Cpus_allowed_list:\s*(\d+)$"),
    ]);
    assert_eq!(Exec.cpus(&p), Ok(vec![0]));
    assert_eq!(Exec.cpus(&params(&[("cmd", "true")])), Ok(vec![]));
    let c = ctx();
    let out = Exec.run(&p, &c).unwrap();
    assert_eq!(value(&out, "value"), 0.0);
    let rec = c.threads.take();
    assert_eq!(rec[0].pinned_cpu, Some(0));
    assert!(rec[0].end_ns > rec[0].start_ns);
    assert!(rec[0].voluntary_switches.is_some());
    let e = failure(run(&[("cmd", "true"), ("cpus", "3-1")]));
    assert!(e.contains("cpus \"3-1\""), "{e}");
}

#[test]
fn unit_and_better_choices_all_map_to_core_types() {
    for u in UNITS {
        assert!(unit(u).is_ok(), "{u}");
    }
    for b in BETTER {
        assert!(better(b).is_ok(), "{b}");
    }
    let e = failure(run(&[("cmd", "true"), ("regex", "x"), ("json", "/x")]));
    assert!(e.contains("only one of regex, json and parser"), "{e}");
    let e = failure(run(&[
        ("cmd", "echo 1"),
        ("regex", "(1)"),
        ("metric", "wall_s"),
    ]));
    assert!(e.contains("exec reports itself"), "{e}");
}

#[test]
fn bytes_is_a_product_of_sizes_after_placeholders() {
    let out = run(&[
        ("cmd", "echo {size}"),
        ("args", "size=64MB;loops=20"),
        ("bytes", "{size}*{loops}"),
        ("regex", r"(\d+)"),
    ])
    .unwrap();
    assert_eq!(value(&out, "bytes"), (64u64 << 20) as f64 * 20.0);

    for (bytes, why) in [
        ("{size}*x", "bytes \"64M*x\": \"x\" is not a size"),
        ("1T*1T*1T", "does not fit in 64 bits"),
    ] {
        let msg = failure(run(&[
            ("cmd", "echo 1"),
            ("args", "size=64M"),
            ("bytes", bytes),
            ("regex", r"(\d+)"),
        ]));
        assert!(msg.contains(why), "{bytes}: {msg}");
    }
}
