//! ctxsw on the real machine: short runs on CPU pairs (0,0) and (0,1) for every mechanism,
//! with threads and with processes. (0,1) needs a second online CPU and is skipped, saying
//! so, where there is none.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use perflab_core::{resolve, MeasureCtx, Params, SysRoot, Workload, WorkloadError, WorkloadOutput};
use perflab_workloads::{by_name, Ctxsw};

fn params(pairs: &[(&str, &str)]) -> Params {
    let given: BTreeMap<String, String> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    resolve("ctxsw", Ctxsw.info().params, &given).expect("valid ctxsw params")
}

fn cpu1_online() -> bool {
    let online = perflab_sys::Topology::read(&SysRoot::host())
        .map(|t| t.is_online(1))
        .unwrap_or(false);
    if !online {
        perflab_testkit::skip("2-cpus", "pair (0,1) left out: CPU 1 is not online");
    }
    online
}

fn run(p: &Params) -> (Result<WorkloadOutput, WorkloadError>, MeasureCtx) {
    let w = by_name("ctxsw").expect("ctxsw registered");
    let ctx = MeasureCtx::new(SysRoot::host(), w.cpus(p).unwrap());
    (w.run(p, &ctx), ctx)
}

fn check_pair(a: u32, b: u32, mech: &str, process: bool) {
    let (a_s, b_s) = (a.to_string(), b.to_string());
    let proc_s = process.to_string();
    let p = params(&[
        ("cpu_a", &a_s),
        ("cpu_b", &b_s),
        ("mechanism", mech),
        ("process", &proc_s),
        ("duration", "0.2s"),
        ("warmup", "50ms"),
    ]);
    let what = format!("{mech} process={process} on ({a},{b})");
    let (res, ctx) = run(&p);
    let out = res.unwrap_or_else(|e| panic!("{what}: {e}"));
    let rate = out.metric("round_trips_per_s").expect("rate").value;
    let switches = out.metric("switches_per_s").expect("switches").value;
    let count = out.metric("round_trips").expect("count").value;
    assert!(
        rate > 0.0 && count > 0.0,
        "{what}: rate {rate} count {count}"
    );
    assert_eq!(switches, 2.0 * rate, "{what}");
    // The window is 0.2 s, ended by the first round trip past it: the count and the rate
    // must agree with that (a loaded machine may stretch the last round trip, hence the
    // generous top).
    let window = count / rate;
    assert!((0.2..10.0).contains(&window), "{what}: window {window}");

    let h = out
        .histograms
        .iter()
        .find(|h| h.name == "rtt")
        .expect("rtt");
    assert_eq!(h.count as f64, count, "{what}: every round trip timed");
    // Chained timestamps: the round trips tile the window, less the CPU samples taken
    // between them (kept out of both neighbours). So the inverse of the mean round trip is
    // at least the rate (1% for the histogram's rounding); how much above is the samples'
    // share of the window, which a loaded machine inflates when it preempts one.
    let mean_rate = 1e9 / h.mean;
    assert!(
        mean_rate >= rate * 0.99 && mean_rate < rate * 10.0,
        "{what}: {mean_rate} vs {rate}"
    );

    let recs = ctx.threads.take();
    for (role, cpu) in [("ping", a), ("pong", b)] {
        let r = recs
            .iter()
            .find(|r| r.role == role)
            .unwrap_or_else(|| panic!("{what}: no {role} record in {recs:?}"));
        assert_eq!(r.pinned_cpu, Some(cpu), "{what}: {role}");
        assert!(!r.cpu_samples.is_empty(), "{what}: {role}");
        assert!(
            r.cpu_samples.iter().all(|&(c, _)| c == cpu),
            "{what}: {role} ran off CPU {cpu}: {:?}",
            r.cpu_samples
        );
        assert!(r.end_ns > r.start_ns, "{what}: {role}");
    }
    let ping = recs.iter().find(|r| r.role == "ping").map(|r| r.tid);
    let pong = recs.iter().find(|r| r.role == "pong").map(|r| r.tid);
    assert_ne!(ping, pong, "{what}: two distinct tasks");
}

#[test]
fn every_mechanism_with_threads_and_processes_on_cpu_pairs() {
    let two = cpu1_online();
    for mech in ["pipe", "futex", "eventfd"] {
        for process in [false, true] {
            check_pair(0, 0, mech, process);
            if two {
                check_pair(0, 1, mech, process);
            }
        }
    }
}

#[test]
fn offline_cpu_fails_naming_it_on_either_side() {
    for process in ["false", "true"] {
        for (a, b) in [("4095", "0"), ("0", "4095")] {
            let p = params(&[
                ("cpu_a", a),
                ("cpu_b", b),
                ("process", process),
                ("duration", "0.1s"),
            ]);
            let t0 = Instant::now();
            let (res, _) = run(&p);
            match res {
                Err(WorkloadError::Failed(m)) => {
                    assert!(m.contains("CPU 4095"), "{m}");
                    let role = if a == "4095" { "ping" } else { "pong" };
                    assert!(m.contains(role), "{m}");
                }
                other => panic!("cpu_a={a} cpu_b={b} process={process}: {other:?}"),
            }
            // A refusal before anything runs (the bound is only against a hang).
            assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
        }
    }
}

#[test]
fn stop_flag_ends_a_long_run_promptly() {
    for mech in ["pipe", "futex", "eventfd"] {
        for process in ["false", "true"] {
            let p = params(&[
                ("cpu_a", "0"),
                ("cpu_b", "0"),
                ("mechanism", mech),
                ("process", process),
                ("duration", "300s"),
            ]);
            let w = Ctxsw;
            let ctx = MeasureCtx::new(SysRoot::host(), w.cpus(&p).unwrap());
            let stop = ctx.stop.clone();
            let t0 = Instant::now();
            let setter = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, Ordering::Relaxed);
            });
            let res = w.run(&p, &ctx);
            setter.join().expect("setter thread");
            let took = t0.elapsed();
            assert!(
                matches!(res, Err(WorkloadError::Interrupted)),
                "{mech} process={process}: {res:?}"
            );
            // Far from the 300 s asked for, with room for a loaded machine.
            assert!(
                took < Duration::from_secs(30),
                "{mech} process={process}: {took:?}"
            );
        }
    }
}

#[test]
fn work_spins_on_both_sides() {
    let p = params(&[
        ("cpu_a", "0"),
        ("cpu_b", "0"),
        ("work", "20000"),
        ("duration", "0.1s"),
        ("warmup", "0"),
    ]);
    let out = run(&p).0.expect("ctxsw with work");
    let rate = out.metric("round_trips_per_s").expect("rate").value;
    // 20 µs on each side: a round trip cannot be shorter than 40 µs.
    assert!(rate > 0.0 && rate < 25_000.0, "{rate}");
    let h = out
        .histograms
        .iter()
        .find(|h| h.name == "rtt")
        .expect("rtt");
    assert!(h.min >= 40_000.0, "{}", h.min);
}

#[test]
fn rtt_every_thins_or_drops_the_histogram() {
    let base = [
        ("cpu_a", "0"),
        ("cpu_b", "0"),
        ("duration", "0.1s"),
        ("warmup", "0"),
    ];
    let mut with = base.to_vec();
    with.push(("rtt_every", "16"));
    let out = run(&params(&with)).0.expect("rtt_every=16");
    let count = out.metric("round_trips").expect("count").value;
    let h = out
        .histograms
        .iter()
        .find(|h| h.name == "rtt")
        .expect("rtt");
    assert!(
        (h.count as f64 - count / 16.0).abs() <= 1.0,
        "{} of {count}",
        h.count
    );
    assert!(
        out.notes.iter().any(|n| n.contains("16")),
        "{:?}",
        out.notes
    );

    let mut none = base.to_vec();
    none.push(("rtt_every", "0"));
    let out = run(&params(&none)).0.expect("rtt_every=0");
    assert!(out.histograms.is_empty());
    assert!(out.metric("round_trips_per_s").expect("rate").value > 0.0);
}

#[test]
fn cpus_are_the_pair_deduplicated() {
    assert_eq!(
        Ctxsw.cpus(&params(&[("cpu_a", "3"), ("cpu_b", "3")])),
        Ok(vec![3])
    );
    assert_eq!(
        Ctxsw.cpus(&params(&[("cpu_a", "0"), ("cpu_b", "2")])),
        Ok(vec![0, 2])
    );
}
