//! `isolation`: did CPU isolation hold during the measurement? For the CPUs the kernel
//! declares isolated (`isolcpus=`, sysfs `isolated`, `nohz_full=`) it reports, as seed 000
//! checked by hand:
//!
//! - the timer ticks on each (`LOC` on x86, the `arch_timer` rows on arm64), and per
//!   second: with nohz_full a CPU running one task should see about one a second;
//! - the runtime of other tasks there (threads not of this process, by the CPU each was
//!   on at the end: a task that came and went between the snapshots is not seen);
//! - where the RCU callback-offload threads (`rcuop/N`, `rcuos/N`, `rcuog/N`) ran;
//! - `held`: 1 when no other task ran there for more than 1 ms or 0.5% of the window, no
//!   offload thread ran there, and no nohz_full CPU ticked more than 10 times a second.
//!
//! Rows: per isolated CPU `timer_ticks`, `ticks_per_s`, `other_tasks_ms` and
//! `task:{comm}` (ms) for the others that ran there; `rcu:{comm}` on the CPU the thread
//! last ran on (ms it ran in the window); the total `held`. On a machine without
//! isolated CPUs the monitor is unavailable, with the boot parameters to set.

use perflab_core::{Descriptor, KeyMatch, Kind, Need, Needs, ReportHints, RowHints, Wording};
use std::collections::{BTreeMap, HashMap};

use perflab_core::{
    monotonic_ns, MeasureCtx, Monitor, MonitorError, TelemetryRow, Unavailable, Unit,
};
use perflab_sys::format_cpu_list;
use perflab_sys::interrupts::Interrupts;
use perflab_sys::isolation::{rcu_offload, tasks, Isolation, TaskSample};

const NAME: &str = "isolation";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "whether CPU isolation held on the isolated CPUs: timer ticks, other tasks' and \
           RCU offload threads' runtime there, and a verdict (held)",
    params: &[],
    needs: Needs::all(&[Need::Isolation]),
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Exact("timer_ticks"), "timer ticks"),
            Wording::new(KeyMatch::Exact("ticks_per_s"), "timer ticks per second"),
            Wording::new(KeyMatch::Exact("other_tasks_ms"), "other tasks' runtime"),
            Wording::new(KeyMatch::Prefix("task:"), "{tail} runtime"),
            Wording::new(KeyMatch::Prefix("rcu:"), "{tail} runtime"),
            Wording::new(KeyMatch::Any, "isolation {key}"),
        ],
        // `held` is the monitor's verdict, not activity.
        bookkeeping: &[KeyMatch::Exact("held")],
        ..RowHints::PLAIN
    }),
};

#[derive(Debug)]
struct Snap {
    ticks: BTreeMap<u32, u64>,
    tasks: HashMap<i32, TaskSample>,
    at_ns: u64,
}

#[derive(Debug, Default)]
pub struct IsolationMonitor {
    cpus: Vec<u32>,
    /// Isolated CPUs whose tick the kernel can stop (nohz_full in effect).
    nohz: Vec<u32>,
    before: Option<Snap>,
    notes: Vec<String>,
}

/// Timer rows: x86/POWER `LOC`, arm/arm64 `arch_timer` (physical and virtual).
fn is_timer(name: &str, desc: &str) -> bool {
    name == "LOC" || desc.ends_with("arch_timer")
}

fn timer_ticks(irq: &Interrupts, cpus: &[u32]) -> BTreeMap<u32, u64> {
    cpus.iter()
        .map(|&c| {
            let n = irq
                .rows
                .iter()
                .filter(|r| is_timer(&r.name, &r.desc))
                .filter_map(|r| irq.count(r, c))
                .fold(0u64, u64::saturating_add);
            (c, n)
        })
        .collect()
}

impl IsolationMonitor {
    fn snap(&self, ctx: &MeasureCtx) -> Result<Snap, MonitorError> {
        let irq = perflab_sys::interrupts::read(&ctx.sys)
            .map_err(|e| MonitorError::Failed(format!("isolation: /proc/interrupts: {e}")))?;
        Ok(Snap {
            ticks: timer_ticks(&irq, &self.cpus),
            tasks: tasks(&ctx.sys).into_iter().map(|t| (t.tid, t)).collect(),
            at_ns: monotonic_ns(),
        })
    }
}

/// The two snapshots around the measurement.
struct Window<'a> {
    before: &'a Snap,
    after: &'a Snap,
    window_ns: u64,
    /// This process, whose threads are the measurement.
    own: Option<i32>,
}

impl Window<'_> {
    /// How long `t` ran between the snapshots.
    fn ran(&self, t: &TaskSample) -> u64 {
        let then = self.before.tasks.get(&t.tid).map_or(0, |b| b.runtime_ns);
        t.runtime_ns.saturating_sub(then)
    }
}

fn row(key: String, label: &str, cpu: Option<u32>, v: f64, unit: Unit) -> TelemetryRow {
    TelemetryRow::new(NAME, key, label, cpu, v, unit)
}

/// Runtime of other tasks on isolated CPU `c`, the top five by name; more than 1 ms or
/// 0.5% of the window is a problem.
fn other_task_rows(w: &Window, c: u32, rows: &mut Vec<TelemetryRow>, problems: &mut Vec<String>) {
    let limit_ns = (w.window_ns / 200).max(1_000_000);
    let mut others: Vec<(&str, u64)> = w
        .after
        .tasks
        .values()
        .filter(|t| t.cpu == c && Some(t.tgid) != w.own && rcu_offload(&t.comm).is_none())
        .map(|t| (t.comm.as_str(), w.ran(t)))
        .filter(|&(_, ns)| ns > 0)
        .collect();
    others.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total: u64 = others.iter().map(|&(_, ns)| ns).sum();
    rows.push(row(
        "other_tasks_ms".into(),
        "runtime of other tasks on the isolated CPU",
        Some(c),
        total as f64 / 1e6,
        Unit::Milliseconds,
    ));
    for &(comm, ns) in others.iter().take(5) {
        rows.push(row(
            format!("task:{comm}"),
            "another task's runtime here",
            Some(c),
            ns as f64 / 1e6,
            Unit::Milliseconds,
        ));
    }
    if total > limit_ns {
        let names: Vec<String> = others
            .iter()
            .take(3)
            .map(|&(n, ns)| format!("{n} {:.1} ms", ns as f64 / 1e6))
            .collect();
        problems.push(format!("other tasks ran on CPU {c} ({})", names.join(", ")));
    }
}

impl IsolationMonitor {
    /// Timer ticks on CPU `c` and their rate; over 10/s on a nohz_full CPU is a problem.
    fn tick_rows(
        &self,
        w: &Window,
        c: u32,
        rows: &mut Vec<TelemetryRow>,
        problems: &mut Vec<String>,
    ) {
        let ticks = w
            .after
            .ticks
            .get(&c)
            .copied()
            .unwrap_or(0)
            .saturating_sub(w.before.ticks.get(&c).copied().unwrap_or(0));
        rows.push(row(
            "timer_ticks".into(),
            "timer interrupts (LOC / arch_timer)",
            Some(c),
            ticks as f64,
            Unit::Count,
        ));
        let rate = ticks as f64 / (w.window_ns as f64 / 1e9);
        rows.push(row(
            "ticks_per_s".into(),
            "timer interrupts per second",
            Some(c),
            rate,
            Unit::PerSecond,
        ));
        if self.nohz.contains(&c) && rate > 10.0 {
            problems.push(format!(
                "CPU {c} took {rate:.0} timer ticks/s although nohz_full"
            ));
        }
    }

    /// RCU offload threads serving or running on an isolated CPU; one that ran on an
    /// isolated CPU is a problem.
    fn rcu_rows(&self, w: &Window, rows: &mut Vec<TelemetryRow>, problems: &mut Vec<String>) {
        let mut rcu: Vec<&TaskSample> = w
            .after
            .tasks
            .values()
            .filter(|t| rcu_offload(&t.comm).is_some())
            .collect();
        rcu.sort_by(|a, b| a.comm.cmp(&b.comm));
        for t in rcu {
            let ns = w.ran(t);
            let serves = rcu_offload(&t.comm).is_some_and(|c| self.cpus.contains(&c));
            let on_isolated = self.cpus.contains(&t.cpu);
            if !serves && !on_isolated {
                continue;
            }
            rows.push(row(
                format!("rcu:{}", t.comm),
                "RCU offload thread: the CPU it last ran on, ms it ran",
                Some(t.cpu),
                ns as f64 / 1e6,
                Unit::Milliseconds,
            ));
            if on_isolated && ns > 0 {
                problems.push(format!(
                    "RCU thread {} ran on isolated CPU {}",
                    t.comm, t.cpu
                ));
            }
        }
    }

    /// The `held` row, and a note saying whether isolation held and if not, why.
    fn verdict(&mut self, problems: &[String]) -> TelemetryRow {
        let held = problems.is_empty();
        let cpus = format_cpu_list(&self.cpus);
        let note = if held {
            format!("isolation held on CPUs {cpus}")
        } else {
            format!(
                "isolation did not hold on CPUs {cpus}: {}",
                problems.join("; ")
            )
        };
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
        row(
            "held".into(),
            "1: isolation held on every isolated CPU",
            None,
            f64::from(u8::from(held)),
            Unit::Count,
        )
    }
}

impl Monitor for IsolationMonitor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError> {
        let iso = Isolation::read(&ctx.sys)
            .map_err(|e| MonitorError::Failed(format!("isolation: {e}")))?;
        let mut cpus = iso.isolated_cpus();
        let nohz_cmdline = iso.nohz_full.clone().unwrap_or_default();
        cpus.extend(nohz_cmdline.iter().copied());
        cpus.sort_unstable();
        cpus.dedup();
        if cpus.is_empty() {
            return Err(MonitorError::Unavailable(
                Unavailable::new("no isolated CPUs (isolcpus= and nohz_full= are not set)")
                    .with_hint("boot with isolcpus=<cpus> nohz_full=<cpus> rcu_nocbs=<cpus>"),
            ));
        }
        // The tick stops only where the kernel runs nohz_full (its sysfs list exists
        // with CONFIG_NO_HZ_FULL only).
        self.nohz = iso.sysfs_nohz_full.clone().unwrap_or_default();
        self.cpus = cpus;
        self.before = Some(self.snap(ctx)?);
        Ok(())
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let Some(before) = self.before.take() else {
            return Ok(Vec::new());
        };
        let after = self.snap(ctx)?;
        let w = Window {
            // This process's threads are the measurement, not "other tasks" (only
            // knowable on the live machine).
            own: ctx.sys.is_host().then(|| std::process::id() as i32),
            window_ns: after.at_ns.saturating_sub(before.at_ns).max(1),
            before: &before,
            after: &after,
        };
        let mut rows = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        for &c in &self.cpus {
            self.tick_rows(&w, c, &mut rows, &mut problems);
            other_task_rows(&w, c, &mut rows, &mut problems);
        }
        self.rcu_rows(&w, &mut rows, &mut problems);
        rows.push(self.verdict(&problems));
        Ok(rows)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perflab_core::SysRoot;
    use std::path::Path;

    fn tree(name: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        perflab_testkit::copy_tree(&perflab_testkit::fixture(name), dir.path());
        dir
    }

    fn bump(root: &Path, rel: &str, from: &str, to: &str) {
        let p = root.join(rel);
        let t = std::fs::read_to_string(&p).unwrap();
        assert!(t.contains(from), "{rel}: {from}");
        std::fs::write(&p, t.replacen(from, to, 1)).unwrap();
    }

    fn value(rows: &[TelemetryRow], key: &str, cpu: Option<u32>) -> Option<f64> {
        rows.iter()
            .find(|r| r.key == key && r.cpu == cpu)
            .map(|r| r.value)
    }

    #[test]
    fn seed_board_ticks_and_a_kworker_break_isolation() {
        let dir = tree("isolation-seed");
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
        let mut m = IsolationMonitor::default();
        m.start(&ctx).unwrap();
        assert_eq!(m.cpus, vec![7]);
        // 250 more arch_timer ticks on CPU 7; kworker/7:1 runs 30 ms there.
        bump(
            dir.path(),
            "proc/interrupts",
            "1356        285",
            "1356        535",
        );
        bump(
            dir.path(),
            "proc/77/task/77/schedstat",
            "120000000",
            "150000000",
        );
        let rows = m.finish(&ctx).unwrap();
        assert_eq!(value(&rows, "timer_ticks", Some(7)), Some(250.0));
        assert_eq!(value(&rows, "other_tasks_ms", Some(7)), Some(30.0));
        assert_eq!(value(&rows, "task:kworker/7:1", Some(7)), Some(30.0));
        // The offload threads of CPU 7 ran on CPU 0, as in the seed.
        assert_eq!(value(&rows, "rcu:rcuos/7", Some(0)), Some(0.0));
        assert_eq!(value(&rows, "rcu:rcuob/7", Some(0)), Some(0.0));
        assert_eq!(value(&rows, "held", None), Some(0.0));
        let note = &m.notes()[0];
        assert!(
            note.starts_with(
                "isolation did not hold on CPUs 7: other tasks ran on CPU 7 \
                              (kworker/7:1 30.0 ms)"
            ),
            "{note}"
        );
        // No nohz_full in effect (kernel without NO_HZ_FULL): ticks are not a failure.
        assert!(!note.contains("ticks/s"), "{note}");
    }

    #[test]
    fn a_quiet_window_holds_and_nohz_ticks_are_judged() {
        let dir = tree("isolation-full");
        let ctx = MeasureCtx::new(SysRoot::at(dir.path()), Vec::new());
        let mut m = IsolationMonitor::default();
        m.start(&ctx).unwrap();
        assert_eq!((m.cpus.clone(), m.nohz.clone()), (vec![6, 7], vec![6, 7]));
        let rows = m.finish(&ctx).unwrap();
        assert_eq!(value(&rows, "held", None), Some(1.0));
        assert_eq!(m.notes(), vec!["isolation held on CPUs 6-7"]);

        m.start(&ctx).unwrap();
        bump(
            dir.path(),
            "proc/interrupts",
            "1356        285",
            "9356        285",
        );
        let rows = m.finish(&ctx).unwrap();
        assert_eq!(value(&rows, "timer_ticks", Some(6)), Some(8000.0));
        assert_eq!(value(&rows, "held", None), Some(0.0));
        assert!(m.notes()[1].contains("CPU 6 took"), "{:?}", m.notes());
        assert!(
            m.notes()[1].contains("although nohz_full"),
            "{:?}",
            m.notes()
        );
    }

    #[test]
    fn machines_without_isolation_say_how_to_get_it() {
        let ctx = MeasureCtx::new(
            SysRoot::at(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/kvm-2vcpu"),
            ),
            Vec::new(),
        );
        match IsolationMonitor::default().start(&ctx) {
            Err(MonitorError::Unavailable(u)) => {
                assert!(u.reason.contains("no isolated CPUs"));
                assert!(u.hint.unwrap().contains("nohz_full="));
            }
            other => panic!("{other:?}"),
        }
    }
}
