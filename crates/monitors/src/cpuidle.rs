//! `cpuidle`: how often and how long each CPU sat in each idle state.

use perflab_core::{
    Descriptor, KeyMatch, Kind, Need, Needs, PerCpuFigure, PerCpuLayout, PerCpuTable, ReportHints,
    RowHints, Wording,
};
use std::collections::BTreeMap;

use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unavailable, Unit};
use perflab_sys::cpuidle::{self, IdleState};
use perflab_sys::Topology;

use crate::counter::not_started;

const NAME: &str = "cpuidle";

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: NAME,
    help: "how often (usage) and how long (time, µs) each CPU sat in each idle state, and \
           whether the state was disabled",
    params: &[],
    needs: Needs::all(&[Need::Cpuidle]),
    report: ReportHints::Rows(RowHints {
        wording: &[
            Wording::new(KeyMatch::Suffix(":time"), "{head} residency"),
            Wording::new(KeyMatch::Suffix(":usage"), "{head} entries"),
            Wording::new(KeyMatch::Split(':'), "{head} {tail}"),
            Wording::new(KeyMatch::Any, "cpuidle {key}"),
        ],
        // A disabled flag is the variant itself, not activity.
        bookkeeping: &[KeyMatch::Suffix(":disabled")],
        per_cpu_table: Some(PerCpuTable {
            title: "Idle State information",
            layout: PerCpuLayout::States,
        }),
        figure: Some(PerCpuFigure {
            what: "Idle residency",
            y_label: "idle residency per measurement (ms)",
            keys: KeyMatch::Suffix(":time"),
            scale: 1e-3,
        }),
        ..RowHints::PLAIN
    }),
};

#[derive(Debug, Default)]
pub struct CpuidleMonitor {
    /// States of every online CPU at start: totals cover the whole machine.
    before: Option<BTreeMap<u32, Vec<IdleState>>>,
}

fn snapshot(ctx: &MeasureCtx, cpus: &[u32]) -> Result<BTreeMap<u32, Vec<IdleState>>, MonitorError> {
    let mut out = BTreeMap::new();
    for &cpu in cpus {
        let states =
            cpuidle::states(&ctx.sys, cpu).map_err(|e| MonitorError::Failed(e.to_string()))?;
        if !states.is_empty() {
            out.insert(cpu, states);
        }
    }
    Ok(out)
}

fn unavailable(reason: String) -> MonitorError {
    MonitorError::Unavailable(Unavailable::new(reason).with_hint(
        "idle-state telemetry needs a cpuidle driver: bare metal (intel_idle, acpi_idle, \
         powernv_idle) or cpuidle-haltpoll in a KVM guest",
    ))
}

impl Monitor for CpuidleMonitor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError> {
        self.before = None;
        let Some(driver) = cpuidle::driver(&ctx.sys) else {
            return Err(unavailable("no cpuidle driver".into()));
        };
        let online = Topology::read(&ctx.sys)
            .map(|t| t.online)
            .map_err(|e| MonitorError::Failed(e.to_string()))?;
        let snap = snapshot(ctx, &online)?;
        if snap.is_empty() {
            return Err(unavailable(format!(
                "cpuidle driver {driver} registered no idle states"
            )));
        }
        self.before = Some(snap);
        Ok(())
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let before = self.before.take().ok_or_else(|| not_started(NAME))?;
        let cpus: Vec<u32> = before.keys().copied().collect();
        let after = snapshot(ctx, &cpus)?;
        let row = |key: String, label: &str, cpu, value: f64, unit| {
            TelemetryRow::new(NAME, key, label, cpu, value, unit)
        };
        let mut rows = Vec::new();
        // Totals keyed by state index, kept in index order with the first CPU's name/desc.
        let mut totals: BTreeMap<u32, (String, String, u64, u64)> = BTreeMap::new();
        for (cpu, now) in &after {
            let Some(then) = before.get(cpu) else {
                continue;
            };
            for a in now {
                // A state is the same only if index and name agree (a driver reload could
                // renumber them).
                let Some(b) = then.iter().find(|b| b.index == a.index && b.name == a.name) else {
                    continue;
                };
                let usage = a.usage.saturating_sub(b.usage);
                let time = a.time_us.saturating_sub(b.time_us);
                let t = totals
                    .entry(a.index)
                    .or_insert_with(|| (a.name.clone(), a.desc.clone(), 0, 0));
                t.2 = t.2.saturating_add(usage);
                t.3 = t.3.saturating_add(time);
                if ctx.cpus.contains(cpu) {
                    let c = Some(*cpu);
                    rows.push(row(
                        format!("{}:usage", a.name),
                        &a.desc,
                        c,
                        usage as f64,
                        Unit::Count,
                    ));
                    rows.push(row(
                        format!("{}:time", a.name),
                        &a.desc,
                        c,
                        time as f64,
                        Unit::Microseconds,
                    ));
                    let disabled = if a.disabled { 1.0 } else { 0.0 };
                    rows.push(row(
                        format!("{}:disabled", a.name),
                        &a.desc,
                        c,
                        disabled,
                        Unit::Count,
                    ));
                }
            }
        }
        for (name, desc, usage, time) in totals.into_values() {
            rows.push(row(
                format!("{name}:usage"),
                &desc,
                None,
                usage as f64,
                Unit::Count,
            ));
            rows.push(row(
                format!("{name}:time"),
                &desc,
                None,
                time as f64,
                Unit::Microseconds,
            ));
        }
        Ok(rows)
    }
}
