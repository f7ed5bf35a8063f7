//! Measures what timing round trips costs ctxsw: interleaved runs with `rtt_every` 1 (every
//! round trip, chained clock reads), 64 and 0 (untimed), on one CPU pair.
//!
//! `cargo run --release -p perflab-workloads --example timing_overhead -- [A] [B] [SECONDS] [REPS]`

use std::collections::BTreeMap;

use perflab_core::{resolve, MeasureCtx, SysRoot, Workload};
use perflab_workloads::Ctxsw;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let (a, b, secs) = (arg(0, "0"), arg(1, "1"), arg(2, "2"));
    let reps: usize = arg(3, "5").parse().unwrap_or(5);
    let n = 2_000_000u64;
    let t0 = perflab_core::monotonic_ns();
    let mut sink = 0u64;
    for _ in 0..n {
        sink = sink.wrapping_add(perflab_core::monotonic_ns());
    }
    let per_call = (perflab_core::monotonic_ns() - t0) as f64 / n as f64;
    println!(
        "clock_gettime(CLOCK_MONOTONIC): {per_call:.1} ns per call (sink {})",
        sink % 10
    );
    // What ctxsw adds per round trip with rtt_every=1: one clock read and one record.
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .expect("histogram bounds");
    let t0 = perflab_core::monotonic_ns();
    let mut prev = t0;
    for _ in 0..n {
        let t = perflab_core::monotonic_ns();
        h.saturating_record(t - prev + 5000);
        prev = t;
    }
    let per_step = (perflab_core::monotonic_ns() - t0) as f64 / n as f64;
    println!("clock read + histogram record: {per_step:.1} ns per round trip");
    let settings = ["1", "64", "0"];
    let mut rates: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for rep in 0..reps {
        for k in 0..settings.len() {
            // Rotate the order each repetition so no setting always runs first.
            let every = settings[(k + rep) % settings.len()];
            let given: BTreeMap<String, String> = [
                ("cpu_a", a.as_str()),
                ("cpu_b", b.as_str()),
                ("duration", secs.as_str()),
                ("rtt_every", every),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let w = Ctxsw;
            let p = match resolve("ctxsw", w.info().params, &given) {
                Ok(p) => p,
                Err(e) => return eprintln!("{e}"),
            };
            let ctx = MeasureCtx::new(SysRoot::host(), w.cpus(&p).unwrap());
            match w.run(&p, &ctx) {
                Ok(out) => {
                    let r = out
                        .metric("round_trips_per_s")
                        .map(|m| m.value)
                        .unwrap_or(0.0);
                    rates.entry(every).or_default().push(r);
                }
                Err(e) => return eprintln!("rtt_every={every}: {e}"),
            }
        }
    }
    for (every, v) in &rates {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64)
            .sqrt();
        println!("rtt_every={every:>3}: mean {mean:9.0} rt/s  sd {sd:7.0}  runs {v:.0?}");
    }
}
