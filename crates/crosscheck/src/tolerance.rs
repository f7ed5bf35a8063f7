//! What a cross-check holds its numbers to: every check records each ratio or cost it
//! prints in one [`Verdicts`], and `perflab crosscheck` takes its exit code from
//! [`Verdicts::finish`], so CI fails when a number is outside its stated tolerance rather
//! than printing "outside" and exiting 0.

use std::io::Write;

use crate::say;

/// The tolerance one number was held to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// A ratio (perflab / peer, monitors on / off) within 1 ± `pct` %.
    Ratio { pct: f64 },
    /// A cost below `limit`, in `unit` (e.g. "ms", "MB", "s").
    Below { limit: f64, unit: &'static str },
    /// A rate (a share, 0.05 = 5 %) at most `limit`: a false-verdict rate.
    Rate { limit: f64 },
    /// A ratio's interval [`lo`, `hi`] inside 1 ± `pct` % (see [`crate::pairs`]).
    Interval { pct: f64, lo: f64, hi: f64 },
}

/// One number and whether it held.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub what: String,
    pub value: f64,
    pub bound: Bound,
    pub within: bool,
    /// The interval lies across an edge of the tolerance: not shown to hold nor to fail.
    /// It does not fail the check; `finish` names it.
    pub undecided: bool,
}

impl Check {
    /// `0-1 ratio 1.045 (tolerance ±3%)`, `overhead per measurement 6.1 ms (target < 5 ms)`.
    pub fn describe(&self) -> String {
        match self.bound {
            Bound::Ratio { pct } => format!(
                "{} ratio {:.3} (tolerance ±{}%)",
                self.what,
                self.value,
                fmt_num(pct)
            ),
            Bound::Below { limit, unit } => format!(
                "{} {:.3} {unit} (target < {} {unit})",
                self.what,
                self.value,
                fmt_num(limit)
            ),
            Bound::Rate { limit } => format!(
                "{} {}% (bound <= {}%)",
                self.what,
                fmt_num(self.value * 100.0),
                fmt_num(limit * 100.0)
            ),
            Bound::Interval { pct, lo, hi } => format!(
                "{} ratio {:.3} [{lo:.3}, {hi:.3}] (tolerance ±{}%)",
                self.what,
                self.value,
                fmt_num(pct)
            ),
        }
    }
}

/// Every number a cross-check holds to a tolerance, in the order checked.
#[derive(Debug, Default)]
pub struct Verdicts {
    checks: Vec<Check>,
}

impl Verdicts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Holds `ratio` to 1 ± `pct` %; returns whether it is within. A ratio that is not a
    /// finite number (a peer that measured 0) is outside: it cannot be shown to hold.
    pub fn ratio(&mut self, what: impl Into<String>, ratio: f64, pct: f64) -> bool {
        let within = ratio_within(ratio, pct);
        self.push(what.into(), ratio, Bound::Ratio { pct }, within)
    }

    /// Holds `value` below `limit` (in `unit`); returns whether it is.
    pub fn below(
        &mut self,
        what: impl Into<String>,
        value: f64,
        limit: f64,
        unit: &'static str,
    ) -> bool {
        let within = value.is_finite() && value < limit;
        self.push(what.into(), value, Bound::Below { limit, unit }, within)
    }

    /// Holds a rate (a share) to at most `limit`; returns whether it is.
    pub fn rate(&mut self, what: impl Into<String>, value: f64, limit: f64) -> bool {
        let within = value.is_finite() && value <= limit + 1e-12;
        self.push(what.into(), value, Bound::Rate { limit }, within)
    }

    /// Holds a ratio's interval to 1 ± `pct` %: within when inside, failing when wholly
    /// outside, undecided (not failing, named by `finish`) when across an edge.
    pub fn interval(
        &mut self,
        what: impl Into<String>,
        ratio: f64,
        (lo, hi): (f64, f64),
        pct: f64,
    ) -> crate::pairs::Judgement {
        use crate::pairs::{judge, Judgement};
        let j = if ratio.is_finite() && lo.is_finite() && hi.is_finite() {
            judge((lo, hi), pct)
        } else {
            Judgement::Outside
        };
        let bound = Bound::Interval { pct, lo, hi };
        self.push(what.into(), ratio, bound, j != Judgement::Outside);
        if let Some(last) = self.checks.last_mut() {
            last.undecided = j == Judgement::Undecided;
        }
        j
    }

    fn push(&mut self, what: String, value: f64, bound: Bound, within: bool) -> bool {
        self.checks.push(Check {
            what,
            value,
            bound,
            within,
            undecided: false,
        });
        within
    }

    /// Every number checked, in the order checked (`crosscheck --format json`).
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// The numbers outside their tolerance.
    pub fn outside(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.within)
    }

    /// True when every number held (nothing checked holds too).
    pub fn all_within(&self) -> bool {
        self.outside().next().is_none()
    }

    /// Writes, as the check's last line, which numbers are outside their tolerance (nothing
    /// when all held: the check's own lines say "within"), and returns whether all held.
    pub fn finish(self, out: &mut dyn Write) -> bool {
        let undecided: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.undecided)
            .map(Check::describe)
            .collect();
        if !undecided.is_empty() {
            say!(
                out,
                "UNDECIDED (interval across the tolerance, not failing): {} of {} checked: {}",
                undecided.len(),
                self.checks.len(),
                undecided.join("; ")
            );
        }
        let outside: Vec<String> = self.outside().map(Check::describe).collect();
        if !outside.is_empty() {
            say!(
                out,
                "OUTSIDE TOLERANCE: {} of {} checked: {}",
                outside.len(),
                self.checks.len(),
                outside.join("; ")
            );
        }
        self.all_within()
    }
}

/// Whether `ratio` lies within 1 ± `pct` %, the edge included (1.03 is within ±3%, though
/// 1.03 − 1 is a hair above 0.03 in binary floating point).
pub fn ratio_within(ratio: f64, pct: f64) -> bool {
    ratio.is_finite() && (ratio - 1.0).abs() <= pct / 100.0 + 1e-12
}

/// `3`, `0.5`: a tolerance as a person writes it.
pub fn fmt_num(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_within_and_outside() {
        let mut v = Verdicts::new();
        assert!(v.ratio("0-0", 0.992, 3.0));
        assert!(v.ratio("0-1", 1.03, 3.0));
        assert!(v.all_within());
        assert!(!v.ratio("0-2", 1.045, 3.0));
        assert!(!v.ratio("0-3", 0.5, 3.0));
        assert!(!v.ratio("peer measured 0", f64::INFINITY, 3.0));
        assert!(!v.ratio("nothing", f64::NAN, 3.0));
        assert!(!v.all_within());
        let outside: Vec<&str> = v.outside().map(|c| c.what.as_str()).collect();
        assert_eq!(outside, ["0-2", "0-3", "peer measured 0", "nothing"]);
        assert_eq!(v.checks[2].describe(), "0-2 ratio 1.045 (tolerance ±3%)");
    }

    #[test]
    fn costs_below_their_targets() {
        let mut v = Verdicts::new();
        assert!(v.below("peak memory", 39.3, 100.0, "MB"));
        assert!(v.all_within());
        assert!(!v.below("overhead per measurement", 5.0, 5.0, "ms"));
        assert_eq!(
            v.checks[1].describe(),
            "overhead per measurement 5.000 ms (target < 5 ms)"
        );
        let mut out = Vec::new();
        assert!(!v.finish(&mut out));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "OUTSIDE TOLERANCE: 1 of 2 checked: overhead per measurement 5.000 ms (target < 5 \
             ms)\n"
        );
    }

    #[test]
    fn a_false_verdict_rate_above_its_bound_fails_the_check() {
        let mut v = Verdicts::new();
        assert!(v.rate("false better/worse, null", 0.05, 0.05));
        assert!(!v.rate("false better/worse, null 2", 0.061, 0.05));
        let mut out = Vec::new();
        assert!(!v.finish(&mut out));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "OUTSIDE TOLERANCE: 1 of 2 checked: false better/worse, null 2 6.1% (bound <= 5%)\n"
        );
    }

    #[test]
    fn an_interval_across_the_tolerance_is_named_but_does_not_fail() {
        let mut v = Verdicts::new();
        use crate::pairs::Judgement;
        assert_eq!(
            v.interval("h2d pinned 1M", 1.0, (0.99, 1.01), 3.0),
            Judgement::Within
        );
        assert_eq!(
            v.interval("h2d 4k 16M", 1.02, (0.95, 1.08), 3.0),
            Judgement::Undecided
        );
        let mut out = Vec::new();
        assert!(v.finish(&mut out));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "UNDECIDED (interval across the tolerance, not failing): 1 of 2 checked: h2d 4k \
             16M ratio 1.020 [0.950, 1.080] (tolerance ±3%)\n"
        );
        let mut v = Verdicts::new();
        assert_eq!(
            v.interval("d2h 2m 16M", 1.08, (1.05, 1.1), 3.0),
            Judgement::Outside
        );
        assert!(!v.all_within());
    }

    #[test]
    fn nothing_checked_is_success() {
        let mut out = Vec::new();
        assert!(Verdicts::new().finish(&mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn tolerances_print_as_written() {
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(0.5), "0.5");
        assert_eq!(fmt_num(1.25), "1.25");
    }
}
