//! `disturbance`: how much of the measurement's CPUs went to work that was not the
//! study's, and how crowded the run queue was. Every measurement of a run carries it (the
//! runner adds it to any monitor list): a result taken while another program shared its
//! CPUs is not a result of the variant (issue 32: the same exec A/B read `better −59.8 %`
//! under a neighbour's load and `WORSE +437.7 %` four minutes later).
//!
//! - the CPUs' busy time (`user + nice + system` of /proc/stat for each CPU of the
//!   measurement, every CPU when it has none of its own) less the CPU time of perflab's
//!   own process tree ([`perflab_sys::task_cpu`]), plus `steal` (a hypervisor running
//!   another guest): `other_work_ms`, and as a share of the CPUs' time (`other_work:pct`);
//! - interrupt and softirq time is left out: a network study's own packets are served
//!   there, and the interrupts and softirqs monitors show it;
//! - run-queue pressure: the share of the measurement in which some task waited for a CPU
//!   (`cpu_pressure:pct`, from /proc/pressure/cpu, machine-wide) where the kernel has PSI,
//!   and the runnable tasks at either end (`procs_running`, the larger).
//!
//! /proc/stat counts in ticks (USER_HZ), so `granularity_ms` (two ticks per CPU and two
//! for the study's own time) is what the figure may be off by; the study's time spent on
//! other CPUs is subtracted too, so the share is a lower bound. A measurement is
//! **disturbed** when the share, less that granularity, is above [`DISTURBED_PCT`]
//! ([`judge`]; docs/METHODOLOGY.md, "A disturbed machine").

use std::time::Instant;

use perflab_core::{
    Descriptor, KeyMatch, Kind, MeasureCtx, MonitorError, Needs, ReportHints, RowHints,
    TelemetryRow, Unit, Wording,
};
use perflab_sys::procstat::{self, CpuTimes, ProcStat};
use perflab_sys::{task_cpu, SysRoot};

use crate::counter::read_error;
use crate::pressure::parse_pressure;
use crate::snapshot::{Snapshot, SnapshotMonitor};

pub const NAME: &str = "disturbance";

/// Other work above this share of the measurement's CPU time (after the accounting's
/// granularity) makes it disturbed, unless the run sets another (`--disturbed-above`). A
/// CPU-bound neighbour sharing a CPU takes about half of it; one present for a fifth of the
/// measurement, a tenth. Below it is the background that interleaving spreads over both
/// sides (housekeeping threads, under 1 % of a CPU on a quiet machine) and the ticks
/// /proc/stat counts in.
pub const DISTURBED_PCT: f64 = perflab_core::spec::DISTURBED_ABOVE_PCT;

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "CPU time on the measurement's CPUs that went to work not the study's (busy time \
           less perflab's own process tree, plus steal), and run-queue pressure; always on: \
           a measurement above 10% is marked disturbed",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(
                KeyMatch::Exact("other_work:pct"),
                "other work's share of the CPUs",
            ),
            Wording::new(KeyMatch::Exact("other_work_ms"), "other work on the CPUs"),
            Wording::new(KeyMatch::Exact("study_ms"), "the study's own CPU time"),
            Wording::new(KeyMatch::Exact("steal_ms"), "steal time"),
            Wording::new(KeyMatch::Exact("cpu_pressure:pct"), "CPU pressure (some)"),
            Wording::new(KeyMatch::Exact("procs_running"), "runnable tasks"),
        ],
        bookkeeping: &[
            KeyMatch::Exact("capacity_ms"),
            KeyMatch::Exact("granularity_ms"),
        ],
        ..RowHints::PLAIN
    }),
};

pub type DisturbanceMonitor = SnapshotMonitor<Reading>;

/// One read of the sources, and when it was taken.
#[derive(Clone, Debug)]
pub struct Reading {
    at: Instant,
    stat: ProcStat,
    /// CPU time of perflab's process tree so far, ns.
    own_ns: u64,
    /// PSI `some` total of cpu, µs (`None`: no PSI).
    psi_some_us: Option<u64>,
}

impl Reading {
    pub fn take(sys: &SysRoot) -> Result<Self, MonitorError> {
        let own_ns = task_cpu::tree_cpu_ns(sys, crate::cpu_time::user_hz());
        let stat = procstat::read(sys)
            .map_err(|e| read_error(e, "/proc/stat", "mount procfs on /proc"))?;
        let psi_some_us = sys
            .open("proc/pressure/cpu")
            .ok()
            .and_then(|r| parse_pressure(r).ok())
            .and_then(|p| p.some_us);
        Ok(Self {
            at: Instant::now(),
            stat,
            own_ns,
            psi_some_us,
        })
    }
}

/// What one interval's readings say.
#[derive(Clone, Debug, PartialEq)]
pub struct Disturbance {
    /// CPUs looked at (the measurement's, or every CPU).
    pub cpus: Vec<u32>,
    /// The CPUs' time over the interval: wall time × CPUs, ms.
    pub capacity_ms: f64,
    pub other_work_ms: f64,
    pub study_ms: f64,
    pub steal_ms: f64,
    /// What the tick-based figures may be off by, ms.
    pub granularity_ms: f64,
    pub cpu_pressure_pct: Option<f64>,
    pub procs_running: Option<u64>,
}

fn busy(t: &CpuTimes) -> u64 {
    t.user + t.nice + t.system
}

impl Disturbance {
    /// Between two readings, on `cpus` (every CPU both readings have when empty).
    pub fn between(cpus: &[u32], before: &Reading, after: &Reading, hz: u64) -> Self {
        let cpus: Vec<u32> = if cpus.is_empty() {
            before.stat.cpus.iter().map(|(c, _)| *c).collect()
        } else {
            cpus.to_vec()
        };
        let tick_ms = 1000.0 / hz.max(1) as f64;
        let (mut busy_ticks, mut steal_ticks, mut seen) = (0u64, 0u64, 0usize);
        for &cpu in &cpus {
            // A CPU offline at either end has no interval to count.
            if let (Some(b), Some(a)) = (before.stat.cpu(cpu), after.stat.cpu(cpu)) {
                busy_ticks += busy(a).saturating_sub(busy(b));
                steal_ticks += a.steal.saturating_sub(b.steal);
                seen += 1;
            }
        }
        let wall_ms = after.at.saturating_duration_since(before.at).as_secs_f64() * 1e3;
        let study_ms = after.own_ns.saturating_sub(before.own_ns) as f64 / 1e6;
        let steal_ms = steal_ticks as f64 * tick_ms;
        let other = (busy_ticks as f64 * tick_ms - study_ms).max(0.0) + steal_ms;
        let cpu_pressure_pct = match (before.psi_some_us, after.psi_some_us) {
            (Some(b), Some(a)) if wall_ms > 0.0 => {
                Some((a.saturating_sub(b) as f64 / 1e3 / wall_ms * 100.0).min(100.0))
            }
            _ => None,
        };
        Self {
            cpus,
            capacity_ms: wall_ms * seen as f64,
            other_work_ms: other,
            study_ms,
            steal_ms,
            granularity_ms: tick_ms * (2 * seen + 2) as f64,
            cpu_pressure_pct,
            procs_running: before.stat.procs_running.max(after.stat.procs_running),
        }
    }

    /// Other work as a share of the CPUs' time, %.
    pub fn share_pct(&self) -> f64 {
        share(self.other_work_ms, self.capacity_ms)
    }

    /// The share less what the ticks may be off by: the figure held to the threshold.
    pub fn sure_share_pct(&self) -> f64 {
        share(
            (self.other_work_ms - self.granularity_ms).max(0.0),
            self.capacity_ms,
        )
    }

    pub fn rows(&self) -> Vec<TelemetryRow> {
        let row = |key: &str, value, unit| TelemetryRow::new(NAME, key, "", None, value, unit);
        let mut rows = vec![
            row("other_work:pct", self.share_pct(), Unit::Percent),
            row("other_work_ms", self.other_work_ms, Unit::Milliseconds),
            row("study_ms", self.study_ms, Unit::Milliseconds),
            row("steal_ms", self.steal_ms, Unit::Milliseconds),
            row("capacity_ms", self.capacity_ms, Unit::Milliseconds),
            row("granularity_ms", self.granularity_ms, Unit::Milliseconds),
        ];
        if let Some(p) = self.cpu_pressure_pct {
            rows.push(row("cpu_pressure:pct", p, Unit::Percent));
        }
        if let Some(n) = self.procs_running {
            rows.push(row("procs_running", n as f64, Unit::Count));
        }
        rows
    }

    /// Back from a measurement's rows (`None`: it carries no disturbance rows).
    pub fn from_rows(cpus: &[u32], rows: &[TelemetryRow]) -> Option<Self> {
        let get = |key: &str| {
            rows.iter()
                .find(|r| r.source == NAME && r.key == key && r.cpu.is_none())
                .map(|r| r.value)
        };
        Some(Self {
            cpus: cpus.to_vec(),
            capacity_ms: get("capacity_ms")?,
            other_work_ms: get("other_work_ms")?,
            study_ms: get("study_ms").unwrap_or(0.0),
            steal_ms: get("steal_ms").unwrap_or(0.0),
            granularity_ms: get("granularity_ms").unwrap_or(0.0),
            cpu_pressure_pct: get("cpu_pressure:pct"),
            procs_running: get("procs_running").map(|v| v as u64),
        })
    }

    /// Why the interval is disturbed, or `None` when other work stayed at or below
    /// `above_pct` of the CPUs (after the ticks' granularity).
    pub fn judge(&self, above_pct: f64) -> Option<String> {
        if self.sure_share_pct() <= above_pct {
            return None;
        }
        let cpus = if self.cpus.is_empty() {
            "every CPU".to_string()
        } else {
            format!("CPU {}", perflab_sys::format_cpu_list(&self.cpus))
        };
        let steal = if self.steal_ms > 0.0 {
            format!(", steal {:.0} ms", self.steal_ms)
        } else {
            String::new()
        };
        let pressure = self
            .cpu_pressure_pct
            .map(|p| format!("; tasks waited for a CPU {p:.0}% of the time"))
            .unwrap_or_default();
        Some(format!(
            "other work took {:.0}% of {cpus} ({:.0} of {:.0} ms{steal}; above {above_pct:.0}%){pressure}",
            self.share_pct(),
            self.other_work_ms,
            self.capacity_ms,
        ))
    }
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        (100.0 * part / whole).min(100.0)
    } else {
        0.0
    }
}

/// Why a measurement on `cpus` with these rows is disturbed, other work above `above_pct`
/// of them (`None`: it is not, or it carries no disturbance rows).
pub fn judge(cpus: &[u32], rows: &[TelemetryRow], above_pct: f64) -> Option<String> {
    Disturbance::from_rows(cpus, rows)?.judge(above_pct)
}

impl Snapshot for Reading {
    const NAME: &'static str = NAME;

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        Reading::take(&ctx.sys)
    }

    fn deltas(ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        Disturbance::between(&ctx.cpus, before, after, crate::cpu_time::user_hz()).rows()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stat(cpus: &[(u32, u64, u64, u64)]) -> ProcStat {
        // (cpu, user, system, steal) in ticks.
        ProcStat {
            cpus: cpus
                .iter()
                .map(|&(c, user, system, steal)| {
                    let t = CpuTimes {
                        user,
                        system,
                        steal,
                        ..CpuTimes::default()
                    };
                    (c, t)
                })
                .collect(),
            procs_running: Some(2),
            ..ProcStat::default()
        }
    }

    fn reading(at: Instant, s: ProcStat, own_ms: u64, psi_ms: Option<u64>) -> Reading {
        Reading {
            at,
            stat: s,
            own_ns: own_ms * 1_000_000,
            psi_some_us: psi_ms.map(|m| m * 1000),
        }
    }

    /// One second on CPU 0: 100 ticks busy, of which the study's own 500 ms: other work
    /// took half of the CPU, and the measurement is disturbed, saying how much of which.
    #[test]
    fn a_neighbour_taking_half_the_cpu_disturbs() {
        let t0 = Instant::now();
        let b = reading(t0, stat(&[(0, 1000, 0, 0), (1, 0, 0, 0)]), 10_000, Some(0));
        let a = reading(
            t0 + Duration::from_secs(1),
            stat(&[(0, 1080, 20, 0), (1, 100, 0, 0)]),
            10_500,
            Some(500),
        );
        let d = Disturbance::between(&[0], &b, &a, 100);
        assert_eq!(d.capacity_ms, 1000.0);
        assert_eq!(d.other_work_ms, 500.0);
        assert_eq!(d.granularity_ms, 40.0);
        assert_eq!(d.cpu_pressure_pct, Some(50.0));
        let why = d.judge(DISTURBED_PCT).unwrap();
        assert_eq!(
            why,
            "other work took 50% of CPU 0 (500 of 1000 ms; above 10%); tasks waited for a \
             CPU 50% of the time"
        );
        // The same rows read back give the same judgement.
        assert_eq!(
            judge(&[0], &d.rows(), DISTURBED_PCT).as_deref(),
            Some(why.as_str())
        );
        // A run that allows more reads the same interval as undisturbed.
        assert_eq!(d.judge(60.0), None);
        // Unpinned, both CPUs count: 2000 ms busy of 2000, 500 of it the study's.
        let all = Disturbance::between(&[], &b, &a, 100);
        assert_eq!((all.cpus.clone(), all.other_work_ms), (vec![0, 1], 1500.0));
        assert!(all.judge(DISTURBED_PCT).unwrap().contains("CPU 0-1"));
    }

    /// The study alone on its CPU, with the ticks off by one: not disturbed; steal counts
    /// as other work.
    #[test]
    fn the_study_alone_is_not_disturbed_and_steal_is_other_work() {
        let t0 = Instant::now();
        let b = reading(t0, stat(&[(0, 0, 0, 0)]), 0, None);
        let a = reading(
            t0 + Duration::from_millis(500),
            stat(&[(0, 49, 2, 0)]),
            480,
            None,
        );
        let d = Disturbance::between(&[0], &b, &a, 100);
        assert_eq!(d.other_work_ms, 30.0);
        assert_eq!(d.judge(DISTURBED_PCT), None, "{d:?}");
        assert!(!d.rows().iter().any(|r| r.key == "cpu_pressure:pct"));
        let stolen = reading(
            t0 + Duration::from_millis(500),
            stat(&[(0, 30, 0, 20)]),
            300,
            None,
        );
        let d = Disturbance::between(&[0], &b, &stolen, 100);
        assert_eq!((d.steal_ms, d.other_work_ms), (200.0, 200.0));
        assert!(
            d.judge(DISTURBED_PCT).unwrap().contains("steal 200 ms"),
            "{d:?}"
        );
    }

    /// Short intervals: a few ticks of other work are within the granularity, and an
    /// interval of no length is never disturbed.
    #[test]
    fn ticks_within_the_granularity_do_not_disturb() {
        let t0 = Instant::now();
        let b = reading(t0, stat(&[(0, 0, 0, 0)]), 0, None);
        let a = reading(
            t0 + Duration::from_millis(60),
            stat(&[(0, 4, 0, 0)]),
            5,
            None,
        );
        let d = Disturbance::between(&[0], &b, &a, 100);
        assert!(
            d.share_pct() > 50.0 && d.judge(DISTURBED_PCT).is_none(),
            "{d:?}"
        );
        let same = Disturbance::between(&[0], &b, &b, 100);
        assert_eq!((same.share_pct(), same.judge(DISTURBED_PCT)), (0.0, None));
        assert_eq!(judge(&[0], &[], DISTURBED_PCT), None);
    }

    /// This machine's own sources read, and an interval of them gives every row.
    #[test]
    fn the_host_reads() {
        let ctx = MeasureCtx::new(SysRoot::host(), vec![0]);
        let mut m = DisturbanceMonitor::default();
        perflab_core::Monitor::start(&mut m, &ctx).unwrap();
        let rows = perflab_core::Monitor::finish(&mut m, &ctx).unwrap();
        for key in ["other_work:pct", "other_work_ms", "study_ms", "capacity_ms"] {
            assert!(rows.iter().any(|r| r.key == key), "{key} in {rows:?}");
        }
    }

    #[test]
    fn rows_are_worded_from_the_descriptor() {
        let hints = DESCRIPTOR.rows();
        let word = |key| perflab_core::descriptor::word_row(hints, NAME, key, "");
        assert_eq!(word("other_work:pct"), "other work's share of the CPUs");
        assert_eq!(word("cpu_pressure:pct"), "CPU pressure (some)");
    }
}
