//! The workloads and monitors this program has, as descriptors, and the monitors' span
//! sets as outlines, for the crates that present runs (the report) without linking the
//! plug-ins' code: `perflab_report` needs a workload's report hints (its latency table,
//! its drill-down's title) and a monitor's (how its rows are worded and grouped), not
//! the plug-in; the workloads crate links knobs and the QEMU guest code, the monitors
//! crate the tracers. The binary installs the lists once at start; a reader asks by the
//! name a stored run or row carries.

use std::sync::OnceLock;

use crate::record::MeasurementRecord;
use crate::span_outline::SpanSetOutline;
use crate::{Descriptor, ParamRoles, RunSpec, VoidComparison};

static WORKLOADS: OnceLock<Vec<&'static Descriptor>> = OnceLock::new();
static MONITORS: OnceLock<Vec<&'static Descriptor>> = OnceLock::new();
static SPAN_SETS: OnceLock<fn(&str) -> Option<SpanSetOutline>> = OnceLock::new();
static VOID_JUDGE: OnceLock<VoidJudge> = OnceLock::new();
static RUNS_VOID_JUDGE: OnceLock<RunsVoidJudge> = OnceLock::new();
static IMPORT_ROLES: OnceLock<fn(&str) -> ParamRoles> = OnceLock::new();

/// How a run's void comparisons are found from its spec and records (perflab-lab's, which
/// reads what the knobs and workloads declare: [`crate::intent`]).
pub type VoidJudge = fn(&RunSpec, &[MeasurementRecord]) -> Vec<VoidComparison>;

/// One of two runs compared (`perflab compare RUN_A RUN_B`): how the tables name it, its
/// spec and its records.
pub type RunSide<'a> = (&'a str, &'a RunSpec, &'a [MeasurementRecord]);

/// A row of two runs compared that tested nothing: its point in run A, its variant, and
/// why (the telemetry read).
pub type RunsVoid = (u32, String, String);

/// How two compared runs' void rows are found: where a variant's settings differ between
/// the runs, what they are meant to move did not move (perflab-lab's, as [`VoidJudge`]).
pub type RunsVoidJudge = fn(RunSide<'_>, RunSide<'_>) -> Vec<RunsVoid>;

/// Makes `list` the workloads every later [`workload`] looks in. A program has one set of
/// workloads: the first call wins and later ones are ignored (tests that install the same
/// fixtures from several threads need no order).
pub fn install_workloads(list: Vec<&'static Descriptor>) {
    let _ = WORKLOADS.set(list);
}

/// The descriptor of the workload called `name`; `None` for one this program does not
/// know (an imported run) or before any list was installed.
pub fn workload(name: &str) -> Option<&'static Descriptor> {
    WORKLOADS.get()?.iter().copied().find(|d| d.name == name)
}

/// Every installed workload; empty before any list was installed.
pub fn workloads() -> &'static [&'static Descriptor] {
    WORKLOADS.get().map_or(&[], Vec::as_slice)
}

/// Makes `list` the monitors, in registry order, that every later [`monitors`] and
/// [`monitor`] read; the first call wins, as with [`install_workloads`].
pub fn install_monitors(list: Vec<&'static Descriptor>) {
    let _ = MONITORS.set(list);
}

/// Every installed monitor, in registry order; empty before any list was installed.
pub fn monitors() -> &'static [&'static Descriptor] {
    MONITORS.get().map_or(&[], Vec::as_slice)
}

/// The descriptor of the monitor whose rows carry `source`: its name, or the name before
/// an argument (`trace` for `trace:netrx`).
pub fn monitor(source: &str) -> Option<&'static Descriptor> {
    let base = source.split_once(':').map_or(source, |(b, _)| b);
    let find = |name: &str| monitors().iter().copied().find(|d| d.name == name);
    find(source).or_else(|| find(base))
}

/// Makes `lookup` the way every later [`span_set`] finds a built-in span set by name
/// (parsed when asked, not at start); the first call wins.
pub fn install_span_sets(lookup: fn(&str) -> Option<SpanSetOutline>) {
    let _ = SPAN_SETS.set(lookup);
}

/// The built-in span set called `name`; `None` for one the monitors do not have, or
/// before a lookup was installed.
pub fn span_set(name: &str) -> Option<SpanSetOutline> {
    SPAN_SETS.get().and_then(|lookup| lookup(name))
}

/// Makes `judge` the way every later [`void_comparisons`] finds a run's comparisons that
/// tested nothing; the first call wins.
pub fn install_void_judge(judge: VoidJudge) {
    let _ = VOID_JUDGE.set(judge);
}

/// The comparisons of the run (`spec`, its measurements `ms`) that tested nothing; none
/// before a judge was installed.
pub fn void_comparisons(spec: &RunSpec, ms: &[MeasurementRecord]) -> Vec<VoidComparison> {
    VOID_JUDGE
        .get()
        .map_or_else(Vec::new, |judge| judge(spec, ms))
}

/// Makes `judge` the way every later [`runs_void`] finds two runs' rows that tested
/// nothing; the first call wins.
pub fn install_runs_void_judge(judge: RunsVoidJudge) {
    let _ = RUNS_VOID_JUDGE.set(judge);
}

/// The rows of run `b` against run `a` that tested nothing; none before a judge was
/// installed.
pub fn runs_void(a: RunSide<'_>, b: RunSide<'_>) -> Vec<RunsVoid> {
    RUNS_VOID_JUDGE
        .get()
        .map_or_else(Vec::new, |judge| judge(a, b))
}

/// Makes `lookup` the way every later [`import_roles`] finds the roles an importer gives
/// its parameters; the first call wins.
pub fn install_import_roles(lookup: fn(&str) -> ParamRoles) {
    let _ = IMPORT_ROLES.set(lookup);
}

/// The roles the parser called `parser` gives the parameters of the runs it imports: what
/// a run imported before runs stored their roles is read by (none before a lookup was
/// installed, or for a parser that declares none).
pub fn import_roles(parser: &str) -> ParamRoles {
    IMPORT_ROLES
        .get()
        .map_or_else(ParamRoles::default, |lookup| lookup(parser))
}

/// The roles of the parameters of a run of `workload` with `spec`: those the run stored
/// (an importer's: perf-stat, fio, hyperfine, a seed scan), else its parser's for a run
/// imported before runs stored them, else those the installed workload declares (their
/// kinds imply a size's or a duration's unit); none for a workload this program does not
/// have. Everything that prints a parameter value for a person (tables, progress lines,
/// adaptive status) reads the run's roles from here, so `64 KiB` reads the same in each.
pub fn param_roles(workload: &str, spec: &RunSpec) -> ParamRoles {
    if !spec.param_roles.is_empty() {
        return spec.param_roles.clone();
    }
    if let Some(imported) = &spec.imported {
        return import_roles(&imported.parser);
    }
    self::workload(workload).map_or_else(ParamRoles::default, |d| ParamRoles::from_specs(d.params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Needs, ReportHints};

    static ONE: Descriptor = Descriptor {
        kind: Kind::Workload,
        name: "one",
        help: "",
        params: &[],
        needs: Needs::NONE,
        report: ReportHints::None,
    };

    #[test]
    fn the_first_list_installed_is_the_one_asked() {
        install_workloads(vec![&ONE]);
        install_workloads(Vec::new());
        assert_eq!(workload("one").map(|d| d.name), Some("one"));
        assert!(workload("two").is_none());
    }

    static TRACE: Descriptor = Descriptor {
        kind: Kind::Monitor,
        name: "trace",
        help: "",
        params: &[],
        needs: Needs::NONE,
        report: ReportHints::None,
    };

    fn one_set(name: &str) -> Option<SpanSetOutline> {
        (name == "set").then(|| SpanSetOutline {
            name: name.into(),
            spans: Vec::new(),
        })
    }

    #[test]
    fn a_monitor_is_found_by_its_rows_source_and_a_span_set_by_name() {
        install_monitors(vec![&TRACE]);
        install_span_sets(one_set);
        assert_eq!(monitors().len(), 1);
        assert_eq!(monitor("trace:netrx").map(|d| d.name), Some("trace"));
        assert!(monitor("tracer").is_none());
        assert_eq!(span_set("set").map(|s| s.name), Some("set".into()));
        assert!(span_set("other").is_none());
    }
}
