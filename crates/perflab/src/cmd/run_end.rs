//! How a run ended, for scripts: its exit code and, when measurements failed, the last line
//! that says so. A script must not mistake a run whose numbers are all missing for a
//! success, nor a run with holes in it for a clean one.

use perflab_core::VoidComparison;
use perflab_store::{RunInfo, RunStatus};
use serde::Serialize;

use crate::exit::{DISTURBED, FAILURE, INEFFECTIVE, INTERRUPTED, NOT_COMPARED, SOME_FAILED, VOID};

/// The run's totals over all its sessions (a resumed run counts what earlier sessions
/// measured too), as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunEnd {
    pub run: i64,
    pub status: &'static str,
    pub planned: u32,
    /// Measurements that gave a number.
    pub measured: u32,
    /// Measurements that were attempted and failed (stored with their error).
    pub failed: u32,
    /// Measurements never attempted (an interrupted run); `perflab run --resume` does them.
    pub left: u32,
    /// Of `measured`, those that ran while a knob of their variant did not hold: kept, but
    /// not their variant's numbers.
    pub ineffective: u32,
    /// Of `measured`, those that other work disturbed (it took more than 10% of their
    /// CPUs): kept, but not their variant's numbers.
    pub disturbed: u32,
    /// The share of their CPUs other work took above which they are disturbed, %.
    #[serde(skip)]
    pub disturbed_above: f64,
    /// Variants the run compares that were unavailable on the machine (`variant: reason`):
    /// the comparisons with them never happened. Named `not_compared` in the JSON, whose
    /// `unavailable` lists every unavailable variant with its reason.
    #[serde(rename = "not_compared")]
    pub unavailable: Vec<String>,
    /// Comparisons (a variant against the baseline at a point) that tested nothing: what
    /// the variant's settings were meant to move did not move (`perflab_lab::void`).
    pub void: Vec<VoidComparison>,
    /// Comparisons the run makes (variants other than the baseline, times points).
    #[serde(skip)]
    pub comparisons: usize,
    /// A variant's comparison is void at every point it was measured at: the run tested
    /// nothing of it (exit 9). A void point among others (idle-ipi's same-CPU pair, where
    /// no partner ever idles, on a machine whose other pairs do) is listed, not an exit.
    #[serde(skip)]
    pub void_throughout: bool,
    pub exit_code: i32,
}

impl RunEnd {
    pub fn of(info: &RunInfo) -> Self {
        let attempted = info.done + info.failed;
        let mut end = RunEnd {
            run: info.id,
            status: info.status.as_str(),
            planned: info.planned,
            measured: info.done,
            failed: info.failed,
            left: info.planned.saturating_sub(attempted),
            ineffective: info.ineffective,
            disturbed: 0,
            disturbed_above: info.spec.disturbed_above(),
            unavailable: not_compared(info),
            void: Vec::new(),
            comparisons: 0,
            void_throughout: false,
            exit_code: 0,
        };
        end.exit_code = end.code(info);
        end
    }

    /// This end, with the run's void comparisons out of `comparisons` it makes; `points`
    /// says at how many points each variant was measured.
    pub fn with_void(
        mut self,
        info: &RunInfo,
        void: Vec<VoidComparison>,
        (comparisons, points): (usize, &dyn Fn(&str) -> usize),
    ) -> Self {
        self.void_throughout = void
            .iter()
            .any(|v| void.iter().filter(|w| w.variant == v.variant).count() >= points(&v.variant));
        self.void = void;
        self.comparisons = comparisons;
        self.exit_code = self.code(info);
        self
    }

    /// This end, with `disturbed` of its measurements disturbed by other work.
    pub fn with_disturbed(mut self, info: &RunInfo, disturbed: u32) -> Self {
        self.disturbed = disturbed;
        self.exit_code = self.code(info);
        self
    }

    fn code(&self, info: &RunInfo) -> i32 {
        match info.status {
            RunStatus::Interrupted | RunStatus::Running => INTERRUPTED,
            RunStatus::Complete if info.failed > 0 && info.done == 0 => FAILURE,
            RunStatus::Complete if info.failed > 0 => SOME_FAILED,
            RunStatus::Complete if !self.unavailable.is_empty() => NOT_COMPARED,
            RunStatus::Complete if self.void_throughout => VOID,
            RunStatus::Complete if info.ineffective > 0 => INEFFECTIVE,
            RunStatus::Complete if self.disturbed > 0 => DISTURBED,
            RunStatus::Complete => 0,
        }
    }

    /// The line a finished run ends with when measurements failed; none for a clean run
    /// (its tables are its last word) or an interrupted one (it says how to resume).
    /// `db_flag` (` --db PATH` or nothing) goes into the `perflab show` it names.
    pub fn last_line(&self, db_flag: &str) -> Option<String> {
        let attempted = self.measured + self.failed;
        match self.exit_code {
            FAILURE => Some(format!(
                "run {}: {}, but all {attempted} measurements failed: no numbers (see perflab \
                 show {}{db_flag})",
                self.run, self.status, self.run
            )),
            SOME_FAILED => Some(format!(
                "run {}: {}, {} of {attempted} measurements failed (see perflab show {}{db_flag})",
                self.run, self.status, self.failed, self.run
            )),
            // Measured what it could, but a script must not read a comparison into it.
            NOT_COMPARED => Some(format!(
                "run {}: {}, but not compared as planned: {} unavailable on this machine \
                 (see perflab show {}{db_flag})",
                self.run,
                self.status,
                self.unavailable
                    .iter()
                    .map(|u| format!("variant {u}"))
                    .collect::<Vec<_>>()
                    .join("; "),
                self.run
            )),
            // A knob that did not hold is not a failure of the run, but a reader of the
            // last line (and a script, by the exit code) must know some numbers are missing
            // for it.
            INEFFECTIVE => Some(format!(
                "run {}: {}, but {} of {} measurements were ineffective (a knob of their \
                 variant did not hold; not counted, see perflab show {}{db_flag})",
                self.run, self.status, self.ineffective, self.measured, self.run
            )),
            // Another program's load is no failure of the run either, but what it touched
            // is missing from the comparison.
            DISTURBED => Some(format!(
                "run {}: {}, but {} of {} measurements were disturbed (other work took more \
                 than {}% of their CPUs; not counted, see perflab show {}{db_flag})",
                self.run,
                self.status,
                self.disturbed,
                self.measured,
                self.disturbed_above,
                self.run
            )),
            // Each void comparison is listed above it, with its reason.
            VOID => Some(format!(
                "run {}: {}, but {} of {} comparisons tested nothing (void: a setting \
                 changed nothing its telemetry shows, listed above; more repetitions would \
                 not help){}; see perflab show {}{db_flag}",
                self.run,
                self.status,
                self.void.len(),
                self.comparisons.max(self.void.len()),
                match self.ineffective {
                    0 => String::new(),
                    n => format!(
                        ", and {n} of {} measurements were ineffective",
                        self.measured
                    ),
                },
                self.run
            )),
            _ => None,
        }
    }

    /// The void comparisons, one line each, under a heading: printed after the tables.
    pub fn void_listing(&self) -> Option<String> {
        if self.void.is_empty() {
            return None;
        }
        let mut s = String::from(
            "Void comparisons (tested nothing: what the variant's settings are meant to move \
             did not move; no verdict):\n",
        );
        for v in &self.void {
            s.push_str(&format!("  {}\n", v.line()));
        }
        Some(s)
    }
}

/// The run's unavailable variants, when it compares variants: with two or more planned,
/// each one missing is a comparison that never happened. A run of one variant compares
/// nothing, so none of its variants is needed for a comparison.
fn not_compared(info: &RunInfo) -> Vec<String> {
    if info.spec.variants.len() < 2 {
        return Vec::new();
    }
    info.unavailable
        .iter()
        .map(|u| format!("{} ({})", u.variant, u.reason))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(status: RunStatus, planned: u32, done: u32, failed: u32) -> RunInfo {
        RunInfo {
            id: 7,
            created_at: 0.0,
            study: "s".into(),
            workload: "null".into(),
            label: None,
            status,
            spec: Default::default(),
            fingerprint: Default::default(),
            unavailable: Vec::new(),
            planned,
            done,
            failed,
            ineffective: 0,
            uid: String::new(),
        }
    }

    #[test]
    fn codes_and_last_lines() {
        let clean = RunEnd::of(&info(RunStatus::Complete, 40, 40, 0));
        assert_eq!((clean.exit_code, clean.last_line("")), (0, None));

        let some = RunEnd::of(&info(RunStatus::Complete, 40, 37, 3));
        assert_eq!(some.exit_code, SOME_FAILED);
        assert_eq!(
            some.last_line("").unwrap(),
            "run 7: complete, 3 of 40 measurements failed (see perflab show 7)"
        );
        // The command it names reaches the same database as the run.
        assert_eq!(
            some.last_line(" --db '/tmp/a b.db'").unwrap(),
            "run 7: complete, 3 of 40 measurements failed (see perflab show 7 --db '/tmp/a b.db')"
        );

        let all = RunEnd::of(&info(RunStatus::Complete, 40, 0, 40));
        assert_eq!(all.exit_code, FAILURE);
        assert!(all
            .last_line("")
            .unwrap()
            .contains("all 40 measurements failed"));

        // Interrupted wins over failures: the run is not finished, and resume retries both.
        let stopped = RunEnd::of(&info(RunStatus::Interrupted, 40, 10, 2));
        assert_eq!((stopped.exit_code, stopped.left), (INTERRUPTED, 28));
        assert_eq!(stopped.last_line(""), None);

        // A compared variant that was unavailable: exit 5, named last; with failures the
        // failures speak first. One planned variant compares nothing.
        let mut lone = info(RunStatus::Complete, 4, 4, 0);
        lone.unavailable = vec![perflab_store::UnavailableVariant {
            variant: "poll-only".into(),
            reason: "needs root".into(),
        }];
        assert_eq!(RunEnd::of(&lone).exit_code, 0);
        lone.spec.variants = ["all", "poll-only"]
            .map(|n| serde_json::from_value(serde_json::json!({ "name": n })).unwrap())
            .to_vec();
        let lone_end = RunEnd::of(&lone);
        assert_eq!(lone_end.exit_code, NOT_COMPARED);
        assert_eq!(
            lone_end.last_line("").unwrap(),
            "run 7: complete, but not compared as planned: variant poll-only (needs root) \
             unavailable on this machine (see perflab show 7)"
        );
        lone.failed = 1;
        assert_eq!(RunEnd::of(&lone).exit_code, SOME_FAILED);

        // Ineffective measurements are no failure, but a code of their own (issue 32: a run
        // with 5 of 24 ineffective exited 0), and the last line says so.
        let mut slipped = info(RunStatus::Complete, 40, 40, 0);
        slipped.ineffective = 20;
        let slipped = RunEnd::of(&slipped);
        assert_eq!(slipped.exit_code, INEFFECTIVE);
        assert_eq!(
            slipped.last_line("").unwrap(),
            "run 7: complete, but 20 of 40 measurements were ineffective (a knob of their \
             variant did not hold; not counted, see perflab show 7)"
        );
    }

    /// Issue 32: an exec A/B measured while another process loaded the CPUs exited 0 and
    /// said nothing of it. Disturbed measurements have a code of their own, counted last;
    /// an ineffective measurement says more and keeps its code.
    #[test]
    fn disturbed_measurements_have_their_code_and_are_counted_last() {
        let run = info(RunStatus::Complete, 8, 8, 0);
        assert_eq!(RunEnd::of(&run).with_disturbed(&run, 0).exit_code, 0);
        let end = RunEnd::of(&run).with_disturbed(&run, 3);
        assert_eq!(end.exit_code, DISTURBED);
        assert_eq!(
            end.last_line("").unwrap(),
            "run 7: complete, but 3 of 8 measurements were disturbed (other work took more \
             than 10% of their CPUs; not counted, see perflab show 7)"
        );
        let mut slipped = run.clone();
        slipped.ineffective = 1;
        let end = RunEnd::of(&slipped).with_disturbed(&slipped, 3);
        assert_eq!(end.exit_code, INEFFECTIVE);
        // The JSON a script reads carries the count.
        let doc = serde_json::to_value(&end).unwrap();
        assert_eq!(doc["disturbed"], 3);
    }

    #[test]
    fn void_comparisons_have_their_code_and_are_listed() {
        // Issue 32: idle-ipi on a driver that ignores `disable` exited 0 (then 8) although
        // it compared nothing.
        let mut run = info(RunStatus::Complete, 24, 24, 0);
        run.ineffective = 5;
        let void = vec![VoidComparison {
            point: 1,
            point_label: "cpu_b=1".into(),
            baseline: "poll-only".into(),
            variant: "all".into(),
            reason: "haltpoll idle was entered in 2 of 6 measurements of poll-only".into(),
        }];
        let end = RunEnd::of(&run).with_void(&run, void.clone(), (2, &|_| 1));
        assert_eq!(end.exit_code, VOID);
        assert_eq!(
            end.last_line("").unwrap(),
            "run 7: complete, but 1 of 2 comparisons tested nothing (void: a setting changed \
             nothing its telemetry shows, listed above; more repetitions would not help), and \
             5 of 24 measurements were ineffective; see perflab show 7"
        );
        let listing = end.void_listing().unwrap();
        assert!(listing
            .contains("  void: all vs poll-only at cpu_b=1: haltpoll idle was entered in 2 of 6"));
        // One void point of a variant measured at two (a same-CPU pair where no partner
        // idles, beside pairs that do): listed, but the run did test the variant.
        let partial = RunEnd::of(&run).with_void(&run, void.clone(), (2, &|_| 2));
        assert_eq!(partial.exit_code, INEFFECTIVE);
        assert!(partial.void_listing().is_some());
        // Failures speak first; no void, no listing.
        run.failed = 1;
        assert_eq!(
            RunEnd::of(&run)
                .with_void(&run, end.void.clone(), (2, &|_| 1))
                .exit_code,
            SOME_FAILED
        );
        assert_eq!(RunEnd::of(&run).void_listing(), None);
    }
}
