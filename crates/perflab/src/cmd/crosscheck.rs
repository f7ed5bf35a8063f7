//! `perflab crosscheck`: glue only. The checks live in `perflab-crosscheck`; here the
//! flags become its options, its tables go to stdout, and its verdicts the exit code
//! ([`crate::exit::OUTSIDE_TOLERANCE`] when a number is outside its stated tolerance).

use crate::cli::{CrosscheckArgs, Global};
use crate::cmd::common;
use crate::exit::{input, OUTSIDE_TOLERANCE};
use perflab_core::limits::flag_seconds;

pub fn run(g: &Global, a: CrosscheckArgs) -> anyhow::Result<i32> {
    // Checked here, before any check starts, against the ranges --help states.
    flag_seconds("--duration", &a.duration).map_err(input)?;
    if let Some(m) = &a.measure {
        flag_seconds("--measure", m).map_err(input)?;
    }
    let options = perflab_crosscheck::Options {
        sys: common::sysroot(g)?,
        pairs: a
            .pairs
            .iter()
            .map(|p| common::parse_pair("--pairs", p))
            .collect::<anyhow::Result<_>>()?,
        check: a.workload,
        sizes: a.sizes,
        duration: a.duration,
        rounds: a.rounds,
        tolerance: a.tolerance,
        monitor_sets: a.monitor_sets,
        workloads: a.workloads,
        monitor_pairs: a.monitor_pairs,
        max_pairs: a.max_pairs,
        measure: a.measure,
        perflab_exe: std::env::current_exe()?,
        families: a.families,
        seed: a.seed,
    };
    let mut out = std::io::stdout();
    let verdicts = perflab_crosscheck::run(&options, &mut out).map_err(|e| {
        if e.is_input() {
            input(e.to_string())
        } else {
            anyhow::Error::new(e)
        }
    })?;
    Ok(if verdicts.finish(&mut out) {
        0
    } else {
        OUTSIDE_TOLERANCE
    })
}
