//! `vmstat`: how much memory-management work the measurement caused, from the event
//! counters of /proc/vmstat (page faults, transparent huge page allocations and
//! fallbacks, compaction, page migration, direct reclaim, swap). The kernel keeps these
//! per node, not per CPU, so the rows are machine totals.
//!
//! Only event counters are reported: gauges such as `nr_free_pages` go up and down, and
//! their difference over a measurement says nothing about the work done.

use std::collections::BTreeMap;
use std::io::BufRead;

use perflab_core::{
    Descriptor, KeyMatch, Kind, MeasureCtx, MonitorError, Needs, ReportHints, RowHints,
    TelemetryRow, Unit, Wording,
};
use perflab_sys::lines::LossyLines;

use crate::counter::{delta, read_error};
use crate::snapshot::{Snapshot, SnapshotMonitor};

const NAME: &str = "vmstat";
const PATH: &str = "proc/vmstat";

/// The events reported, where the kernel has them (a counter a config leaves out, such as
/// the THP ones without CONFIG_TRANSPARENT_HUGEPAGE, is skipped).
const EVENTS: &[&str] = &[
    "pgfault",
    "pgmajfault",
    "thp_fault_alloc",
    "thp_fault_fallback",
    "thp_collapse_alloc",
    "thp_split_page",
    "compact_stall",
    "compact_fail",
    "compact_success",
    "pgmigrate_success",
    "pgmigrate_fail",
    "numa_hint_faults",
    "numa_pages_migrated",
    "allocstall_normal",
    "allocstall_movable",
    "pgscan_direct",
    "pgsteal_direct",
    "pswpin",
    "pswpout",
];

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "memory-management events of /proc/vmstat during the measurement (page faults, \
           THP allocations and fallbacks, compaction, migration, direct reclaim, swap), \
           machine totals",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Prefix("thp_"), "THP {tail} events"),
            Wording::new(KeyMatch::Any, "{key} events"),
        ],
        // Machine-wide counters: "what changed" looks at them whatever CPUs a point uses.
        cpu_free: true,
        ..RowHints::PLAIN
    }),
};

pub type VmstatMonitor = SnapshotMonitor<Vmstat>;

/// The counters of one read of /proc/vmstat, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vmstat(BTreeMap<String, u64>);

impl Vmstat {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.get(name).copied()
    }
}

/// Parses /proc/vmstat: `name value` per line. A line that is not one (another
/// kernel's format, a damaged capture) is an error naming its number; it never panics.
pub fn parse(reader: impl BufRead) -> Result<Vmstat, String> {
    let mut lines = LossyLines::new(reader);
    let mut out = BTreeMap::new();
    while let Some((n, line)) = lines.next_line().map_err(|e| e.to_string())? {
        let mut words = line.split_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(format!(
                "line {n}: expected `name value`, got {:?}",
                line.trim()
            ));
        };
        // Counters are unsigned; a few gauges can be negative on some kernels
        // (nr_*_per_cpu drift). Those are not events: skip rather than refuse the file.
        match value.parse::<u64>() {
            Ok(v) => {
                out.insert(name.to_string(), v);
            }
            Err(_) if value.parse::<i64>().is_ok() => {}
            Err(_) => return Err(format!("line {n}: {name} = {value:?} is not a number")),
        }
    }
    if out.is_empty() {
        return Err("no counters in it".into());
    }
    Ok(Vmstat(out))
}

impl Snapshot for Vmstat {
    const NAME: &'static str = NAME;

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        let reader = ctx
            .sys
            .open(PATH)
            .map_err(|e| read_error(e, "/proc/vmstat", "mount procfs on /proc"))?;
        parse(reader)
            .map_err(|e| MonitorError::Failed(format!("{}: {e}", ctx.sys.path(PATH).display())))
    }

    fn deltas(_ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        EVENTS
            .iter()
            .filter_map(|&key| {
                let now = after.get(key)?;
                let d = delta(before.get(key).unwrap_or(0), now);
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
    use proptest::prelude::*;

    const BEFORE: &str = "nr_free_pages 123456\npgfault 1000\npgmajfault 3\n\
                          thp_fault_alloc 10\nthp_fault_fallback 2\ncompact_stall 0\n\
                          nr_zone_write_pending -2\n";
    const AFTER: &str = "nr_free_pages 100000\npgfault 1750\npgmajfault 3\n\
                         thp_fault_alloc 14\nthp_fault_fallback 5\ncompact_stall 1\n\
                         nr_zone_write_pending 0\n";

    #[test]
    fn parses_counters_and_skips_negative_gauges() {
        let v = parse(BEFORE.as_bytes()).unwrap();
        assert_eq!(v.get("pgfault"), Some(1000));
        assert_eq!(v.get("nr_zone_write_pending"), None);
        let e = parse("pgfault 1\nbogus line here\n".as_bytes()).unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = parse("pgfault x\n".as_bytes()).unwrap_err();
        assert!(e.contains("pgfault") && e.contains("not a number"), "{e}");
        assert!(parse("".as_bytes()).is_err());
    }

    /// Start and finish against a captured tree: the rows are the events' deltas, machine
    /// totals only, gauges and absent counters left out.
    #[test]
    fn reports_event_deltas_from_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let file = dir.path().join(PATH);
        std::fs::write(&file, BEFORE).unwrap();
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), vec![0, 1]);
        let mut m = VmstatMonitor::default();
        m.start(&ctx).unwrap();
        std::fs::write(&file, AFTER).unwrap();
        let rows = m.finish(&ctx).unwrap();
        let got: Vec<(&str, f64)> = rows.iter().map(|r| (r.key.as_str(), r.value)).collect();
        assert_eq!(
            got,
            [
                ("pgfault", 750.0),
                ("pgmajfault", 0.0),
                ("thp_fault_alloc", 4.0),
                ("thp_fault_fallback", 3.0),
                ("compact_stall", 1.0),
            ]
        );
        assert!(rows.iter().all(|r| r.cpu.is_none() && r.source == NAME));
    }

    #[test]
    fn a_tree_without_vmstat_is_unavailable_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
        let e = VmstatMonitor::default().start(&ctx).unwrap_err();
        assert!(matches!(e, MonitorError::Unavailable(_)), "{e:?}");
    }

    #[test]
    fn rows_are_worded_from_the_descriptor() {
        let hints = DESCRIPTOR.rows();
        let word = |key| perflab_core::descriptor::word_row(hints, NAME, key, "");
        assert_eq!(word("thp_fault_fallback"), "THP fault_fallback events");
        assert_eq!(word("pgmajfault"), "pgmajfault events");
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_panicking(text in ".{0,400}") {
            let _ = parse(text.as_bytes());
        }
    }
}
