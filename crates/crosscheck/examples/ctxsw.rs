//! Runs ctxsw against `perf bench sched pipe -T` on CPU pairs and prints the ratios.
//!
//! `cargo run --release -p perflab-crosscheck --example ctxsw -- [SECONDS] [MECHANISM] [A,B ...]`
//! (defaults: 5 s, pipe, pairs 0,0 and 0,1).

use perflab_crosscheck::ctxsw::ctxsw_vs_perf_bench;
use perflab_crosscheck::lab_side::LabSide;
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
    match ctxsw_vs_perf_bench(&mut lab, &pairs, secs, mech) {
        Ok(rows) => {
            println!("a b  perflab_rt/s  perf_rt/s  ratio  peer_first  peer_pinned_after_ms");
            for r in rows {
                println!(
                    "{} {}  {:12.0}  {:9.0}  {:.4}  {}  {:?}",
                    r.a,
                    r.b,
                    r.perflab_rate,
                    r.peer_rate,
                    r.ratio,
                    r.peer_first,
                    r.peer_pinned_after_ms
                );
            }
        }
        Err(e) => {
            eprintln!("crosscheck: {e}");
            std::process::exit(1);
        }
    }
}
