//! The counters monitor against known work on the live machine. Software events are
//! checked everywhere; tests that need a PMU, no PMU, or root say so in their name and
//! print why they skip.

use std::time::{Duration, Instant};

use perflab_core::{thread_cpu_ns, MeasureCtx, Monitor, MonitorError, TelemetryRow, Unit};
use perflab_monitors::counters::per_byte;
use perflab_monitors::CountersMonitor;
use perflab_sys::SysRoot;

const HARDWARE: &[&str] = &[
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "L1-dcache-loads",
    "L1-dcache-load-misses",
    "LLC-loads",
    "LLC-load-misses",
];

fn ctx(cpus: Vec<u32>) -> MeasureCtx {
    MeasureCtx::new(SysRoot::host(), cpus)
}

/// Runs `work` between start and finish; `None` (the skip reported) when perf events do
/// not open.
fn measure(
    mut m: CountersMonitor,
    ctx: &MeasureCtx,
    work: impl FnOnce(),
) -> Option<(CountersMonitor, Vec<TelemetryRow>)> {
    match m.start(ctx) {
        Ok(()) => {}
        Err(MonitorError::Unavailable(u)) => {
            perflab_testkit::skip("perf-events", format!("{} ({:?})", u.reason, u.hint));
            return None;
        }
        Err(e) => panic!("start: {e}"),
    }
    work();
    let rows = m.finish(ctx).expect("finish");
    Some((m, rows))
}

fn value(rows: &[TelemetryRow], key: &str, cpu: Option<u32>) -> Option<f64> {
    rows.iter()
        .find(|r| r.key == key && r.cpu == cpu)
        .map(|r| r.value)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn pin_to(cpu: u32) {
    // SAFETY: the set is a zeroed local filled by CPU_SET; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
            0,
            "pin to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        );
    }
}

fn pipe() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: fds is a two-int array the call fills.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned by nothing else.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    }
}

/// Two threads pinned to one CPU pass a byte back and forth through pipes: each can run
/// only while the other is blocked in read, so every round trip is at least two context
/// switches, all of them by threads created after start (counted through inherit).
#[test]
fn ping_pong_counts_at_least_two_context_switches_per_round_trip() {
    use std::io::{Read, Write};
    const N: usize = 2000;
    let cpu = perflab_core::current_cpu().unwrap_or(0);
    let c = ctx(vec![]);
    let (t1, t2) = (c.threads.clone(), c.threads.clone());
    let Some((_, rows)) = measure(CountersMonitor::per_process(), &c, || {
        let (mut ping_r, mut ping_w) = pipe();
        let (mut pong_r, mut pong_w) = pipe();
        let pong = std::thread::spawn(move || {
            pin_to(cpu);
            let probe = t1.begin("pong", Some(cpu));
            let mut b = [0u8];
            for _ in 0..N {
                ping_r.read_exact(&mut b).unwrap();
                pong_w.write_all(&b).unwrap();
            }
            probe.finish(&t1, None);
        });
        let ping = std::thread::spawn(move || {
            pin_to(cpu);
            let probe = t2.begin("ping", Some(cpu));
            let mut b = [7u8];
            for _ in 0..N {
                ping_w.write_all(&b).unwrap();
                pong_r.read_exact(&mut b).unwrap();
            }
            probe.finish(&t2, None);
        });
        ping.join().unwrap();
        pong.join().unwrap();
    }) else {
        return;
    };
    let cs = value(&rows, "context-switches", None).expect("context-switches row");
    println!("{N} round trips on CPU {cpu}: {cs} context switches");
    assert!(cs >= (2 * N) as f64, "{cs} < {}", 2 * N);
    // Per thread: each side blocks once per round trip, and the two add up to no more
    // than the process total.
    let per_thread: Vec<f64> = c
        .threads
        .take()
        .iter()
        .map(|r| {
            let count = r.counters.iter().find(|k| k.event == "context-switches");
            count.and_then(|k| k.value).expect("a per-thread count")
        })
        .collect();
    assert_eq!(per_thread.len(), 2);
    for t in &per_thread {
        assert!(*t >= N as f64, "{per_thread:?}");
    }
    assert!(
        per_thread.iter().sum::<f64>() <= cs,
        "{per_thread:?} > {cs}"
    );
    assert!(value(&rows, "cpu-migrations", None).is_some());
    let tc = rows.iter().find(|r| r.key == "task-clock").unwrap();
    assert_eq!(tc.unit, Unit::Milliseconds);
    assert!(rows
        .iter()
        .all(|r| r.source == "counters" && r.cpu.is_none()));
}

fn touch_fresh_mapping(bytes: usize, touch: bool) {
    // SAFETY: a fresh private anonymous mapping; we write only inside it and unmap it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        if touch {
            let base = p.cast::<u8>();
            for off in (0..bytes).step_by(4096) {
                std::ptr::write_volatile(base.add(off), 1);
            }
        }
        libc::munmap(p, bytes);
    }
}

#[test]
fn page_faults_grow_when_touching_a_fresh_64mib_mapping() {
    const BYTES: usize = 64 << 20;
    let c = ctx(vec![]);
    let Some((_, idle)) = measure(CountersMonitor::per_process(), &c, || {
        touch_fresh_mapping(BYTES, false)
    }) else {
        return;
    };
    let (_, touched) = measure(CountersMonitor::per_process(), &c, || {
        touch_fresh_mapping(BYTES, true)
    })
    .unwrap();
    let idle = value(&idle, "page-faults", None).unwrap();
    let touched = value(&touched, "page-faults", None).unwrap();
    // Anonymous memory faults once per page: 16384 4 KiB pages, or 32 2 MiB ones where
    // THP is `always`.
    let thp_always = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| s.contains("[always]"))
        .unwrap_or(false);
    let expect = if thp_always { 32.0 } else { 16384.0 };
    println!("page-faults: {idle} untouched, {touched} touched (expect +{expect})");
    assert!(touched - idle >= expect, "{touched} - {idle} < {expect}");
}

/// task-clock is the CPU time of the counted tasks: a busy loop's own CPU clock, and
/// never more than the wall time around it (one thread).
#[test]
fn task_clock_matches_a_busy_loop() {
    let c = ctx(vec![]);
    let t0 = Instant::now();
    let mut spun_ns = 0;
    let Some((_, rows)) = measure(CountersMonitor::per_process(), &c, || {
        let cpu0 = thread_cpu_ns();
        while thread_cpu_ns() - cpu0 < 200_000_000 {
            std::hint::black_box(0u64);
        }
        spun_ns = thread_cpu_ns() - cpu0;
    }) else {
        return;
    };
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    let spun_ms = spun_ns as f64 / 1e6;
    let tc = value(&rows, "task-clock", None).unwrap();
    println!("task-clock {tc:.1} ms, thread CPU time {spun_ms:.1} ms, wall {wall_ms:.1} ms");
    assert!(tc >= spun_ms * 0.98, "{tc} < {spun_ms}");
    assert!(tc <= spun_ms * 1.1 + 5.0, "{tc} >> {spun_ms}");
    assert!(tc <= wall_ms * 1.01 + 1.0, "{tc} > wall {wall_ms}");
}

/// A process the workload starts and `exec`s is counted through inherit: its CPU time
/// shows in task-clock although the measuring thread only waits for it.
#[test]
fn exec_children_are_counted() {
    let c = ctx(vec![]);
    let rusage_children_ms = || {
        // SAFETY: getrusage fills the struct we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
        let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
        ms(ru.ru_utime) + ms(ru.ru_stime)
    };
    let mut child_ms = 0.0;
    let Some((_, rows)) = measure(CountersMonitor::per_process(), &c, || {
        let before = rusage_children_ms();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .expect("run sh");
        assert!(status.success());
        child_ms = rusage_children_ms() - before;
    }) else {
        return;
    };
    let tc = value(&rows, "task-clock", None).unwrap();
    println!("task-clock {tc:.1} ms; the sh child used {child_ms:.1} ms (rusage)");
    // RUSAGE_CHILDREN covers every child of this test process that was reaped in the
    // window; this is the only test here that starts processes, so it is the sh's.
    assert!(
        child_ms > 20.0,
        "the child did too little work to tell: {child_ms} ms"
    );
    assert!(
        tc >= 0.9 * child_ms,
        "task-clock {tc} ms misses the exec'd child ({child_ms} ms)"
    );
}

#[test]
fn user_only_mode_drops_kernel_only_events() {
    let c = ctx(vec![]);
    let Some((m, rows)) = measure(CountersMonitor::per_process().user_only(), &c, || {
        std::thread::sleep(Duration::from_millis(5))
    }) else {
        return;
    };
    let unsupported: Vec<&str> = m.unsupported().iter().map(|(e, _)| e.as_str()).collect();
    assert!(unsupported.contains(&"context-switches"), "{unsupported:?}");
    assert!(unsupported.contains(&"cpu-migrations"), "{unsupported:?}");
    assert!(value(&rows, "context-switches", None).is_none());
    assert!(value(&rows, "page-faults", None).is_some());
    assert!(m.user_only_reason().is_some());
    assert!(rows
        .iter()
        .all(|r| r.key.contains(':') || r.label.contains("user space only")));
}

#[test]
fn finish_needs_a_start_and_restarts_are_fresh() {
    let c = ctx(vec![]);
    let mut m = CountersMonitor::per_process();
    assert!(matches!(m.finish(&c), Err(MonitorError::Failed(_))));
    if let Err(e) = m.start(&c) {
        perflab_testkit::skip("perf-events", format!("perf events do not open here: {e}"));
        return;
    }
    std::thread::sleep(Duration::from_millis(50));
    m.start(&c).unwrap();
    let rows = m.finish(&c).unwrap();
    let tc = value(&rows, "task-clock", None).unwrap();
    assert!(tc < 25.0, "the second start must reset: task-clock {tc} ms");
    assert!(
        m.finish(&c).is_err(),
        "a second finish has nothing to report"
    );
}

#[test]
fn hardware_events_have_no_rows_needs_machine_without_pmu() {
    let c = ctx(vec![]);
    let Some((m, rows)) = measure(CountersMonitor::per_process(), &c, || {}) else {
        return;
    };
    if !m.unsupported().iter().any(|(e, _)| e == "instructions") {
        perflab_testkit::skip(
            "no-pmu",
            "`instructions` opens here (this machine has a PMU)",
        );
        return;
    }
    for ev in HARDWARE {
        let listed = m.unsupported().iter().find(|(e, _)| e == ev);
        assert!(listed.is_some(), "{ev} not listed: {:?}", m.unsupported());
        assert!(
            rows.iter().all(|r| !r.key.starts_with(ev)),
            "{ev} has a row"
        );
    }
    // Said once, on one line naming them all, since one reason covers the eight.
    let notes = m.notes();
    let line = notes
        .iter()
        .find(|n| n.contains("instructions"))
        .expect("a note");
    for ev in HARDWARE {
        assert!(line.contains(ev), "{line}");
    }
    assert_eq!(notes.iter().filter(|n| n.contains("cycles")).count(), 1);
    for derived in [
        "ipc",
        "cache_miss_rate",
        "L1-dcache-miss_rate",
        "LLC-miss_rate",
    ] {
        assert!(value(&rows, derived, None).is_none());
    }
    println!("unsupported here: {:?}", m.unsupported());
    // Reported once: a second measurement neither retries nor repeats them.
    let n = m.unsupported().len();
    let (m, _) = measure(m, &c, || {}).unwrap();
    assert_eq!(m.unsupported().len(), n);
}

#[test]
fn hardware_counts_and_ipc_need_pmu() {
    let c = ctx(vec![]);
    let mut sum = 0u64;
    let Some((m, rows)) = measure(CountersMonitor::per_process(), &c, || {
        let v: Vec<u64> = (0..4_000_000).collect();
        sum = std::hint::black_box(v.iter().sum());
    }) else {
        return;
    };
    if let Some((_, why)) = m.unsupported().iter().find(|(e, _)| e == "instructions") {
        perflab_testkit::skip("pmu", format!("`instructions` does not open here: {why}"));
        return;
    }
    assert!(sum > 0);
    let cycles = value(&rows, "cycles", None).expect("cycles");
    let instructions = value(&rows, "instructions", None).expect("instructions");
    assert!(
        cycles > 1e6 && instructions > 4e6,
        "{cycles} {instructions}"
    );
    let ipc = value(&rows, "ipc", None).expect("ipc");
    assert!(ipc > 0.05 && ipc < 10.0, "ipc {ipc}");
    println!("cycles {cycles}, instructions {instructions}, ipc {ipc:.2}");
    for r in rows.iter().filter(|r| r.key.ends_with(":running_pct")) {
        println!("{} {:.1}%", r.key, r.value);
    }
    let moved = (4_000_000 * 8) as f64;
    println!("per byte: {:?}", per_byte(&rows, moved));
}

#[test]
fn per_cpu_counts_on_cpu0_need_root() {
    let c = ctx(vec![0]);
    let t0 = Instant::now();
    let mut work_ms = 0.0;
    let res = measure(CountersMonitor::per_cpu(), &c, || {
        let w = Instant::now();
        std::thread::spawn(|| {
            pin_to(0);
            for _ in 0..200 {
                std::thread::sleep(Duration::from_micros(100));
            }
        })
        .join()
        .unwrap();
        work_ms = w.elapsed().as_secs_f64() * 1e3;
    });
    let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
    let Some((m, rows)) = res else {
        assert!(!is_root(), "root must be able to count CPU 0");
        perflab_testkit::skip(
            "root",
            "counting a whole CPU needs root or perf_event_paranoid <= 0",
        );
        return;
    };
    assert!(rows.iter().all(|r| r.source == "counters-cpu"));
    assert!(rows.iter().all(|r| r.cpu.is_none() || r.cpu == Some(0)));
    let cs = value(&rows, "context-switches", Some(0)).expect("context-switches on CPU 0");
    assert_eq!(value(&rows, "context-switches", None), Some(cs));
    assert!(cs >= 200.0, "200 sleeps on CPU 0 but {cs} switches");
    let clock = value(&rows, "cpu-clock", Some(0)).expect("cpu-clock on CPU 0");
    println!("CPU 0: {cs} switches, cpu-clock {clock:.1} ms of {wall_ms:.1} ms wall");
    // A CPU's clock runs for the whole window it is counted in: at least the work inside
    // the window, at most the wall time around start and finish. (How much of the wall
    // time start and finish take is the machine's load, so it is not asserted.)
    assert!(
        clock >= work_ms * 0.99 - 1.0 && clock <= wall_ms * 1.01 + 1.0,
        "cpu-clock {clock} ms, work {work_ms} ms, wall {wall_ms} ms"
    );
    assert!(value(&rows, "task-clock", None).is_none());
    println!("unsupported: {:?}", m.unsupported());
}
