//! `perflab crosscheck verdicts`: the seeded simulation behind the verdicts (issue 22,
//! docs/METHODOLOGY.md "Verdicts that decide"). It prints, for families shaped like the
//! presets, the false-verdict rates with no change, the power to flag one shifted row,
//! the `same` rate of equal rows, and what `--until-decided` spends against a fixed design
//! of equal power ([`perflab_stats::simulate::verdict_targets`]). A false-verdict rate
//! above its bound is recorded in the [`Verdicts`] (exit 4); the other targets are
//! printed as met or missed. No root, no measurement: the same numbers on every machine.

use std::io::Write;

use perflab_stats::simulate::{verdict_targets, Bound, Target};

use crate::error::{input, Result};
use crate::options::Options;
use crate::say;
use crate::tolerance::Verdicts;

/// The seed of the table in docs/METHODOLOGY.md.
pub const SEED: u64 = 2026;

pub fn run(o: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    if o.tolerance.is_some() {
        return Err(input(
            "--tolerance does not apply to verdicts: its bounds are the issue's targets",
        ));
    }
    if o.families == 0 {
        return Err(input(
            "--families 0: simulate at least one family, e.g. 1000",
        ));
    }
    say!(
        out,
        "verdicts: seeded simulation (seed {}, {} families per line; pairs A1 B1, A2 B2, ... \
         with independent normal noise; alpha 0.05, threshold 1% unless said)",
        o.seed,
        o.families
    );
    let started = std::time::Instant::now();
    let targets = verdict_targets(o.families, o.seed);
    let width = targets.iter().map(|t| t.what.len()).max().unwrap_or(0);
    say!(
        out,
        "{:<width$}  {:>7}  {:>6}  {:>9}  (a bound is missed only beyond its sampling \
         error: one-sided binomial test at 1%)",
        "target",
        "value",
        "+/-se",
        "bound"
    );
    for t in &targets {
        say!(out, "{}", line(t, width));
        if t.is_error_rate() {
            if let Bound::AtMost(limit) = t.bound {
                // Held to its bound beyond sampling error ([`Target::holds`]).
                let limit = if t.holds() { limit.max(t.value) } else { limit };
                verdicts.rate(t.what.clone(), t.value, limit);
            }
        }
    }
    let missed: Vec<&Target> = targets
        .iter()
        .filter(|t| !t.holds() && !t.is_error_rate())
        .collect();
    if !missed.is_empty() {
        say!(
            out,
            "missed (power or cost, not an error rate; the exit code stays 0 for these): {}",
            missed
                .iter()
                .map(|t| t.what.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    say!(
        out,
        "{} lines in {:.1} s",
        targets.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn line(t: &Target, width: usize) -> String {
    let bound = match t.bound {
        Bound::AtMost(b) => format!("<= {}", pct(b)),
        Bound::AtLeast(b) => format!(">= {}", pct(b)),
        Bound::Shown => String::new(),
    };
    let mark = match (t.bound, t.holds()) {
        (Bound::Shown, _) => "",
        (_, true) => "ok",
        (_, false) if t.is_error_rate() => "EXCEEDED",
        (_, false) => "missed",
    };
    let detail = if t.detail.is_empty() {
        String::new()
    } else {
        format!("  ({})", t.detail)
    };
    format!(
        "{:<width$}  {:>7}  {:>6}  {:>9}  {mark}{detail}",
        t.what,
        pct(t.value),
        t.std_error().map_or("-".to_string(), pct),
        bound
    )
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exceeded_error_rate_is_marked_and_a_shown_line_is_not() {
        let t = Target {
            what: "false better/worse, x".into(),
            value: 0.07,
            bound: Bound::AtMost(0.05),
            trials: 1000,
            detail: String::new(),
        };
        assert!(
            line(&t, 22).ends_with("7.0%    0.8%    <= 5.0%  EXCEEDED"),
            "{}",
            line(&t, 22)
        );
        // 7 % of 100 families is within the sampling error of 5 %.
        let few = Target {
            trials: 100,
            ..t.clone()
        };
        assert!(line(&few, 22).ends_with("ok"), "{}", line(&few, 22));
        let shown = Target {
            bound: Bound::Shown,
            what: "power".into(),
            ..t
        };
        assert!(!line(&shown, 5).contains("ok"));
    }
}
