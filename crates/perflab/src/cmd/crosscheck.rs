//! `perflab crosscheck`: glue only. The checks live in `perflab-crosscheck`; here the
//! flags become its options, its tables go to stdout (or with `--format json` to stderr,
//! and a document of every number checked to stdout), and its verdicts the exit code
//! ([`crate::exit::OUTSIDE_TOLERANCE`] when a number is outside its stated tolerance).

use std::io::Write;

use perflab_core::limits::flag_seconds;
use perflab_crosscheck::tolerance::Bound;
use perflab_crosscheck::Check;
use serde::Serialize;

use crate::cli::{CrosscheckArgs, Global};
use crate::cli_format::DataFormat;
use crate::cmd::{common, envelope};
use crate::exit::{input, OUTSIDE_TOLERANCE};

pub fn run(g: &Global, a: CrosscheckArgs) -> anyhow::Result<i32> {
    // Checked here, before any check starts, against the ranges --help states.
    flag_seconds("--duration", &a.duration).map_err(input)?;
    if let Some(m) = &a.measure {
        flag_seconds("--measure", m).map_err(input)?;
    }
    let json = a.format == DataFormat::Json;
    let check = a.workload.clone();
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
    // With JSON the tables are still shown, as they come, where progress goes.
    let mut out: Box<dyn Write> = match json {
        true => Box::new(std::io::stderr()),
        false => Box::new(crate::stdout_guard::Stdout),
    };
    let verdicts = perflab_crosscheck::run(&options, &mut out).map_err(|e| {
        if e.is_input() {
            input(e.to_string())
        } else {
            anyhow::Error::new(e)
        }
    })?;
    let checks: Vec<CheckDoc> = verdicts.checks().iter().map(CheckDoc::of).collect();
    let code = if verdicts.finish(&mut out) {
        0
    } else {
        OUTSIDE_TOLERANCE
    };
    if json {
        envelope::print(&CrosscheckDoc {
            check,
            within: code == 0,
            exit_code: code,
            checks,
        })?;
    }
    Ok(code)
}

/// `crosscheck --format json` (`$defs/crosscheck` in docs/schema/perflab.json).
#[derive(Serialize)]
struct CrosscheckDoc {
    /// The check run: ctxsw, memcpy, verdicts, …
    check: String,
    /// Every number held to its tolerance (undecided ones do not fail).
    within: bool,
    exit_code: i32,
    checks: Vec<CheckDoc>,
}

/// One number and what it was held to.
#[derive(Serialize)]
struct CheckDoc {
    /// The check's line: `0-1 ratio 1.045 (tolerance ±3%)`.
    text: String,
    what: String,
    /// The ratio, cost or rate (null when it is not a number: a peer that measured 0).
    value: f64,
    tolerance: Tolerance,
    within: bool,
    /// The interval lies across an edge of the tolerance: neither held nor failed.
    undecided: bool,
}

/// What the number was held to.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tolerance {
    /// A ratio within 1 ± `pct` %.
    Ratio { pct: f64 },
    /// A cost below `limit` `unit`.
    Below { limit: f64, unit: &'static str },
    /// A rate (a share) at most `limit`.
    Rate { limit: f64 },
    /// A ratio whose interval [`lo`, `hi`] lies inside 1 ± `pct` %.
    Interval { pct: f64, lo: f64, hi: f64 },
}

impl CheckDoc {
    fn of(c: &Check) -> CheckDoc {
        CheckDoc {
            text: c.describe(),
            what: c.what.clone(),
            value: c.value,
            tolerance: match c.bound {
                Bound::Ratio { pct } => Tolerance::Ratio { pct },
                Bound::Below { limit, unit } => Tolerance::Below { limit, unit },
                Bound::Rate { limit } => Tolerance::Rate { limit },
                Bound::Interval { pct, lo, hi } => Tolerance::Interval { pct, lo, hi },
            },
            within: c.within,
            undecided: c.undecided,
        }
    }
}
