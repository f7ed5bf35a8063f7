//! `softirqs`: per-CPU deltas of every /proc/softirqs vector.

use perflab_core::{MeasureCtx, Monitor, MonitorError, TelemetryRow, Unit};
use perflab_sys::softirqs::{self, Softirqs};

use crate::counter::{delta, not_started, read_error};

const NAME: &str = "softirqs";

#[derive(Debug, Default)]
pub struct SoftirqsMonitor {
    before: Option<Softirqs>,
}

fn read(ctx: &MeasureCtx) -> Result<Softirqs, MonitorError> {
    softirqs::read(&ctx.sys).map_err(|e| read_error(e, "/proc/softirqs", "mount procfs on /proc"))
}

impl Monitor for SoftirqsMonitor {
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
        let mut rows = Vec::new();
        for a in &after.rows {
            let b = before.row(&a.name);
            let per_cpu: Vec<(u32, u64)> = after
                .cpus
                .iter()
                .filter_map(|&cpu| {
                    let now = after.count(a, cpu)?;
                    let then = b.and_then(|b| before.count(b, cpu)).unwrap_or(0);
                    Some((cpu, delta(then, now)))
                })
                .collect();
            let row = |cpu, value: u64| {
                TelemetryRow::new(NAME, &a.name, "", cpu, value as f64, Unit::Count)
            };
            for &cpu in &ctx.cpus {
                if let Some(&(_, d)) = per_cpu.iter().find(|(c, _)| *c == cpu) {
                    rows.push(row(Some(cpu), d));
                }
            }
            rows.push(row(
                None,
                per_cpu.iter().fold(0u64, |s, (_, d)| s.saturating_add(*d)),
            ));
        }
        Ok(rows)
    }
}
