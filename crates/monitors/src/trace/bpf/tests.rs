//! Reading the maps back into spans, and (as root, where the kernel allows BPF) loading
//! the wakeup set on this kernel.

use super::*;

#[test]
fn per_cpu_slots_sum_into_one_span() {
    let mut cpu0 = vec![0u64; SLOTS];
    let mut cpu1 = vec![0u64; SLOTS];
    let c = |s: Slot| hist::BUCKETS + s as usize;
    // 90 spans of ~1.5 µs on one CPU, 10 of ~40 µs on the other.
    cpu0[hist::index(1_500) as usize] = 90;
    cpu1[hist::index(40_000) as usize] = 10;
    cpu0[c(Slot::Count)] = 90;
    cpu1[c(Slot::Count)] = 10;
    cpu0[c(Slot::Sum)] = 90 * 1_500;
    cpu1[c(Slot::Sum)] = 10 * 40_000;
    cpu0[c(Slot::Max)] = 1_510;
    cpu1[c(Slot::Max)] = 40_100;
    cpu0[c(Slot::LostStarts)] = 2;
    cpu1[c(Slot::Unmatched)] = 5;
    cpu1[c(Slot::StartEvents)] = 103;
    cpu0[c(Slot::EndEvents)] = 105;
    let both: Vec<u64> = cpu0.into_iter().chain(cpu1).collect();
    let r = result("sched", "woken → running", &both);
    assert_eq!(r.count(), 100);
    let p50 = r.hist.value_at_quantile(0.5) as f64;
    assert!((p50 - 1_500.0).abs() < 15.0, "{p50}");
    let p99 = r.hist.value_at_quantile(0.99) as f64;
    assert!((p99 - 40_000.0).abs() < 400.0, "{p99}");
    assert_eq!(r.max_ns, 40_100);
    assert_eq!(r.sum_ns, 90 * 1_500 + 10 * 40_000);
    assert_eq!(r.unmatched, 5);
    assert_eq!(
        r.kernel,
        Some(KernelCounts {
            lost_starts: 2,
            starts: 103,
            ends: 105
        })
    );
    // An empty span is empty, with its counters.
    assert_eq!(result("x", "X", &vec![0; SLOTS * 4]).count(), 0);
}

#[test]
fn the_events_variable_keeps_the_listed_events_or_all_but_them() {
    let sel = |spec: Option<&str>, e: &str| event_selected(spec, "sched", e);
    assert!(sel(None, "sched_switch"));
    assert!(sel(Some(" "), "sched_switch"));
    let only = Some("sched:sched_switch, irq:softirq_raise");
    assert!(sel(only, "sched_switch"));
    assert!(!sel(only, "sched_waking"));
    // The system is part of the name: irq:sched_switch is not sched:sched_switch.
    assert!(!sel(Some("irq:sched_switch"), "sched_switch"));
    let all_but = Some("-sched:sched_switch");
    assert!(!sel(all_but, "sched_switch"));
    assert!(sel(all_but, "sched_waking"));
}

#[test]
fn kallsyms_lines() {
    let t = "ffffffff81001000 T generic_smp_call_function_single_interrupt\n\
             ffffffff81002000 t generic_smp_call_function_single_interrupt_x [mod]\n\
             ffffffff82000000 D some_data\n0000 T\nzz T y\n";
    let s = parse_kallsyms(t);
    assert_eq!(s.len(), 2);
    assert_eq!(
        s[0],
        (
            0xffff_ffff_8100_1000,
            "generic_smp_call_function_single_interrupt".into()
        )
    );
}

/// As root where the kernel allows BPF: the host, its tracefs, and its possible CPUs;
/// `None` after saying which prerequisite is missing (the test then passes as skipped).
fn bpf_host() -> Option<(SysRoot, crate::trace::tracefs::Tracefs, usize)> {
    if !perflab_testkit::have_root("loading BPF programs") {
        return None;
    }
    if let Err(e) = probe() {
        perflab_testkit::skip("bpf", e);
        return None;
    }
    let host = SysRoot::host();
    let Ok(fs) = crate::trace::tracefs::Tracefs::open(&host) else {
        perflab_testkit::skip("tracefs", "tracefs cannot be mounted");
        return None;
    };
    let cpus =
        sys::possible_cpus(&host.read_string("sys/devices/system/cpu/possible").unwrap()).unwrap();
    Some((host, fs, cpus))
}

/// Loads the wakeup set's programs on this kernel, switches between two threads, and
/// reads spans with nanosecond resolution back.
#[test]
fn the_wakeup_set_loads_and_measures_here_needs_root_and_bpf() {
    let Some((host, fs, cpus)) = bpf_host() else {
        return;
    };
    let set = crate::trace::spans::built_in("wakeup").unwrap();
    let spans: Vec<Span> = set
        .spans
        .into_iter()
        .filter(|s| s.events().iter().all(|(a, b)| fs.has_event(a, b)))
        .collect();
    let plans = plan_spans(&fs.fs, &host, &spans).unwrap();
    let attach = attachments(&fs.fs, &host, &plans);
    let loaded = Loaded::load(&plans, &attach, &spans, cpus).unwrap();
    // The open-start table, not the hash map the loader falls back to.
    assert!(loaded._opens.is_some(), "{}", loaded.histograms());
    loaded.set_enabled(true).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let (back, back_rx) = std::sync::mpsc::channel::<u32>();
    let t = std::thread::spawn(move || {
        while let Ok(x) = rx.recv() {
            let _ = back.send(x);
        }
    });
    for i in 0..2000 {
        tx.send(i).unwrap();
        back_rx.recv().unwrap();
    }
    drop(tx);
    t.join().unwrap();
    let r = loaded.finish().unwrap();
    let sched = &r[0];
    assert!(sched.count() > 100, "{} wake-ups", sched.count());
    let k = sched.kernel.unwrap();
    assert!(
        k.starts >= sched.count() && k.ends >= sched.count(),
        "{k:?}"
    );
    // Nanoseconds: durations that are not whole microseconds.
    let not_whole_us = sched
        .hist
        .iter_recorded()
        .any(|v| v.value_iterated_to() % 1000 != 0);
    assert!(not_whole_us, "every duration a whole µs: text resolution?");
}

/// Spans whose filters and keys read struct members (pids, comms, the wakee's CPU) and a
/// syscall exit, for comparing raw programs with classic ones on the same events.
const COMPARED: &str = r#"
name = "compare"
description = "raw against classic"

[[span]]
name = "woken"
label = "woken → running"
from = { events = ["sched:sched_waking"], key = "field:pid", where = { comm = "pl_cmp_echo" } }
to = { events = ["sched:sched_switch"], key = "field:next_pid", where = { next_comm = "pl_cmp_echo" } }

[[span]]
name = "off"
label = "switched out → woken"
from = { events = ["sched:sched_switch"], key = "field:prev_pid", where = { prev_comm = "pl_cmp*" } }
to = { events = ["sched:sched_waking"], key = "field:pid", where = { comm = "pl_cmp*" } }

[[span]]
name = "target"
label = "woken → target CPU switches to it"
from = { events = ["sched:sched_waking"], key = "field:target_cpu", where = { comm = "pl_cmp_echo" } }
to = { events = ["sched:sched_switch"], key = "cpu", where = { next_comm = "pl_cmp_echo" } }

[[span]]
name = "recv"
label = "running → receive returns"
from = { events = ["sched:sched_switch"], key = "field:next_pid", where = { next_comm = "pl_cmp_echo" } }
to = { events = ["syscalls:sys_exit_recvfrom"], key = "pid" }
"#;

/// Loads the same spans three times, as BTF raw tracepoint and fexit programs, as plain
/// raw tracepoints (members read by a helper) and as classic tracepoint programs, all at
/// once, and sends UDP ping-pongs to a thread named
/// `pl_cmp_echo`: all see the same events, so every span's filtered start and end counts
/// must be equal — a member read at a wrong offset filters or keys differently. No times
/// are compared (they are stamped at different moments).
#[test]
fn raw_programs_read_what_classic_ones_read_needs_root_and_bpf() {
    let Some((host, fs, cpus)) = bpf_host() else {
        return;
    };
    if let Err(e) = vmlinux_btf(&host) {
        perflab_testkit::skip("btf", e);
        return;
    }
    let spans = crate::trace::spans::parse_set(COMPARED, "test")
        .unwrap()
        .spans;
    let plans = plan_spans(&fs.fs, &host, &spans).unwrap();
    let raw = attachments(&fs.fs, &host, &plans);
    let how = describe(&plans, &raw);
    // Every tracepoint of the set is in the raw table, its members read through BTF
    // types; the syscall exit is fexit where the kernel's BTF has __sys_recvfrom (and
    // falls back to classic at load where the kernel refuses fexit, as the 6.18 guest of
    // the docs does).
    assert!(
        plans
            .iter()
            .zip(&raw)
            .all(|(p, a)| p.system == "syscalls" || matches!(a, raw::Attach::BtfRaw { .. })),
        "{how}"
    );
    // The same raw programs reading members with bpf_probe_read_kernel, and classic ones.
    let untyped: Vec<raw::Attach> = raw
        .iter()
        .map(|a| match a {
            raw::Attach::BtfRaw { .. } => a.fallback("compared").unwrap(),
            other => other.clone(),
        })
        .collect();
    let classic: Vec<raw::Attach> = plans
        .iter()
        .map(|_| raw::Attach::Classic("compared".into()))
        .collect();
    let a = Loaded::load(&plans, &raw, &spans, cpus).unwrap();
    let u = Loaded::load(&plans, &untyped, &spans, cpus).unwrap();
    let b = Loaded::load(&plans, &classic, &spans, cpus).unwrap();
    a.set_enabled(true).unwrap();
    u.set_enabled(true).unwrap();
    b.set_enabled(true).unwrap();
    let echo = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = echo.local_addr().unwrap();
    let t = std::thread::Builder::new()
        .name("pl_cmp_echo".into())
        .spawn(move || {
            let mut buf = [0u8; 8];
            while let Ok((n, from)) = echo.recv_from(&mut buf) {
                if buf[..n] == *b"stop" {
                    break;
                }
                let _ = echo.send_to(&buf[..n], from);
            }
        })
        .unwrap();
    let me = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0u8; 8];
    for _ in 0..2000 {
        me.send_to(b"ping", to).unwrap();
        me.recv_from(&mut buf).unwrap();
    }
    me.send_to(b"stop", to).unwrap();
    t.join().unwrap();
    eprintln!("attached as {}", describe(&plans, &a.used));
    let typed = |used: &[raw::Attach]| {
        used.iter()
            .filter(|a| matches!(a, raw::Attach::BtfRaw { .. }))
            .count()
    };
    assert_eq!(typed(&u.used), 0);
    // Where the kernel takes a trivial BTF raw tracepoint, the generated ones load too.
    let kernel_takes_them = raw
        .iter()
        .any(|a| matches!(try_attach(a.clone()), raw::Attach::BtfRaw { .. }));
    if kernel_takes_them {
        assert_eq!(typed(&a.used), typed(&raw), "{}", describe(&plans, &a.used));
    }
    let (ra, ru, rb) = (
        a.finish().unwrap(),
        u.finish().unwrap(),
        b.finish().unwrap(),
    );
    for (x, y) in ra.iter().zip(&rb).chain(ru.iter().zip(&rb)) {
        let (kx, ky) = (x.kernel.unwrap(), y.kernel.unwrap());
        assert!(ky.starts > 100 && ky.ends > 100, "{}: {ky:?}", y.name);
        assert_eq!(
            kx.starts, ky.starts,
            "span {}: raw {kx:?}, classic {ky:?}",
            x.name
        );
        // Every event but `recv`'s end is one of our named thread's. That end is every
        // task's recvfrom, and a classic program runs from its load until it is closed
        // (a disabled perf event does not stop it), so while the first set is read the
        // second counts other tests' receives: there, the spans both matched (starts of
        // our thread's, ended by its own receive) are what must agree.
        if x.name == "recv" {
            assert!(
                x.count().abs_diff(y.count()) <= 2,
                "span recv matched {} raw, {} classic",
                x.count(),
                y.count()
            );
        } else {
            assert_eq!(
                kx.ends, ky.ends,
                "span {}: raw {kx:?}, classic {ky:?}",
                x.name
            );
        }
        assert!(x.count() > 0 && y.count() > 0, "span {}", x.name);
    }
}

/// A pid-keyed span, a CPU-keyed one (kept in a CPU's own slots when per CPU, in the
/// start map when shared) and a split, for comparing shared histograms with per-CPU ones.
const SHARED: &str = r#"
name = "share"
description = "shared against per-CPU histograms"

[[span]]
name = "woken"
label = "woken → running"
from = { events = ["sched:sched_waking"], key = "field:pid", where = { comm = "pl_share_echo" } }
to = { events = ["sched:sched_switch"], key = "field:next_pid", where = { next_comm = "pl_share_echo" } }

[[span]]
name = "oncpu"
label = "switched in → switched out, by how the task before it left"
from = { events = ["sched:sched_switch"], key = "cpu", where = { next_comm = "pl_share_echo" } }
to = { events = ["sched:sched_switch"], key = "cpu", where = { prev_comm = "pl_share_echo" } }
split = { events = ["sched:sched_switch"], key = "cpu", field = "prev_state" }
"#;

/// The same set restricted to CPU 0, loaded twice at once: once with its histograms in
/// one shared map (atomic adds, compare-and-exchange for the longest, the CPU-keyed
/// span's starts in the open-start table), once per CPU with the open starts in the hash
/// map (as where the kernel refuses the table). Both programs see
/// the same events, so the filtered start and end counts must be equal and the matched
/// counts equal but for the few events that fall between the two programs' clock reads.
#[test]
fn shared_histograms_count_what_per_cpu_ones_count_needs_root_and_bpf() {
    let Some((host, fs, cpus)) = bpf_host() else {
        return;
    };
    let spans = crate::trace::spans::parse_set(SHARED, "test")
        .unwrap()
        .spans;
    let spans = crate::trace::spans::on_cpus(spans, &[0]);
    assert!(plan::shared_histograms(&spans));
    let plans = plan_spans(&fs.fs, &host, &spans).unwrap();
    let attach = attachments(&fs.fs, &host, &plans);
    let shared = Loaded::load(&plans, &attach, &spans, cpus).unwrap();
    assert!(shared.shared, "{}", shared.histograms());
    assert!(
        shared.histograms().contains("shared"),
        "{}",
        shared.histograms()
    );
    assert!(shared._opens.is_some());
    let per_cpu = Loaded::load_maps(&plans, &attach, &spans, cpus, false, false).unwrap();
    assert!(per_cpu._opens.is_none());
    assert!(per_cpu.histograms().contains("per CPU"));
    shared.set_enabled(true).unwrap();
    per_cpu.set_enabled(true).unwrap();
    let pin0 = || {
        // SAFETY: a zeroed cpu_set_t is empty; CPU_SET(0) stays inside it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    };
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let (back, back_rx) = std::sync::mpsc::channel::<u32>();
    let t = std::thread::Builder::new()
        .name("pl_share_echo".into())
        .spawn(move || {
            pin0();
            while let Ok(x) = rx.recv() {
                let _ = back.send(x);
            }
        })
        .unwrap();
    let main = std::thread::spawn(move || {
        pin0();
        for i in 0..2000 {
            tx.send(i).unwrap();
            back_rx.recv().unwrap();
        }
    });
    main.join().unwrap();
    t.join().unwrap();
    let (rs, rp) = (shared.finish().unwrap(), per_cpu.finish().unwrap());
    let names = |r: &[SpanResult]| r.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert!(rp.len() > 2, "no split of oncpu: {:?}", names(&rp));
    assert_eq!(names(&rs), names(&rp));
    for (s, p) in rs.iter().zip(&rp) {
        eprintln!(
            "{}: shared {} matched (max {} ns), per CPU {} (max {} ns)",
            s.name,
            s.count(),
            s.max_ns,
            p.count(),
            p.max_ns
        );
        // A split's rarer values (a task preempted rather than asleep) may be few.
        if !p.name.contains('@') {
            assert!(p.count() > 100, "span {}: {} matched", p.name, p.count());
        }
        assert!(
            s.count().abs_diff(p.count()) <= 2,
            "span {}: shared matched {}, per CPU {}",
            s.name,
            s.count(),
            p.count()
        );
        if let (Some(ks), Some(kp)) = (s.kernel, p.kernel) {
            assert_eq!(
                (ks.starts, ks.ends),
                (kp.starts, kp.ends),
                "span {}",
                s.name
            );
        }
        assert!(
            s.max_ns > 0 && s.sum_ns >= u128::from(s.max_ns),
            "span {}",
            s.name
        );
    }
}
