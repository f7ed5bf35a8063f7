//! Runs ctxsw against `perf bench sched pipe -T` on CPU pairs and prints the ratios.
//!
//! `cargo run --release -p perflab-crosscheck --example ctxsw -- [SECONDS] [MECHANISM] [A,B ...]`
//! (defaults: 5 s, pipe, pairs 0,0 and 0,1).

use perflab_crosscheck::ctxsw::ctxsw_vs_perf_bench;
use perflab_crosscheck::lab_side::LabSide;
use perflab_crosscheck::pairs::CPU_PLAN;
use perflab_workloads::Mechanism;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let mech = args
        .get(1)
        .and_then(|s| Mechanism::from_name(s))
        .unwrap_or(Mechanism::Pipe);
    let mut pairs: Vec<(u32, u32)> = args
        .iter()
        .skip(2)
        .filter_map(|s| {
            let (a, b) = s.split_once(',')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    if pairs.is_empty() {
        pairs = vec![(0, 0), (0, 1)];
    }
    let mut lab = match LabSide::new() {
        Ok(lab) => lab,
        Err(e) => {
            eprintln!("crosscheck: {e}");
            std::process::exit(1);
        }
    };
    println!("a b  perflab_rt/s  perf_rt/s  ratio  95% CI  pairs  verdict  peer_pinned_after_ms");
    for (a, b) in pairs {
        match ctxsw_vs_perf_bench(&mut lab, (a, b), secs, mech, (CPU_PLAN, 3.0)) {
            Ok(r) => {
                let e = &r.estimate;
                println!(
                    "{a} {b}  {:12.0}  {:9.0}  {:.4}  [{:.4}, {:.4}]  {}  {}  {:?}",
                    r.perflab_rate,
                    r.peer_rate,
                    e.median,
                    e.ci.0,
                    e.ci.1,
                    e.pairs,
                    r.judgement.word(),
                    r.peer_pinned_after_ms
                );
            }
            Err(e) => {
                eprintln!("crosscheck: {e}");
                std::process::exit(1);
            }
        }
    }
}
