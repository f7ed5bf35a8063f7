//! `perflab crosscheck report`: how long `perflab report`, `compare` and `export` take,
//! and how much memory they need, over runs of 10,000 and 50,000 measurements with
//! latency histograms, and `compare` over 1,000 points (issue 24 item 6: under 5 s and
//! 500 MB at 2 × 50,000, in every format; `compare` over 1,000 points under 1 s). A
//! benchmark that prints each case against its target and exits 4 when one is missed;
//! no unit test asserts these times, because a timed assertion on a shared machine only
//! measures the noise.

mod child;
mod data;

use std::io::Write;
use std::path::Path;

use perflab_store::RunId;

use crate::error::Result;
use crate::say;
use crate::tolerance::Verdicts;
use child::{time_child, Timing};
use data::Runs;

const TARGET_S: f64 = 5.0;
const TARGET_MB: f64 = 500.0;
/// `compare` over 1,000 points.
const COMPARE_TARGET_S: f64 = 1.0;

/// Times the commands of the executable `perflab` over the runs it builds.
pub fn run(perflab: &Path, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    let dir = data::TempDir::new()?;
    let db = dir.path().join("bench.db");
    let runs = data::build(&db, dir.path(), out)?;
    say!(
        out,
        "timing each command as a child process ({}), wall time and max RSS (wait4; it \
         includes this process's own {} MB at the fork):",
        perflab.display(),
        data::own_rss_mb().map_or_else(|| "?".into(), |mb| format!("{mb:.0}"))
    );
    let mut over = false;
    for case in cases(&runs) {
        let t = time_child(perflab, &db, dir.path(), &case.args, case.html)?;
        over |= !judge(&case, &t, out, verdicts);
    }
    if over {
        say!(
            out,
            "OVER TARGET: at least one case missed issue 24's targets (5 s / 500 MB; \
             compare over 1,000 points 1 s)"
        );
    }
    Ok(())
}

/// One command timed: what it is, its arguments after `--db DB`, and its time target.
struct Case {
    what: String,
    args: Vec<String>,
    /// The command writes an HTML page (to a file the timing names).
    html: bool,
    target_s: f64,
}

fn cases(runs: &Runs) -> Vec<Case> {
    let mut out = Vec::new();
    for (scale, pair) in [("10k", runs.small), ("100k", runs.large)] {
        let n = if scale == "10k" {
            "2 × 10,000"
        } else {
            "2 × 50,000"
        };
        for format in ["text", "markdown", "mail", "json"] {
            out.push(case(
                format!("report {n} {format}"),
                args("report", &pair, Some(format)),
                false,
                TARGET_S,
            ));
        }
        out.push(case(
            format!("report {n} html"),
            args("report", &pair, None),
            true,
            TARGET_S,
        ));
        for format in ["text", "markdown", "json"] {
            out.push(case(
                format!("compare {n} {format}"),
                args("compare", &pair, Some(format)),
                false,
                TARGET_S,
            ));
        }
        for format in ["json", "csv", "benchstat"] {
            out.push(case(
                format!("export {} {format}", &n[4..]),
                args("export", &pair[1..], Some(format)),
                false,
                TARGET_S,
            ));
        }
    }
    for format in ["text", "json"] {
        out.push(case(
            format!("compare 1,000 points {format}"),
            args("compare", &[runs.wide], Some(format)),
            false,
            COMPARE_TARGET_S,
        ));
    }
    out
}

/// `COMMAND RUN... [--format FORMAT]`: a timed command's arguments after `--db DB`.
fn args(command: &str, runs: &[RunId], format: Option<&str>) -> Vec<String> {
    let mut out = vec![command.to_string()];
    out.extend(runs.iter().map(RunId::to_string));
    if let Some(f) = format {
        out.extend(["--format".to_string(), f.to_string()]);
    }
    out
}

fn case(what: String, args: Vec<String>, html: bool, target_s: f64) -> Case {
    Case {
        what,
        args,
        html,
        target_s,
    }
}

/// Prints the case against its targets and records them; whether both held.
fn judge(case: &Case, t: &Timing, out: &mut dyn Write, verdicts: &mut Verdicts) -> bool {
    let in_time = verdicts.below(format!("{} time", case.what), t.wall_s, case.target_s, "s");
    let in_memory = verdicts.below(
        format!("{} max RSS", case.what),
        t.max_rss_mb,
        TARGET_MB,
        "MB",
    );
    say!(
        out,
        "{:<34} {:>6.2} s ({:>4.2} of < {} s)  max RSS {:>5.0} MB ({:.2} of < {TARGET_MB} MB)  \
         {}{}",
        case.what,
        t.wall_s,
        t.wall_s / case.target_s,
        case.target_s,
        t.max_rss_mb,
        t.max_rss_mb / TARGET_MB,
        t.size,
        if in_time && in_memory {
            ""
        } else {
            "  OVER TARGET"
        }
    );
    in_time && in_memory
}
