//! `sched_totals`: how many context switches and new tasks the whole machine had during
//! the measurement, from the `ctxt` and `processes` lines of /proc/stat. The kernel keeps
//! them as machine totals, so the rows are totals: a workload that forks per request, or
//! a neighbour that switches a lot, shows here next to the numbers it may have moved.

use perflab_core::{
    Descriptor, KeyMatch, Kind, MeasureCtx, MonitorError, Needs, ReportHints, RowHints,
    TelemetryRow, Unit, Wording,
};
use perflab_sys::procstat::{parse_proc_stat, ProcStat};

use crate::counter::{delta, read_error};
use crate::snapshot::{Snapshot, SnapshotMonitor};

const NAME: &str = "sched_totals";
const PATH: &str = "proc/stat";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "context switches and new tasks (forks) of the whole machine during the \
           measurement, from /proc/stat's ctxt and processes counters",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Exact("context_switches"), "context switches"),
            Wording::new(KeyMatch::Exact("forks"), "new tasks"),
        ],
        // Machine-wide counters: "what changed" looks at them whatever CPUs a point uses.
        cpu_free: true,
        ..RowHints::PLAIN
    }),
};

pub type SchedTotalsMonitor = SnapshotMonitor<SchedTotals>;

/// The two counters of one read of /proc/stat (`None`: the kernel's file lacks the line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedTotals {
    context_switches: Option<u64>,
    forks: Option<u64>,
}

impl From<ProcStat> for SchedTotals {
    fn from(s: ProcStat) -> Self {
        Self {
            context_switches: s.ctxt,
            forks: s.processes,
        }
    }
}

impl Snapshot for SchedTotals {
    const NAME: &'static str = NAME;

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        let reader = ctx
            .sys
            .open(PATH)
            .map_err(|e| read_error(e, "/proc/stat", "mount procfs on /proc"))?;
        parse_proc_stat(reader)
            .map(SchedTotals::from)
            .map_err(|e| MonitorError::Failed(format!("{}: {e}", ctx.sys.path(PATH).display())))
    }

    fn deltas(_ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        [
            (
                "context_switches",
                before.context_switches,
                after.context_switches,
            ),
            ("forks", before.forks, after.forks),
        ]
        .into_iter()
        .filter_map(|(key, b, a)| {
            let d = delta(b?, a?);
            Some(TelemetryRow::new(
                NAME,
                key,
                "",
                None,
                d as f64,
                Unit::Count,
            ))
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::{Monitor, SysRoot};

    const STAT: &str = "cpu  1 2 3 4 5 6 7 0 0 0\ncpu0 1 2 3 4 5 6 7 0 0 0\n";

    fn tree(ctxt: u64, processes: u64) -> String {
        format!("{STAT}intr 0\nctxt {ctxt}\nbtime 1\nprocesses {processes}\n")
    }

    /// Start and finish on a writable tree: the rows are the two counters' deltas, machine
    /// totals only.
    #[test]
    fn reports_switches_and_forks_as_machine_totals() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let file = dir.path().join(PATH);
        std::fs::write(&file, tree(1000, 50)).unwrap();
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), vec![0]);
        let mut m = SchedTotalsMonitor::default();
        m.start(&ctx).unwrap();
        std::fs::write(&file, tree(1750, 53)).unwrap();
        let rows = m.finish(&ctx).unwrap();
        let got: Vec<(&str, f64)> = rows.iter().map(|r| (r.key.as_str(), r.value)).collect();
        assert_eq!(got, [("context_switches", 750.0), ("forks", 3.0)]);
        assert!(rows.iter().all(|r| r.cpu.is_none() && r.source == NAME));
    }

    /// A captured machine's /proc/stat reads, and nothing moves between two reads of it.
    #[test]
    fn a_captured_tree_reads_with_no_change() {
        let ctx = MeasureCtx::new(SysRoot::at(perflab_testkit::fixture("kvm-2vcpu")), vec![]);
        let mut m = SchedTotalsMonitor::default();
        m.start(&ctx).unwrap();
        let rows = m.finish(&ctx).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows.iter().all(|r| r.value == 0.0), "{rows:?}");
    }

    #[test]
    fn a_tree_without_proc_stat_is_unavailable_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
        let e = SchedTotalsMonitor::default().start(&ctx).unwrap_err();
        assert!(matches!(e, MonitorError::Unavailable(_)), "{e:?}");
    }

    #[test]
    fn rows_are_worded_from_the_descriptor() {
        let hints = DESCRIPTOR.rows();
        let word = |key| perflab_core::descriptor::word_row(hints, NAME, key, "");
        assert_eq!(word("context_switches"), "context switches");
        assert_eq!(word("forks"), "new tasks");
    }
}
