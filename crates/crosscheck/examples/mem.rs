//! Runs xfer memcpy (pinned, 4k) against `perf bench mem memcpy -f default` and prints the
//! ratios.
//!
//! `cargo run --release -p perflab-crosscheck --example mem -- [SECONDS] [SIZE ...]`
//! (defaults: 1 s, sizes 64K 1M 16M 256M).

use perflab_core::{format_size, parse_size};
use perflab_crosscheck::lab_side::LabSide;
use perflab_crosscheck::mem::memcpy_vs_perf_bench;
use perflab_crosscheck::pairs::CPU_PLAN;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let mut sizes: Vec<u64> = args
        .iter()
        .skip(1)
        .filter_map(|s| parse_size(s).ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![64 << 10, 1 << 20, 16 << 20, 256 << 20];
    }
    let mut lab = match LabSide::new() {
        Ok(lab) => lab,
        Err(e) => {
            eprintln!("crosscheck_mem: {e}");
            std::process::exit(1);
        }
    };
    match memcpy_vs_perf_bench(&mut lab, &sizes, secs, (CPU_PLAN, 3.0)) {
        Ok(rows) => {
            println!("interleaved pairs until decided against ±3%, {secs} s per run");
            println!("size   perflab_MiB/s  perf_MiB/s  ratio  95% CI  verdict  pair ratios");
            for r in rows {
                let pairs: Vec<String> = r
                    .pairs
                    .iter()
                    .map(|(p, q)| format!("{:.3}", p / q))
                    .collect();
                let e = &r.estimate;
                println!(
                    "{:>5}  {:13.0}  {:10.0}  {:.4}  [{:.4}, {:.4}]  {}  {}",
                    format_size(r.size),
                    r.perflab_mib_s,
                    r.peer_mib_s,
                    e.median,
                    e.ci.0,
                    e.ci.1,
                    r.judgement.word(),
                    pairs.join(" ")
                );
            }
        }
        Err(e) => {
            eprintln!("crosscheck_mem: {e}");
            std::process::exit(1);
        }
    }
}
