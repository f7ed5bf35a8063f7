//! `irqaffinity=devices:CPULIST`: every device interrupt steered at once, so that a study
//! (irq-fill) can keep the device interrupts off the CPU it measures on any machine without
//! naming its devices. The kernel refuses to move a *managed* interrupt (a multi-queue
//! driver's, which it spreads over the CPUs itself) with EPERM, and some interrupt chips
//! refuse with EIO; those stay where they are and are named, the others are steered, each
//! journaled before its write.

use std::io::ErrorKind;

use perflab_sys::SysRoot;

use crate::error::KnobError;
use crate::files::{write_files, FileGuard};
use crate::journal::Journal;
use crate::knob::KnobGuard;

/// An IRQ's affinity file, relative to the root (shared with `irq_affinity`, and with
/// the probe `perflab doctor`'s irq affinity line renders).
pub(crate) use perflab_sys::probe::irq_affinity::affinity_path;

/// The guards of the interrupts moved, restored newest first.
pub struct DevicesGuard {
    guards: Vec<FileGuard>,
    /// IRQs left where the kernel keeps them, for the variant's facts.
    pub kept: Vec<u32>,
}

impl KnobGuard for DevicesGuard {
    fn restore(mut self: Box<Self>) -> Result<(), KnobError> {
        let mut failures = Vec::new();
        while let Some(g) = self.guards.pop() {
            if let Err(e) = Box::new(g).restore() {
                failures.push(e.to_string());
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(KnobError::Restore { failures })
        }
    }

    fn facts(&self) -> Vec<(String, String)> {
        if self.kept.is_empty() {
            return Vec::new();
        }
        let kept: Vec<String> = self.kept.iter().map(u32::to_string).collect();
        vec![("irqaffinity.kept".into(), kept.join(","))]
    }
}

/// Writes `list` to each IRQ's affinity, one journaled write each; returns the guard and
/// the IRQs moved. Fails (restoring those moved) when none could be, or on any error other
/// than the kernel refusing that one interrupt.
pub fn steer_each(
    sys: &SysRoot,
    journal: &Journal,
    knob: &str,
    irqs: &[u32],
    list: &[u8],
) -> Result<(DevicesGuard, Vec<u32>), KnobError> {
    let mut guard = DevicesGuard {
        guards: Vec::new(),
        kept: Vec::new(),
    };
    let mut moved = Vec::new();
    for &irq in irqs {
        match write_files(sys, journal, knob, &[(affinity_path(irq), list.to_vec())]) {
            Ok(g) => {
                guard.guards.push(g);
                moved.push(irq);
            }
            Err(e) if refused_by_kernel(&e) => guard.kept.push(irq),
            Err(e) => {
                Box::new(guard).restore()?;
                return Err(e);
            }
        }
    }
    if moved.is_empty() {
        return Err(KnobError::Command {
            cmd: knob.to_string(),
            why: "the kernel refused to move every device interrupt (all managed?)".into(),
        });
    }
    Ok((guard, moved))
}

/// EPERM: a managed interrupt; EIO: a chip that cannot set affinity.
fn refused_by_kernel(e: &KnobError) -> bool {
    let refused = |source: &std::io::Error| {
        source.kind() == ErrorKind::PermissionDenied || source.raw_os_error() == Some(libc::EIO)
    };
    match e {
        KnobError::Io { source, .. } => refused(source),
        KnobError::Sys(perflab_sys::SysError::Io { source, .. }) => refused(source),
        _ => false,
    }
}

/// Interrupts the moved IRQs delivered outside the asked CPUs, before a measurement.
///
/// For `devices` the proof is delivery, not the effective mask: x86 without interrupt
/// remapping moves an interrupt when it next fires, so an interrupt that stays quiet keeps
/// reading its old effective CPU forever while costing the measured CPU nothing, and the
/// first delivery after the change may still land on the old CPU.
pub struct Delivered {
    irqs: Vec<u32>,
    cpus: Vec<u32>,
    before: Vec<(u32, u64)>,
}

/// Deliveries of `irq` outside `cpus` so far.
fn outside(table: &perflab_sys::interrupts::Interrupts, irq: u32, cpus: &[u32]) -> u64 {
    let name = irq.to_string();
    table
        .rows
        .iter()
        .filter(|r| r.name == name && r.per_cpu)
        .flat_map(|r| table.cpus.iter().zip(&r.counts))
        .filter(|(c, _)| !cpus.contains(c))
        .map(|(_, n)| *n)
        .sum()
}

impl Delivered {
    pub fn take(sys: &SysRoot, irqs: &[u32], cpus: &[u32]) -> Option<Self> {
        let table = perflab_sys::interrupts::read(sys).ok()?;
        let before = irqs
            .iter()
            .map(|&i| (i, outside(&table, i, cpus)))
            .collect();
        Some(Self {
            irqs: irqs.to_vec(),
            cpus: cpus.to_vec(),
            before,
        })
    }
}

impl crate::knob::EffectProbe for Delivered {
    fn verify(&self, sys: &SysRoot, _: &perflab_core::WorkloadOutput) -> Result<(), String> {
        let table = perflab_sys::interrupts::read(sys).map_err(|e| e.to_string())?;
        let list = perflab_sys::format_cpu_list(&self.cpus);
        let why: Vec<String> = self
            .irqs
            .iter()
            .zip(&self.before)
            .filter_map(|(&irq, &(_, before))| {
                let n = outside(&table, irq, &self.cpus).saturating_sub(before);
                // One delivery is the deferred move itself.
                (n > 1).then(|| format!("IRQ {irq} was delivered {n} times outside CPU {list}"))
            })
            .collect();
        if why.is_empty() {
            Ok(())
        } else {
            Err(why.join("; "))
        }
    }
}
