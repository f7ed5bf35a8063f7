//! `interrupts`: per-CPU deltas of every /proc/interrupts row.

use std::collections::HashMap;

use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unit};
use perflab_sys::interrupts::{self, Interrupts, IrqRow};

use crate::counter::{delta, not_started, read_error};

const NAME: &str = "interrupts";

#[derive(Debug, Default)]
pub struct InterruptsMonitor {
    before: Option<Interrupts>,
}

fn read(ctx: &MeasureCtx) -> Result<Interrupts, MonitorError> {
    interrupts::read(&ctx.sys)
        .map_err(|e| read_error(e, "/proc/interrupts", "mount procfs on /proc"))
}

/// (name, text, occurrence): names alone repeat (POWER's two `LOC` rows).
type RowKey = (String, String, usize);

fn keyed(t: &Interrupts) -> Vec<(RowKey, &IrqRow)> {
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    t.rows
        .iter()
        .map(|r| {
            let n = seen.entry((&r.name, &r.desc)).or_default();
            let key = (r.name.clone(), r.desc.clone(), *n);
            *n += 1;
            (key, r)
        })
        .collect()
}

/// Per-CPU deltas of one row as (cpu, delta). A row or CPU column absent at start counts
/// from 0.
fn row_deltas(
    before: &Interrupts,
    b: Option<&IrqRow>,
    after: &Interrupts,
    a: &IrqRow,
) -> Vec<(u32, u64)> {
    after
        .cpus
        .iter()
        .filter_map(|&cpu| {
            let now = after.count(a, cpu)?;
            let then = b.and_then(|b| before.count(b, cpu)).unwrap_or(0);
            Some((cpu, delta(then, now)))
        })
        .collect()
}

impl Monitor for InterruptsMonitor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn start(&mut self, ctx: &MeasureCtx) -> Result<(), MonitorError> {
        self.before = None;
        self.before = Some(read(ctx)?);
        Ok(())
    }

    fn finish(&mut self, ctx: &MeasureCtx) -> Result<Vec<TelemetryRow>, MonitorError> {
        let before = self.before.take().ok_or_else(|| not_started(NAME))?;
        let after = read(ctx)?;
        let old: HashMap<RowKey, &IrqRow> = keyed(&before).into_iter().collect();
        let mut rows = Vec::new();
        for (key, a) in keyed(&after) {
            let b = old.get(&key).copied();
            let row = |cpu, value: u64| {
                TelemetryRow::new(NAME, &a.name, &a.desc, cpu, value as f64, Unit::Count)
            };
            if !a.per_cpu {
                // A machine-wide total (x86 ERR/MIS) has no per-CPU share to report.
                let then = b.map(IrqRow::total).unwrap_or(0);
                rows.push(row(None, delta(then, a.total())));
                continue;
            }
            let per_cpu = row_deltas(&before, b, &after, a);
            for &cpu in &ctx.cpus {
                if let Some(&(_, d)) = per_cpu.iter().find(|(c, _)| *c == cpu) {
                    rows.push(row(Some(cpu), d));
                }
            }
            let total = per_cpu.iter().fold(0u64, |s, (_, d)| s.saturating_add(*d));
            rows.push(row(None, total));
        }
        Ok(rows)
    }
}
