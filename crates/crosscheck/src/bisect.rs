//! `perflab crosscheck bisect`: the seeded simulation behind `perflab bisect` (issue 33,
//! docs/bisect.md). 1,024 commits, 1 % noise: the share of bisections that name the right
//! commit of one +3 % step and what they spend against a fixed-repetition bisection of
//! equal accuracy; "no difference" when there is no change; the range flagged when it
//! holds two changes ([`perflab_bisect::sim::bisect_targets`]). Every target missed is
//! recorded in the [`Verdicts`] (exit 4). No root, no measurement: the same figures on
//! every machine.

use std::io::Write;

use perflab_bisect::sim::bisect_targets;
use perflab_stats::simulate::{Bound, Target};

use crate::error::{input, Result};
use crate::options::Options;
use crate::say;
use crate::tolerance::Verdicts;

/// Bisections per line: a fifth of --families (200 by default: about 20 s on 2 CPUs).
pub fn trials(families: u32) -> u32 {
    (families / 5).max(1)
}

pub fn run(o: &Options, out: &mut dyn Write, verdicts: &mut Verdicts) -> Result<()> {
    if o.tolerance.is_some() {
        return Err(input(
            "--tolerance does not apply to bisect: its bounds are the issue's targets",
        ));
    }
    if o.families == 0 {
        return Err(input(
            "--families 0: simulate at least one bisection, e.g. 1000",
        ));
    }
    let trials = trials(o.families);
    say!(
        out,
        "bisect: seeded simulation (seed {}, {trials} bisections per line; 1,024 commits, each \
         measurement its commit's level x (1 + 0.01 z); rounds good, commit, bad; alpha 0.05)",
        o.seed
    );
    let started = std::time::Instant::now();
    let targets = bisect_targets(trials, o.seed);
    let width = targets.iter().map(|t| t.what.len()).max().unwrap_or(0);
    say!(out, "{:<width$}  {:>7}  {:>9}", "target", "value", "bound");
    for t in &targets {
        say!(out, "{}", line(t, width));
        record(t, verdicts);
    }
    say!(
        out,
        "{} lines in {:.1} s",
        targets.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every bounded line is held to its bound (a miss is exit 4); a shown line is not.
fn record(t: &Target, verdicts: &mut Verdicts) {
    match t.bound {
        Bound::AtMost(b) => {
            verdicts.rate(t.what.clone(), t.value, b);
        }
        // A share that must reach b: its complement held to at most 1 − b.
        Bound::AtLeast(b) => {
            verdicts.rate(format!("{} (missed share)", t.what), 1.0 - t.value, 1.0 - b);
        }
        Bound::Shown => {}
    }
}

fn line(t: &Target, width: usize) -> String {
    let (bound, mark) = match t.bound {
        Bound::AtMost(b) => (format!("<= {}", fig(t, b)), mark(t.value <= b)),
        Bound::AtLeast(b) => (format!(">= {}", fig(t, b)), mark(t.value >= b)),
        Bound::Shown => (String::new(), ""),
    };
    format!(
        "{:<width$}  {:>7}  {:>9}  {mark}  ({})",
        t.what,
        fig(t, t.value),
        bound,
        t.detail
    )
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}

/// Shares as percentages, ratios of measurements as ratios.
fn fig(t: &Target, x: f64) -> String {
    if t.what.contains(" / ") {
        format!("{x:.2}")
    } else {
        format!("{:.1}%", x * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missed_share_is_recorded_as_outside_and_a_shown_line_is_not() {
        let t = |value, bound| Target {
            what: "right commit".into(),
            value,
            bound,
            trials: 10,
            detail: String::new(),
        };
        let mut v = Verdicts::new();
        record(&t(0.90, Bound::AtLeast(0.95)), &mut v);
        record(&t(0.10, Bound::Shown), &mut v);
        assert!(!v.all_within());
        assert_eq!(v.outside().count(), 1);
        let mut v = Verdicts::new();
        record(&t(0.97, Bound::AtLeast(0.95)), &mut v);
        record(&t(0.5, Bound::AtMost(0.6)), &mut v);
        assert!(v.all_within());
        assert!(line(&t(0.97, Bound::AtLeast(0.95)), 12).contains("97.0%"));
    }
}
