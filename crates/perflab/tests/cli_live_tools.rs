//! Live runs of the peer tools perflab wraps: each tool really runs (briefly, on loopback or
//! with fio's null engine) under the `exec` workload with its built-in parser, and the run's
//! stored metrics are checked. The parsers' own tests read captured output; these prove the
//! captured formats are still what the installed tools print.
//!
//! Each test needs its tool installed (`.ci/run` installs them) and is skipped, saying so,
//! where it is not.

use crate::common;

use common::{run_id, text, Lab};
use perflab_testkit::have_tool as have;

/// A port for a tool's server, different per tool and per test process, so that parallel
/// test runs on one machine do not collide.
fn port(offset: u32) -> u32 {
    20_000 + (std::process::id() % 2_000) * 8 + offset
}

/// A shell snippet that waits until something listens on `port` (`proto`: `u` for UDP,
/// `t` for TCP), 30 s at most: a tool's server started in the background is ready when it
/// listens, which a loaded machine may take longer than any fixed sleep to reach. Each
/// command below waits for its server to be gone before it ends, so the next repetition
/// cannot find the last one's server still listening.
fn wait_listening(proto: char, port: u32) -> String {
    format!(
        "i=0; until ss -Hl{proto}n 'sport = :{port}' 2>/dev/null | grep -q .; do \
         i=$((i+1)); [ $i -ge 300 ] && break; sleep 0.1; done"
    )
}

/// Runs `cmd` under exec with `parser`, `reps` times, and returns the stored metrics of
/// every repetition (all of which must have succeeded).
fn live(cmd: &str, parser: &str, reps: u32) -> Vec<serde_json::Value> {
    let lab = Lab::new();
    let reps_arg = reps.to_string();
    let o = lab.run(&[
        "run",
        "--workload",
        "exec",
        "-p",
        &format!("cmd={cmd}"),
        "-p",
        &format!("parser={parser}"),
        "-p",
        "timeout=60s",
        "--reps",
        &reps_arg,
        "--warmup",
        "0",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    let doc = lab.export(&run_id(&err));
    // The results; the default counters monitor adds a telemetry repetition apart.
    let ms: Vec<serde_json::Value> = doc["measurements"]
        .as_array()
        .expect("measurements")
        .iter()
        .filter(|m| m["role"] == "headline")
        .cloned()
        .collect();
    assert_eq!(ms.len(), reps as usize, "{doc}");
    for m in &ms {
        assert_eq!(m["status"]["status"], "ok", "{parser}: {m}");
    }
    ms
}

fn value(m: &serde_json::Value, name: &str) -> f64 {
    m["output"]["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|x| x["name"] == name))
        .and_then(|x| x["value"].as_f64())
        .unwrap_or_else(|| panic!("no metric {name} in {m}"))
}

#[test]
fn perf_stat_counts_the_software_events_of_a_command() {
    if !have("perf", "linux-perf") {
        return;
    }
    let ms = live(
        "perf stat -x, -e task-clock,page-faults dd if=/dev/zero of=/dev/null bs=1M count=64 2>&1",
        "perf-stat",
        2,
    );
    for m in &ms {
        assert!(value(m, "task_clock_ms") > 0.0, "{m}");
        // dd's 1 MiB buffer alone is 256 pages touched.
        assert!(value(m, "page_faults") >= 256.0, "{m}");
    }
}

#[test]
fn sockperf_ping_pong_on_loopback() {
    if !have("sockperf", "sockperf") {
        return;
    }
    let p = port(0);
    let ms = live(
        &format!(
            "sockperf sr -i 127.0.0.1 -p {p} >/dev/null 2>&1 & s=$!; {}; \
             sockperf pp -i 127.0.0.1 -p {p} -t 1; r=$?; kill $s; wait $s; exit $r",
            wait_listening('u', p)
        ),
        "sockperf",
        2,
    );
    for m in &ms {
        let avg = value(m, "latency_avg_us");
        assert!(avg > 0.0 && avg < 10_000.0, "{m}");
        assert!(value(m, "received_messages") > 100.0, "{m}");
    }
}

#[test]
fn fio_null_engine_reads() {
    if !have("fio", "fio") {
        return;
    }
    let ms = live(
        "fio --name=t --ioengine=null --size=64M --rw=read --bs=4k --output-format=json",
        "fio",
        2,
    );
    for m in &ms {
        // 64 MiB in 4 KiB blocks: the count is exact, whatever the speed.
        assert_eq!(value(m, "read_io_bytes"), 64.0 * 1024.0 * 1024.0, "{m}");
        assert!(value(m, "read_iops") > 0.0, "{m}");
    }
}

#[test]
fn iperf3_tcp_on_loopback() {
    if !have("iperf3", "iperf3") {
        return;
    }
    let p = port(1);
    let ms = live(
        &format!(
            "iperf3 -s -1 -p {p} >/dev/null 2>&1 & s=$!; {}; \
             iperf3 -c 127.0.0.1 -p {p} -t 1 -J; r=$?; kill $s 2>/dev/null; wait $s; exit $r",
            wait_listening('t', p)
        ),
        "iperf3",
        2,
    );
    for m in &ms {
        assert!(value(m, "receiver_bytes_s") > 1e6, "{m}");
        assert!(value(m, "receiver_bytes") > 0.0, "{m}");
    }
}

#[test]
fn cyclictest_short_run() {
    if !have("cyclictest", "rt-tests") {
        return;
    }
    let ms = live("cyclictest -q -l 300 -i 1000 -t 1", "cyclictest", 2);
    for m in &ms {
        let (min, avg, max) = (
            value(m, "latency_min_us"),
            value(m, "latency_avg_us"),
            value(m, "latency_max_us"),
        );
        assert!(min <= avg && avg <= max, "{m}");
        assert_eq!(value(m, "cycles"), 300.0, "{m}");
    }
}

#[test]
fn hyperfine_json_export() {
    if !have("hyperfine", "hyperfine") {
        return;
    }
    let ms = live(
        "f=$(mktemp); hyperfine -N --runs 5 --style none --export-json $f true >/dev/null \
         && cat $f; r=$?; rm -f $f; exit $r",
        "hyperfine",
        2,
    );
    for m in &ms {
        let (min, median, max) = (
            value(m, "min_ms"),
            value(m, "median_ms"),
            value(m, "max_ms"),
        );
        assert!(min > 0.0 && min <= median && median <= max, "{m}");
    }
}
