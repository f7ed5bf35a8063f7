//! The span matcher on captured trace_pipe text (tests/fixtures/trace), and on small
//! hand-made traces for missing, reordered and lost events.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;

use perflab_core::Unit;

use super::matcher::{Matcher, SpanResult, MAX_OPEN};
use super::parse::{for_each_line, parse_line};
use super::spans::{built_in, parse_set, Span};
use super::*;

fn fixture(name: &str) -> BufReader<File> {
    BufReader::new(File::open(perflab_testkit::fixture(&format!("trace/{name}"))).unwrap())
}

fn run(spans: Vec<Span>, text: impl std::io::BufRead) -> (Vec<SpanResult>, u64) {
    let mut m = Matcher::new(spans);
    for_each_line(text, |l| m.feed_line(l)).unwrap();
    let lost = m.lost;
    (m.results(), lost)
}

/// A built-in set's host spans as the kernel of the captured fixtures traces them: it
/// predates `sock:sock_recv_length`, so netrx's receive ends at the syscall exits.
fn host_spans(set: &str) -> Vec<Span> {
    let set = built_in(set).unwrap();
    let names: Vec<String> = set.spans.iter().map(|s| s.name.clone()).collect();
    let kept = set
        .spans
        .into_iter()
        .filter(|s| s.when.is_none())
        .map(|s| s.with_fallbacks(&|system, _| system != "sock"))
        .collect();
    renumber_after(kept, &names)
}

fn by_name<'a>(r: &'a [SpanResult], name: &str) -> &'a SpanResult {
    r.iter().find(|s| s.name == name).unwrap()
}

#[test]
fn netrx_on_the_loopback_fixture() {
    let (r, lost) = run(host_spans("netrx"), fixture("netrr-loopback.txt"));
    // One LOST line in the excerpt.
    assert_eq!(lost, 112);
    let names: Vec<&str> = r.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["irq", "raise", "wake", "sched", "syscall"]);
    // Loopback has no NIC interrupt raising NET_RX; everything else follows each packet.
    assert_eq!(by_name(&r, "irq").count(), 0);
    for s in ["raise", "wake", "sched", "syscall"] {
        let s = by_name(&r, s);
        assert!(s.count() > 50, "{}: {}", s.name, s.count());
        // Every stage of one packet on loopback is microseconds, not milliseconds.
        assert!(s.hist.value_at_quantile(0.5) < 100_000, "{}", s.name);
    }
    // Each responder wake-up is followed by the switch to it and its recvfrom return,
    // and (c)/(d) cannot count more than the stage they are chained after.
    assert!(by_name(&r, "sched").count() <= by_name(&r, "wake").count());
    assert!(by_name(&r, "syscall").count() <= by_name(&r, "sched").count());
    // Each rows' key and unit, in the declared order.
    let spans = host_spans("netrx");
    let rows = rows::rows("netrx", &spans, &r, &[]);
    assert_eq!(rows[0].key, "netrx.irq:count");
    assert_eq!(rows[0].value, 0.0);
    // irq is keyed by CPU: its row says how many matches per round trip are the study's
    // own (the set declares 2: both ends of an exchange receive a packet).
    assert_eq!(rows[1].key, "netrx.irq:per_round_trip");
    assert_eq!(rows[1].value, 2.0);
    assert_eq!(rows[2].key, "netrx.irq:unmatched");
    let keys: Vec<&str> = rows
        .iter()
        .skip(3)
        .take(8)
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "netrx.raise:count",
            "netrx.raise:per_round_trip",
            "netrx.raise:p50",
            "netrx.raise:p90",
            "netrx.raise:p99",
            "netrx.raise:mean",
            "netrx.raise:max",
            "netrx.raise:unmatched"
        ]
    );
    assert_eq!(rows[5].unit, Unit::Nanoseconds);
    assert_eq!(rows[10].unit, Unit::Count);
    assert_eq!(rows[3].label, "(a) NET_RX raised → softirq runs");
    // sched follows a task by pid, but starts only where wake (keyed by CPU) ended: it
    // counts what wake counted, and says so.
    assert!(rows.iter().any(|r| r.key == "netrx.sched:per_round_trip"));
    assert!(rows.iter().all(|r| r.source == "trace" && r.cpu.is_none()));
}

#[test]
fn wakeup_and_lock_on_the_ipi_fixture() {
    let (r, _) = run(host_spans("wakeup"), fixture("boot-ipi-lock.txt"));
    assert!(by_name(&r, "sched").count() > 5);
    assert!(
        by_name(&r, "ipi_call").count() > 50,
        "{}",
        by_name(&r, "ipi_call").count()
    );
    let (r, _) = run(host_spans("lock"), fixture("boot-ipi-lock.txt"));
    assert!(by_name(&r, "contention").count() >= 8);
    assert!(by_name(&r, "futex_wait").count() >= 1);
}

const SET: &str = r#"
name = "t"
[[span]]
name = "wake"
label = "woken → running"
from = { events = ["sched:sched_waking"], key = "field:pid" }
to = { events = ["sched:sched_switch"], key = "field:next_pid" }
[[span]]
name = "irq"
label = "irq → raise"
from = { events = ["irq:irq_handler_entry"], key = "cpu" }
to = { events = ["irq:softirq_raise"], key = "cpu", where = { vec = "3" } }
cancel = { events = ["irq:irq_handler_exit"], key = "cpu" }
"#;

fn waking(cpu: u32, t: &str, pid: u32) -> String {
    format!("a-1 [{cpu:03}] d..2. {t}: sched_waking: comm=x pid={pid} prio=120 target_cpu=001")
}

fn switch(cpu: u32, t: &str, next: u32) -> String {
    format!(
        "b-2 [{cpu:03}] d..2. {t}: sched_switch: prev_comm=b prev_pid=2 prev_prio=120 \
         prev_state=S ==> next_comm=x next_pid={next} next_prio=120"
    )
}

fn feed(lines: &[String]) -> Vec<SpanResult> {
    let set = parse_set(SET, "t").unwrap();
    let mut m = Matcher::new(set.spans);
    for l in lines {
        m.feed_line(parse_line(l));
    }
    m.results()
}

#[test]
fn missing_starts_are_unmatched_and_restarts_keep_the_newest() {
    let r = feed(&[
        switch(1, "1.000010", 7), // no start: unmatched
        waking(0, "1.000020", 7),
        waking(0, "1.000030", 7), // a newer start restarts
        switch(1, "1.000035", 7), // 5 µs from the newer one
        waking(0, "1.000040", 8), // never ends: not counted
        "garbage line".into(),
    ]);
    let w = &r[0];
    assert_eq!((w.count(), w.unmatched), (1, 1));
    assert_eq!(w.max_ns, 5_000);
    assert_eq!(w.mean_ns(), 5_000.0);
}

#[test]
fn reordered_ends_do_not_close_a_later_start() {
    let r = feed(&[
        waking(0, "2.000100", 7),
        switch(1, "2.000090", 7), // stamped before its start: a reordered, unrelated end
        switch(1, "2.000300", 7), // the real end
    ]);
    let w = &r[0];
    assert_eq!((w.count(), w.unmatched, w.max_ns), (1, 1, 200_000));
}

#[test]
fn cancel_filters_and_lost_events() {
    let irq = |t: &str| format!("c-3 [002] d.h.. {t}: irq_handler_entry: irq=36 name=eth0");
    let exit = |t: &str| format!("c-3 [002] d.h.. {t}: irq_handler_exit: irq=36 ret=handled");
    let raise = |t: &str, v: u32| format!("c-3 [002] d.h1. {t}: softirq_raise: vec={v} [action=X]");
    let r = feed(&[
        irq("3.000000"),
        raise("3.000001", 9), // filtered out: not NET_RX
        raise("3.000002", 3), // 2 µs
        exit("3.000003"),
        irq("3.000010"),
        exit("3.000011"), // cancels: the next raise has no start
        raise("3.000020", 3),
        irq("3.000030"),
        "CPU:2 [LOST 5 EVENTS]".into(), // drops the open start
        raise("3.000040", 3),
    ]);
    let i = &r[1];
    assert_eq!((i.count(), i.unmatched, i.max_ns), (1, 2, 2_000));
}

#[test]
fn open_starts_are_capped() {
    let set = parse_set(SET, "t").unwrap();
    let mut m = Matcher::new(set.spans);
    for pid in 0..(MAX_OPEN as u32 + 100) {
        m.feed_line(parse_line(&waking(0, &format!("4.{pid:06}"), pid + 10)));
    }
    assert_eq!(m.open_starts(0), MAX_OPEN);
    // The oldest went first; the newest still ends.
    m.feed_line(parse_line(&switch(1, "5.000000", 10)));
    m.feed_line(parse_line(&switch(1, "5.000000", MAX_OPEN as u32 + 109)));
    let r = m.results();
    assert_eq!((r[0].count(), r[0].unmatched, r[0].evicted), (1, 1, 100));
}

#[test]
fn after_follows_the_chain_and_survives_skipped_spans() {
    let set = built_in("netrx").unwrap();
    let names: Vec<String> = set.spans.iter().map(|s| s.name.clone()).collect();
    // Drop `wake`: `sched` (after wake) and `syscall` (after sched) cannot start.
    let kept: Vec<Span> = set
        .spans
        .iter()
        .filter(|s| s.when.is_none() && s.name != "wake")
        .cloned()
        .collect();
    let r = renumber_after(kept, &names);
    let left: Vec<&str> = r.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(left, ["irq", "raise"]);
    let all = renumber_after(set.spans.clone(), &names);
    assert_eq!(all.len(), set.spans.len());
    let facts = BTreeMap::from([("net.path".to_string(), "vm-tap".to_string())]);
    assert!(set
        .spans
        .iter()
        .all(|s| s.when.as_ref().is_none_or(|w| w.holds(&facts))));
}

#[test]
fn monitor_names() {
    assert!(parse_name("interrupts").is_none());
    assert!(matches!(parse_name("trace"), Some(Ok(Choice::Auto))));
    assert!(matches!(
        parse_name("trace:lock"),
        Some(Ok(Choice::BuiltIn(_)))
    ));
    let e = parse_name("trace:nope").unwrap().unwrap_err();
    assert!(e.contains("no built-in span set \"nope\""), "{e}");
    let e = parse_name("trace:/nonexistent/x.toml")
        .unwrap()
        .unwrap_err();
    assert!(e.starts_with("span file /nonexistent/x.toml: "), "{e}");
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("s.toml");
    std::fs::write(&p, SET.replace("field:pid", "tid")).unwrap();
    let e = parse_name(&format!("trace:{}", p.display()))
        .unwrap()
        .unwrap_err();
    assert!(e.contains("unknown key kind \"tid\""), "{e}");
    std::fs::write(&p, SET).unwrap();
    assert!(matches!(
        parse_name(&format!("trace:{}", p.display())),
        Some(Ok(Choice::User(_)))
    ));
}

#[test]
fn a_user_file_with_an_event_the_kernel_lacks_is_refused() {
    let t = tempfile::tempdir().unwrap();
    for e in [
        "sched/sched_waking",
        "sched/sched_switch",
        "irq/irq_handler_entry",
        "irq/irq_handler_exit",
    ] {
        let d = t.path().join("sys/kernel/tracing/events").join(e);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("enable"), "0").unwrap();
    }
    std::fs::create_dir_all(t.path().join("sys/kernel/tracing/instances")).unwrap();
    let sys = SysRoot::at(t.path());
    let p = t.path().join("s.toml");
    std::fs::write(&p, SET).unwrap();
    let e = check_name(&format!("trace:{}", p.display()), &sys).unwrap_err();
    assert!(
        e.contains("names event irq:softirq_raise, which this kernel does not have"),
        "{e}"
    );
    assert!(check_name("trace:netrx", &sys).is_ok());
    assert!(check_name("trace", &sys).is_ok());
    assert!(check_name("trace:nope", &sys).is_err());
}

#[test]
fn a_built_in_set_skips_what_the_kernel_lacks_with_a_note() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("sys/kernel/tracing");
    for e in ["sched/sched_waking", "sched/sched_switch"] {
        let d = root.join("events").join(e);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("enable"), "0").unwrap();
    }
    std::fs::create_dir_all(root.join("instances")).unwrap();
    let sys = SysRoot::at(t.path());
    let mut m = TraceMonitor::new(Choice::BuiltIn(built_in("wakeup").unwrap()));
    let fs = Tracefs::open(&sys).unwrap();
    let ctx = MeasureCtx::new(sys, Vec::new());
    let (set, spans) = m.spans_for(&ctx, &fs).unwrap();
    assert_eq!(set, "wakeup");
    assert_eq!(spans.len(), 1);
    let notes = m.notes();
    // Every span but `sched` needs an IPI or idle event: each skipped span is one note.
    assert_eq!(
        notes.len(),
        built_in("wakeup").unwrap().spans.len() - 1,
        "{notes:?}"
    );
    assert!(notes[0].contains("this kernel has no ipi:ipi_send_cpu, irq_vectors:reschedule_entry: span wakeup.ipi_resched is skipped"), "{notes:?}");
    // ctxsw under a variant that sets idle states (idle-ipi) gets idlewake, else wakeup.
    let mut auto = TraceMonitor::new(Choice::Auto);
    let mut idle = MeasureCtx::new(SysRoot::at(t.path()), Vec::new());
    idle.workload = "ctxsw";
    assert_eq!(auto.spans_for(&idle, &fs).unwrap().0, "wakeup");
    idle.facts
        .insert(spans::CPUIDLE_FACT.into(), "poll-only".into());
    let (set, spans) = auto.spans_for(&idle, &fs).unwrap();
    assert_eq!(
        (set.as_str(), spans[0].name.as_str()),
        ("idlewake", "sched")
    );
    // Without a set for the workload, the monitor is unavailable and says how to name one.
    let mut auto = TraceMonitor::new(Choice::Auto);
    match auto.spans_for(&ctx, &fs) {
        Err(MonitorError::Unavailable(u)) => assert!(u.reason.contains("no built-in span set")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_letters_a_to_d_are_seed_001s_four_spans_once_each() {
    // Seed 001: (a) interrupt arrival → handler, (b) handler → vhost woken, (c) vhost
    // processing → KVM woken, (d) KVM → guest. No other span may carry a letter.
    let set = crate::trace::spans::parse_set(
        crate::trace::spans::BUILT_IN
            .iter()
            .find(|(n, _)| *n == "netrx")
            .unwrap()
            .1,
        "netrx",
    )
    .unwrap();
    let lettered: Vec<(&str, &str)> = set
        .spans
        .iter()
        .filter_map(|s| {
            let letter = s.label.strip_prefix('(')?.split_once(')')?.0;
            Some((letter, s.name.as_str()))
        })
        .collect();
    assert_eq!(
        lettered,
        [
            ("a", "raise"),
            ("b", "vhost_wake"),
            ("c", "vhost_irq"),
            ("d", "guest_entry")
        ]
    );
}

/// Seed 004's wake-up on CPU 1 from CPU 0, once out of idle state 1 (an IPI wakes it) and
/// once out of state 0, polling (no IPI: the target sees the flag), as the kernel prints
/// power:cpu_idle, ipi:ipi_send_cpu, sched_waking and sched_switch.
pub(crate) fn idle_wakeups() -> Vec<String> {
    let idle = |t: &str, state: &str| {
        format!("<idle>-0 [001] d..1. {t}: cpu_idle: state={state} cpu_id=1")
    };
    let waking = |t: &str| {
        format!("a-100 [000] d..2. {t}: sched_waking: comm=b pid=200 prio=120 target_cpu=001")
    };
    let to_b = |t: &str| {
        format!(
            "<idle>-0 [001] d..2. {t}: sched_switch: prev_comm=swapper/1 prev_pid=0 \
             prev_prio=120 prev_state=R ==> next_comm=b next_pid=200 next_prio=120"
        )
    };
    vec![
        idle("10.000000", "1"),
        waking("10.000100"),
        "a-100 [000] d..2. 10.000102: ipi_send_cpu: cpu=1 \
         callsite=ttwu_queue_wakelist+0x12d/0x170 callback=0x0"
            .into(),
        idle("10.000110", "4294967295"),
        to_b("10.000113"),
        idle("10.001000", "0"),
        waking("10.001100"),
        idle("10.001101", "4294967295"),
        to_b("10.001103"),
    ]
}

fn feed_set(set: &str, lines: &[String]) -> Vec<SpanResult> {
    let mut m = Matcher::new(built_in(set).unwrap().spans);
    for l in lines {
        m.feed_line(parse_line(l));
    }
    m.results()
}

fn count_and_max(r: &[SpanResult], name: &str) -> (u64, u64) {
    let s = by_name(r, name);
    (s.count(), s.max_ns)
}

#[test]
fn idlewake_splits_the_idle_exit_by_the_state_left() {
    let r = feed_set("idlewake", &idle_wakeups());
    let names: Vec<&str> = r.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sched",
            "waking_ipi",
            "ipi_idle_exit",
            "ipi_idle_exit@1",
            "idle_exit_run",
            "idle_exit_run@0",
            "idle_exit_run@1",
            "residency",
            "residency@0",
            "residency@1",
        ]
    );
    assert_eq!(by_name(&r, "sched").count(), 2);
    // The polling wake-up sends no IPI: its (1) is cancelled by the target's switch.
    assert_eq!(count_and_max(&r, "waking_ipi"), (1, 2_000));
    assert_eq!(count_and_max(&r, "ipi_idle_exit"), (1, 8_000));
    assert_eq!(count_and_max(&r, "ipi_idle_exit@1"), (1, 8_000));
    assert_eq!(count_and_max(&r, "idle_exit_run@1"), (1, 3_000));
    assert_eq!(count_and_max(&r, "idle_exit_run@0"), (1, 2_000));
    assert_eq!(count_and_max(&r, "idle_exit_run"), (2, 3_000));
    assert_eq!(count_and_max(&r, "residency@1"), (1, 110_000));
    assert_eq!(count_and_max(&r, "residency@0"), (1, 101_000));
    // Split results carry the span's label; the monitor names the states.
    assert_eq!(
        by_name(&r, "residency@0").label,
        by_name(&r, "residency").label
    );
}

#[test]
fn idlewake_on_the_workloads_cpus_only() {
    let spans = built_in("idlewake").unwrap().spans;
    let mut m = Matcher::new(crate::trace::spans::on_cpus(spans.clone(), &[0, 1]));
    let mut elsewhere = Matcher::new(crate::trace::spans::on_cpus(spans, &[2, 3]));
    for l in idle_wakeups() {
        m.feed_line(parse_line(&l));
        elsewhere.feed_line(parse_line(&l));
    }
    let (pair, other) = (m.results(), elsewhere.results());
    // On the pair's CPUs, as unrestricted; on two others, nothing.
    assert_eq!(pair.len(), feed_set("idlewake", &idle_wakeups()).len());
    assert_eq!(count_and_max(&pair, "ipi_idle_exit@1"), (1, 8_000));
    assert!(other.iter().all(|s| s.count() == 0));
}

#[test]
fn a_split_without_a_value_at_the_key_counts_in_the_whole_only() {
    let mut lines = idle_wakeups();
    // Lost events forget the state entered; the exit after them is not tagged.
    lines.insert(1, "CPU:1 [LOST 3 EVENTS]".into());
    let r = feed_set("idlewake", &lines);
    assert!(r.iter().all(|s| s.name != "ipi_idle_exit@1"));
    assert_eq!(by_name(&r, "ipi_idle_exit").count(), 1);
    assert_eq!(by_name(&r, "idle_exit_run").count(), 2);
    assert_eq!(by_name(&r, "idle_exit_run@0").count(), 1);
    // A state beyond CPUIDLE_STATE_MAX is no value (the kernel backend keeps 0-9).
    let set = r#"
name = "t"
[[span]]
name = "s"
label = "S"
from = { events = ["power:cpu_idle"], key = "cpu", where = { state = "4294967295" } }
to = { events = ["sched:sched_switch"], key = "cpu" }
split = { events = ["power:cpu_idle"], key = "cpu", field = "state" }
"#;
    let mut m = Matcher::new(parse_set(set, "t").unwrap().spans);
    for l in idle_wakeups() {
        m.feed_line(parse_line(&l));
    }
    let r = m.results();
    // Each exit (4294967295) is itself the last value before the switch: untagged.
    let names: Vec<&str> = r.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["s"]);
    assert_eq!(r[0].count(), 2);
}

/// Loads idlewake's programs on this kernel (the verifier accepts the split code), wakes a
/// thread pinned to CPU 1 from CPU 0 after it has gone idle, and reads per-state spans.
#[test]
fn idlewake_splits_by_idle_state_in_the_kernel_needs_root_bpf_and_idle_states() {
    if !perflab_testkit::have_root("loading BPF programs") {
        return;
    }
    if let Err(e) = bpf::probe() {
        perflab_testkit::skip("bpf", e);
        return;
    }
    let host = SysRoot::host();
    if split::cpuidle_names(&host).is_empty() {
        perflab_testkit::skip("idle states", "this machine has no cpuidle states");
        return;
    }
    let Ok(fs) = Tracefs::open(&host) else {
        perflab_testkit::skip("tracefs", "tracefs cannot be mounted");
        return;
    };
    let cpus =
        bpf::sys::possible_cpus(&host.read_string("sys/devices/system/cpu/possible").unwrap())
            .unwrap();
    if cpus < 2 {
        perflab_testkit::skip("2 CPUs", "a cross-CPU wake-up needs two CPUs");
        return;
    }
    let spans: Vec<Span> = built_in("idlewake")
        .unwrap()
        .spans
        .into_iter()
        .filter(|s| s.events().iter().all(|(a, b)| fs.has_event(a, b)))
        .collect();
    let plans = bpf::plan_spans(&fs.fs, &host, &spans).unwrap();
    let attach = bpf::attachments(&fs.fs, &host, &plans);
    let loaded = bpf::Loaded::load(&plans, &attach, &spans, cpus).unwrap();
    loaded.set_enabled(true).unwrap();
    let entered = idle_entries(&host);
    let pin = |cpu: usize| {
        // SAFETY: a zeroed cpu_set_t is empty; CPU_SET stays inside it (cpu < 2).
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    };
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let t = std::thread::spawn(move || {
        pin(1);
        while rx.recv().is_ok() {}
    });
    pin(0);
    for i in 0..200u32 {
        // Long enough for CPU 1 to go idle, in a deeper state now and then.
        std::thread::sleep(std::time::Duration::from_micros(
            200 + 20 * u64::from(i % 10),
        ));
        tx.send(i).unwrap();
    }
    drop(tx);
    t.join().unwrap();
    // cpuidle counts a stay when it ends: one that began before the programs were
    // enabled (one per CPU) is counted but has no traced entry.
    let stays = idle_entries(&host) - entered;
    let mut r = loaded.finish().unwrap();
    if stays <= 2 {
        // Loaded and run through the verifier all the same; there was nothing to split.
        perflab_testkit::skip(
            "idle CPUs",
            format!(
                "CPUs 0 and 1 left an idle state {stays} times meanwhile (the machine is busy)"
            ),
        );
        return;
    }
    split::name_values(&spans, &mut r, &split::cpuidle_names(&host));
    let per_state: Vec<(&str, u64)> = r
        .iter()
        .filter(|s| s.name.contains('@'))
        .map(|s| (s.name.as_str(), s.count()))
        .collect();
    eprintln!("per idle state: {per_state:?}");
    // Every residency starts at an idle entry, which is also its split value: the states'
    // residencies are all of it. (2) and (3) depend on what woke the CPU (a timer, another
    // job's task on a busy machine): their states are checked against the whole only.
    let residency: u64 = r
        .iter()
        .filter(|s| s.name.starts_with("residency@"))
        .map(|s| s.count())
        .sum();
    assert!(residency > 0, "{per_state:?}");
    assert_eq!(residency, by_name(&r, "residency").count(), "{per_state:?}");
    for base in ["ipi_idle_exit", "idle_exit_run"] {
        let states: u64 = r
            .iter()
            .filter(|s| s.name.starts_with(&format!("{base}@")))
            .map(|s| s.count())
            .sum();
        assert!(states <= by_name(&r, base).count(), "{base}: {per_state:?}");
    }
}

/// Idle state entries of CPUs 0 and 1 so far (cpuidle's usage counters).
fn idle_entries(sys: &SysRoot) -> u64 {
    (0..2)
        .flat_map(|cpu| (0..10).map(move |st| (cpu, st)))
        .filter_map(|(cpu, st)| {
            sys.read_parsed::<u64>(&format!(
                "sys/devices/system/cpu/cpu{cpu}/cpuidle/state{st}/usage"
            ))
            .ok()
        })
        .sum()
}

/// netrx's every span on a KVM + vhost-net host (tests/fixtures/trace/kvm-vhost-rx.txt,
/// built from the kernel's event formats by make_kvm_vhost.py): six packets, the fourth
/// finding the vhost worker running, the fifth with other vCPUs (one of another VM)
/// entering their guests while vCPU 0 is woken, the sixth finding vCPU 0 in its guest;
/// noise on other CPUs.
#[test]
fn netrx_on_a_kvm_vhost_host_measures_a_to_d() {
    let set = built_in("netrx").unwrap();
    let facts = BTreeMap::from([("net.path".to_string(), "vm-tap".to_string())]);
    assert!(set
        .spans
        .iter()
        .all(|s| s.when.as_ref().is_none_or(|w| w.holds(&facts))));
    let (r, lost) = run(set.spans, fixture("kvm-vhost-rx.txt"));
    assert_eq!(lost, 0);
    let got = |name: &str| {
        let s = by_name(&r, name);
        (s.count(), s.max_ns, s.unmatched)
    };
    // (a) NET_RX raised → softirq runs: every packet, 3 µs; the TIMER/RCU/SCHED softirqs
    // of other CPUs are filtered out.
    assert_eq!(got("raise"), (6, 3_000, 0));
    // The NIC's interrupt → NET_RX raised, the NVMe interrupt on CPU 0 cancelled by its exit.
    assert_eq!(got("irq"), (6, 1_000, 0));
    // (b) NET_RX → vhost worker woken: the five packets that found it asleep, 5 µs; the
    // fourth is cancelled by the softirq's exit (a running worker is not woken).
    assert_eq!(got("vhost_wake").0, 5);
    assert_eq!(got("vhost_wake").1, 5_000);
    // (Every other switch is an end without a start, as everywhere.)
    assert_eq!(got("vhost_run").0, 5);
    assert_eq!(got("vhost_run").1, 6_000);
    // (c) vhost running → guest interrupt injected, through MSI (packets 1, 3, 5, 6) and
    // INTx (packet 2); packet 4's injection follows no traced wake-up: unmatched.
    assert_eq!(got("vhost_irq"), (5, 6_000, 1));
    // Injected → vCPU 0 woken by the injecting worker, 1 µs, where vCPU 0 was halted;
    // packet 6's wait (vCPU 0 running its guest) is cancelled when the worker sleeps, so
    // the worker's later wake-up of QEMU's main thread does not end it.
    assert_eq!(got("vcpu_wake").0, 4);
    assert_eq!(got("vcpu_wake").1, 1_000);
    // (d) KVM wakes vCPU 0 → it enters its guest, 8 µs every time: keyed by the woken
    // thread, so packet 5's entries of vCPU 1 and of another VM's vCPU 0 (1 and 2 µs after
    // the wake-up) do not end it; they and the other entries outside a window are
    // unmatched.
    assert_eq!(got("guest_entry"), (4, 8_000, 5));
    assert_eq!(
        by_name(&r, "guest_entry").hist.value_at_quantile(0.0),
        8_000
    );
    for name in [
        "raise",
        "vhost_wake",
        "vhost_irq",
        "vcpu_wake",
        "guest_entry",
    ] {
        let s = by_name(&r, name);
        assert_eq!(
            s.hist.value_at_quantile(0.0),
            s.max_ns,
            "{name}: one duration each"
        );
    }
    // On the host the receiver is the vhost worker: the host-path spans see it woken and
    // run, and no receive syscall (the guest's receiver is out of the host's sight).
    assert_eq!(got("wake").0, 5);
    assert_eq!(got("syscall").0, 0);
}
