//! `interrupts`: per-CPU deltas of every /proc/interrupts row.

use perflab_core::{
    Descriptor, KeyMatch, Kind, Needs, PerCpuFigure, PerCpuLayout, PerCpuTable, ReportHints,
    RowHints, Wording,
};
use std::collections::HashMap;

use perflab_core::{MeasureCtx, MonitorError, TelemetryRow, Unit};
use perflab_sys::interrupts::{self, Interrupts, IrqRow};

use crate::counter::{delta, push_per_cpu, read_error};
use crate::snapshot::{Snapshot, SnapshotMonitor};

pub type InterruptsMonitor = SnapshotMonitor<Interrupts>;

pub static DESCRIPTOR: Descriptor = Descriptor {
    kind: Kind::Monitor,
    name: "interrupts",
    help: "per-CPU deltas of every /proc/interrupts row, and their totals",
    params: &[],
    needs: Needs::NONE,
    report: ReportHints::Rows(RowHints {
        wording: &[
            // Numbered IRQs: the device is the last word of /proc/interrupts' description.
            Wording::with_label(KeyMatch::Digits, "IRQ {key} ({device})"),
            Wording::new(KeyMatch::Digits, "IRQ {key}"),
            Wording::new(KeyMatch::Any, "{key} interrupts"),
        ],
        per_cpu_table: Some(PerCpuTable {
            title: "IRQ Information",
            layout: PerCpuLayout::Counts {
                total: "Total IRQs",
            },
        }),
        figure: Some(PerCpuFigure {
            what: "Interrupts",
            y_label: "interrupts per measurement",
            keys: KeyMatch::Any,
            scale: 1.0,
        }),
        ..RowHints::PLAIN
    }),
};

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

impl Snapshot for Interrupts {
    const NAME: &'static str = "interrupts";

    fn read(ctx: &MeasureCtx) -> Result<Self, MonitorError> {
        interrupts::read(&ctx.sys)
            .map_err(|e| read_error(e, "/proc/interrupts", "mount procfs on /proc"))
    }

    fn deltas(ctx: &MeasureCtx, before: &Self, after: &Self) -> Vec<TelemetryRow> {
        let old: HashMap<RowKey, &IrqRow> = keyed(before).into_iter().collect();
        let mut rows = Vec::new();
        for (key, a) in keyed(after) {
            let b = old.get(&key).copied();
            let row = |cpu, value: u64| {
                TelemetryRow::new(Self::NAME, &a.name, &a.desc, cpu, value as f64, Unit::Count)
            };
            if !a.per_cpu {
                // A machine-wide total (x86 ERR/MIS) has no per-CPU share to report.
                let then = b.map(IrqRow::total).unwrap_or(0);
                rows.push(row(None, delta(then, a.total())));
                continue;
            }
            let then = |cpu| b.and_then(|b| before.count(b, cpu));
            let now = |cpu| after.count(a, cpu);
            push_per_cpu(&mut rows, &ctx.cpus, &after.cpus, (then, now), row);
        }
        rows
    }
}
